// npm run bench:migration: what the migrations cost the event path on a large ledger (docs/operations.md, "Migration
// rules"). A PostgreSQL with the ledger's schema and N decisions of history (default 5,000,000, written as
// bench:ledger's prefill does); then the migrations a database of an older release has not applied yet are made
// pending again (0009's index on ledger.events, the largest build, and this release's own: 0012's validation, 0014's
// index, 0016's indexes, 0017's trigger) and applied by the real migrator while events are decided at a fixed rate,
// each a call of ledger.record_events on a connection of its own. Prints each call's time before and while the
// migrations run (p50, p99, max), the calls that took more than a second, and the migrator's time. Target: no event
// waits more than 1 s on a migration's lock. A figure for docs and the commit, not a CI step.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { startPostgres } from '../services/launcher/tools/servers.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';
import { createFixtures, EVENT_TYPE, recordEventsCallSql } from './lib/fixtures.ts';
import { prefillEvents } from './lib/prefill.ts';

const HELP = `Usage: npm run bench:migration -- [options]

Options:
  --events N        decisions of history                                   default 5000000
  --rate N          events decided per second while measuring              default 100
  --connections N   connections deciding them                              default 8
  --before-ms N     events before the migrations start                     default 5000
  --games N         games                                                  default 50
  --players N       players per game                                       default 20
  --help            this text
`;

/** The migrations made pending again, and what undoes each (an older release's database has none of them). */
const PENDING_AGAIN: Array<{ name: string; undo: string[] }> = [
  { name: '0009-events-by-player', undo: ['drop index if exists ledger.events_by_player'] },
  { name: '0012-members-joined-validate', undo: [] },
  { name: '0014-games-organization-index', undo: [] },
  {
    name: '0016-webhook-claim-indexes',
    undo: [
      'drop index if exists ledger.webhook_messages_in_flight',
      'drop index if exists ledger.webhook_messages_tests_due',
    ],
  },
  {
    name: '0017-webhook-endpoints-per-game',
    undo: [
      'drop trigger if exists webhook_endpoints_per_game on ledger.webhook_endpoints',
      'drop function if exists ledger.webhook_endpoints_per_game()',
    ],
  },
];

const log = (line: string) => process.stderr.write(`[migration ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function summary(label: string, ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1).padStart(8);
  return `${label.padEnd(22)} ${String(ms.length).padStart(7)} ${f(percentile(sorted, 50))} ${f(percentile(sorted, 99))} ${f(sorted.at(-1) ?? 0)} ${String(ms.filter((m) => m > 1000).length).padStart(6)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '5000000' },
      rate: { type: 'string', default: '100' },
      connections: { type: 'string', default: '8' },
      'before-ms': { type: 'string', default: '5000' },
      games: { type: 'string', default: '50' },
      players: { type: 'string', default: '20' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const events = Number(values.events);
  const rate = Number(values.rate);
  const connections = Number(values.connections);
  const beforeMs = Number(values['before-ms']);
  const games = Number(values.games);
  const players = Number(values.players);
  const postgres = await startPostgres({ durable: true });
  const silent = pino({ level: 'silent' });
  try {
    const url = postgres.url;
    await migrate(url, [identityMigrations, ledgerMigrations], silent);
    await createFixtures(url, { games, players });
    await prefillEvents(url, { events, games, players, eventType: EVENT_TYPE }, log);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('analyze');
    for (const { name, undo } of PENDING_AGAIN) {
      for (const statement of undo) await admin.query(statement);
      await admin.query('delete from ledger.mikro_orm_migrations where name = $1', [name]);
    }
    log(`pending again: ${PENDING_AGAIN.map((m) => m.name).join(', ')}`);

    // Events at a fixed rate: every 1000/rate ms one call of one event of a random game's random player, on the next
    // free connection (a call that finds none waiting is counted from when it was due: its wait is the figure).
    const clients = await Promise.all(
      Array.from({ length: connections }, async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        return c;
      }),
    );
    const free = [...clients];
    const waiting: Array<(c: pg.Client) => void> = [];
    const take = () =>
      new Promise<pg.Client>((resolve) => {
        const c = free.pop();
        if (c) resolve(c);
        else waiting.push(resolve);
      });
    const give = (c: pg.Client) => {
      const next = waiting.shift();
      if (next) next(c);
      else free.push(c);
    };
    const calls: Array<{ dueAt: number; ms: number }> = [];
    let running = true;
    const inFlight = new Set<Promise<void>>();
    const poster = (async () => {
      const started = performance.now();
      for (let i = 0; running; i++) {
        const dueAt = started + (i * 1000) / rate;
        const pause = dueAt - performance.now();
        if (pause > 0) await new Promise((r) => setTimeout(r, pause));
        const g = 1 + Math.floor(Math.random() * games);
        const p = 1 + Math.floor(Math.random() * players);
        const sql = recordEventsCallSql(1, {
          keys: `array[sha256(convert_to('bench-key-' || ${g}, 'UTF8'))]`,
          player: `'00000000-0000-4000-8000-' || lpad((${g} * 10000 + ${p})::text, 12, '0')`,
        });
        const call = (async () => {
          const c = await take();
          try {
            await c.query(sql);
          } finally {
            give(c);
          }
          calls.push({ dueAt, ms: performance.now() - dueAt });
        })();
        inFlight.add(call);
        void call.finally(() => inFlight.delete(call));
      }
    })();

    await new Promise((r) => setTimeout(r, beforeMs));
    const migrationStarted = performance.now();
    await migrate(url, [identityMigrations, ledgerMigrations], silent);
    const migrationEnded = performance.now();
    await new Promise((r) => setTimeout(r, 2000));
    running = false;
    await poster;
    await Promise.all([...inFlight]);
    for (const c of clients) await c.end();
    const load = (await import('node:os')).loadavg();
    const before = calls.filter((c) => c.dueAt < migrationStarted).map((c) => c.ms);
    const during = calls.filter((c) => c.dueAt >= migrationStarted && c.dueAt <= migrationEnded).map((c) => c.ms);
    const pending = await admin.query<{ n: number }>(
      `select count(*)::int as n from ledger.mikro_orm_migrations where name = any($1)`,
      [PENDING_AGAIN.map((m) => m.name)],
    );
    const valid = await admin.query<{ v: boolean }>(
      `select indisvalid as v from pg_index where indexrelid = 'ledger.events_by_player'::regclass`,
    );
    await admin.end();
    const lines = [
      `bench:migration: ${events.toLocaleString('en')} decisions; events at ${rate}/s on ${connections} connections`,
      `migrations applied again: ${pending.rows[0]?.n} of ${PENDING_AGAIN.length} in ${((migrationEnded - migrationStarted) / 1000).toFixed(1)} s; events_by_player valid: ${valid.rows[0]?.v}`,
      `${'calls (ms from due)'.padEnd(22)} ${'count'.padStart(7)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'> 1 s'.padStart(6)}`,
      summary('before the migrations', before),
      summary('while they ran', during),
      `load average: ${load.map((n) => n.toFixed(2)).join(' ')}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (during.some((ms) => ms > 1000)) process.exitCode = 1;
  } finally {
    await postgres.stop();
  }
}

await main();
