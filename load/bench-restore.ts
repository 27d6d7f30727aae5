// npm run bench:restore: the database's recovery time with pgBackRest (docs/operations.md, "Restoring"). A PostgreSQL
// with the ledger's schema and N decisions of history (default 1,000,000, written as bench:ledger's prefill does),
// its WAL archived to a local pgBackRest repository; a full backup, then more decisions in four transactions, a
// target time T read between the second and the third; then the server is stopped at once and the repository
// restored to T into a new data directory and started. Prints the restore's figures: the backup, the files restored,
// the WAL replayed to T and the promotion, and checks that exactly the decisions committed at or before T are back and
// that the fault suite's ledger invariants hold. The programs' start on the restored database is the fault suite's
// `restore` phase's figure (npm run test:faults -- --faults restore).
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { createPgBackRest } from '../services/launcher/tools/pgbackrest.ts';
import { startPostgres } from '../services/launcher/tools/servers.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';
import { createFixtures, EVENT_TYPE } from './lib/fixtures.ts';
import { checkInvariants } from './lib/invariants.ts';
import { prefillEvents } from './lib/prefill.ts';

const HELP = `Usage: npm run bench:restore -- [options]

Options:
  --events N        decisions of history before the full backup           default 1000000
  --after N         decisions written after the backup, in 4 transactions   default 100000
                    (T between the second and the third)
  --games N         games                                                  default 50
  --players N       players per game                                       default 20
  --json FILE       also write the figures as JSON
  --help            this text
`;

const log = (line: string) => process.stderr.write(`[restore ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '1000000' },
      after: { type: 'string', default: '100000' },
      games: { type: 'string', default: '50' },
      players: { type: 'string', default: '20' },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const events = Number(values.events);
  const after = Number(values.after);
  const games = Number(values.games);
  const players = Number(values.players);
  const backups = createPgBackRest({ archiveTimeoutSeconds: 60 });
  const postgres = await startPostgres({ durable: true, settings: backups.serverSettings });
  try {
    await backups.attach(postgres);
    const url = postgres.url;
    await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    await createFixtures(url, { games, players });
    await prefillEvents(url, { events, games, players, eventType: EVENT_TYPE }, log);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const size = async (c: pg.Client) =>
      Number((await c.query<{ n: string }>(`select pg_database_size(current_database())::text as n`)).rows[0]!.n);
    const databaseBytes = await size(client);
    log(`database: ${(databaseBytes / 1e6).toFixed(0)} MB with ${events.toLocaleString('en')} decisions`);

    const full = await backups.backup('full');
    log(`full backup ${full.label}: ${seconds(full.ms)}, ${(full.size / 1e6).toFixed(0)} MB`);
    // pgBackRest keeps a backup's stop time in whole seconds: T must come later than that.
    await new Promise((r) => setTimeout(r, 1_100));

    // More decisions after the backup (WAL to replay), a quarter per transaction; older than the retention's days,
    // so no daily totals change; each game's spending grows with them (the invariants).
    const quarter = Math.ceil(after / 4);
    let target = '';
    let written = 0;
    for (let q = 0; q < 4; q++) {
      const from = events + q * quarter + 1;
      const to = Math.min(events + after, from + quarter - 1);
      await client.query('begin');
      await client.query(
        `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
           occurred_at, status, reason, reward_credits, payload_hash, created_at)
         select ('00000000-0000-4000-a000-' || lpad(to_hex(i), 12, '0'))::uuid, g.id, g.project_id, g.organization_id,
           ('00000000-0000-4000-b000-' || lpad(to_hex(i), 12, '0'))::uuid,
           ('00000000-0000-4000-8000-' || lpad(((i % $3 + 1) * 10000 + (i / $3) % $4 + 1)::text, 12, '0'))::uuid,
           k.id, $5, now() - interval '30 days' - make_interval(secs => i), 'accepted', null, 1, sha256(int8send(i)),
           now() - interval '30 days' - make_interval(secs => i)
         from generate_series($1::bigint, $2::bigint) i
         join ledger.games g on g.id = ('00000000-0000-4000-9000-' || lpad((i % $3 + 1)::text, 12, '0'))::uuid
         join ledger.keys k on k.game_id = g.id and k.kind = 'secret'`,
        [from, to, games, players, EVENT_TYPE],
      );
      await client.query(
        `update ledger.games g set spent_credits = g.spent_credits + h.n
           from (select ('00000000-0000-4000-9000-' || lpad((i % $3 + 1)::text, 12, '0'))::uuid as game_id,
                        count(*) as n
                   from generate_series($1::bigint, $2::bigint) i group by 1) h
          where h.game_id = g.id`,
        [from, to, games],
      );
      await client.query('commit');
      if (q === 1) {
        written = to - events;
        target = (await client.query<{ t: string }>(`select clock_timestamp()::text as t`)).rows[0]!.t;
        log(`T = ${target}: ${written.toLocaleString('en')} decisions written after the backup`);
      }
    }
    // In a real loss the newest segment may not be archived yet (the RPO); here T's segment must be.
    await client.query(`select pg_switch_wal()`);
    const { rows: walRows } = await client.query<{ wal: string }>(
      `select pg_walfile_name(pg_current_wal_lsn()) as wal`,
    );
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { rows } = await client.query<{ wal: string | null }>(
        `select last_archived_wal as wal from pg_stat_archiver`,
      );
      if ((rows[0]!.wal?.slice(0, 24) ?? '') >= walRows[0]!.wal.slice(0, 24)) break;
      if (Date.now() > deadline) throw new Error('the WAL was not archived within 2 min');
      await new Promise((r) => setTimeout(r, 200));
    }
    // The bench's fixtures record no funding, which one invariant reports: compare with the source, not with zero.
    const source = new Map((await checkInvariants(client)).map((i) => [i.name, i.violations]));
    await client.end();

    const lostAt = Date.now();
    postgres.stopImmediately();
    const restored = await backups.restoreTo(target, postgres.port);
    const backAt = Date.now();
    log(
      `restored to T: files ${seconds(restored.restoreMs)}, WAL replayed and promoted ${seconds(restored.recoveryMs)}, ` +
        `${seconds(backAt - lostAt)} from the loss to writes accepted`,
    );
    const check = new pg.Client({ connectionString: restored.url });
    await check.connect();
    const count = Number(
      (await check.query<{ n: string }>(`select count(*)::text as n from ledger.events`)).rows[0]!.n,
    );
    const invariants = await checkInvariants(check);
    await check.end();
    const broken = invariants.filter((i) => i.violations > (source.get(i.name) ?? 0));
    const expected = events + written;
    const figures = {
      events,
      databaseMB: Math.round(databaseBytes / 1e6),
      fullBackupS: full.ms / 1000,
      backupMB: Math.round(full.size / 1e6),
      decisionsAfterBackup: after,
      restoreS: restored.restoreMs / 1000,
      recoveryS: restored.recoveryMs / 1000,
      lossToWritesS: (backAt - lostAt) / 1000,
      decisionsRestored: count,
      decisionsExpected: expected,
      invariants: invariants.map((i) => ({ name: i.name, violations: i.violations })),
    };
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    if (values.json) (await import('node:fs')).writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
    if (count !== expected) throw new Error(`${count} decisions restored, ${expected} expected`);
    if (broken.length) throw new Error(`invariants broken: ${broken.map((i) => i.name).join(', ')}`);
    log(`${count.toLocaleString('en')} decisions back (exactly those committed at or before T); invariants hold`);
  } finally {
    backups.remove();
    await postgres.stop();
  }
}

await main();
