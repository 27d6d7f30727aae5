// npm run bench:sql: what a decision costs in PostgreSQL alone, by batch size. pgbench runs, one after the other on
// the same database, the single-event statement (lib/single-event.ts: ledger.record_event, one event per
// transaction: the baseline of every bench) and ledger.record_events with K events per call and transaction (of one
// game, or spread over --games-per-call G games), for each K of --sizes; plus `noop`, a call of a do-nothing function with the arguments of a batch of
// one (what the script's argument building, the round trip and the commit cost by themselves). No NATS, no ledger:
// the figures say what the SQL does per event, which is what batching changes. With --statements, it also prints
// pg_stat_statements' figures of the statements inside record_events at one batch size (to see where a batch's
// time goes; docs/benchmarks.md "What a batch costs in PostgreSQL").
//
// It starts its own PostgreSQL cluster (fsync off by default: this bench measures CPU, not the disk; --durable for
// PostgreSQL's defaults), migrates, creates the bench:ledger fixtures (50 games of 20 linked players) and drops
// everything at the end.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { startPostgres } from '../services/launcher/tools/servers.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';
import { createFixtures, createWebhookEndpoints, recordEventsCallSql, SINGLE_EVENT_SCRIPT } from './lib/fixtures.ts';
import { findPgbench } from './lib/pgbench.ts';

const HELP = `Usage: npm run bench:sql -- [options]

  --sizes LIST     batch sizes of ledger.record_events, comma-separated      default 1,2,4,8,16,64
  --seconds S      seconds per statement                                     default 8
  --clients N      pgbench clients                                           default 1
  --games-per-call G  the K events of a call belong to G games (a key each), as the ledger sends the
                   ready keys' batches together                              default 1
  --durable        PostgreSQL's durable defaults (default: fsync, synchronous_commit, full_page_writes off)
  --webhook-endpoints  one webhook endpoint per game subscribed to every event type: each fresh decision also writes
                   its outbox message (docs/benchmarks.md, "The webhook outbox on the event path")
  --statements K   also print pg_stat_statements for batches of K events (restarts the cluster with the extension)
  --compare FILE   another body of ledger.record_events (a file like services/ledger/src/sql/record_events.sql,
                   e.g. \`git show HEAD~1:services/ledger/src/sql/record_events.sql > /tmp/old.sql\`): installed as
                   ledger.record_events_compare and run after each size of the current one, same sizes
                   (a body with the earlier signature, one key hash per call, is called with one game per call)
  --help           this text

Prints, per statement: transactions/s, events/s, microseconds per event (clients / events per second: the time of
one event, the machine's CPU included when clients <= CPUs), the ratio to the single-event statement, and the WAL
it wrote (pg_stat_wal: bytes per event, full-page images per call).
`;

const GAMES = 50;
const PLAYERS = 20;

function readOptions() {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string' },
      seconds: { type: 'string' },
      clients: { type: 'string' },
      'games-per-call': { type: 'string' },
      durable: { type: 'boolean' },
      'webhook-endpoints': { type: 'boolean' },
      statements: { type: 'string' },
      compare: { type: 'string' },
      help: { type: 'boolean' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const sizes = (values.sizes ?? '1,2,4,8,16,64').split(',').map(Number);
  const seconds = Number(values.seconds ?? 8);
  const clients = Number(values.clients ?? 1);
  const gamesPerCall = Number(values['games-per-call'] ?? 1);
  const statements = values.statements === undefined ? undefined : Number(values.statements);
  const bad = (n: number, max: number) => !Number.isInteger(n) || n < 1 || n > max;
  if (
    sizes.some((k) => bad(k, 1000)) ||
    bad(seconds, 3600) ||
    bad(clients, 64) ||
    bad(gamesPerCall, GAMES) ||
    (statements && bad(statements, 1000))
  ) {
    process.stderr.write(`invalid options\n\n${HELP}`);
    process.exit(2);
  }
  return {
    sizes,
    seconds,
    clients,
    gamesPerCall,
    durable: values.durable === true,
    webhookEndpoints: values['webhook-endpoints'] === true,
    statements,
    compare: values.compare,
  };
}

/**
 * K new events in one call of `fn` (record_events' arguments): event i (0-based) of game g + (i mod G) (from a random
 * g, wrapping at GAMES), a random player of that game, the game's key hash. `oneKey`: the earlier signature (one key
 * hash for the call, so one game).
 */
const batchScript = (k: number, games: number, fn = 'ledger.record_events', oneKey = false) => {
  const game = `((:g + i % ${games} - 1) % ${GAMES} + 1)`;
  const keys = oneKey
    ? `sha256(convert_to('bench-key-' || :g, 'UTF8'))`
    : `array(select sha256(convert_to('bench-key-' || ${game}, 'UTF8')) from generate_series(0, ${k - 1}) i)`;
  const player = `'00000000-0000-4000-8000-' || lpad((${game} * 10000 + 1 + (random() * ${PLAYERS - 1})::int)::text, 12, '0')`;
  return `\\set g random(1, ${GAMES})\n${recordEventsCallSql(k, { fn, keys, player })}`;
};

const exec = promisify(execFile);

async function tps(url: string, script: string, dir: string, seconds: number, clients: number): Promise<number> {
  const file = join(dir, 'script.sql');
  writeFileSync(file, script);
  const run = ['-n', '-M', 'prepared', '-c', String(clients), '-j', String(clients), '-T', String(seconds)];
  // The single-event script names its games and players as pgbench variables (fixtures.ts).
  const args = [...run, '-D', `games=${GAMES}`, '-D', `players=${PLAYERS}`, '-f', file];
  const { stdout } = await exec(findPgbench(), [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const match = /tps = ([\d.]+)/.exec(stdout);
  if (!match) throw new Error(`pgbench printed no tps:\n${stdout}`);
  return Number(match[1]);
}

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** WAL written so far (pg_stat_wal): bytes and full-page images. */
async function walFigures(url: string): Promise<{ bytes: number; fpi: number }> {
  const { rows } = await query(url, 'select wal_bytes::float8 as bytes, wal_fpi::float8 as fpi from pg_stat_wal');
  return { bytes: Number(rows[0].bytes), fpi: Number(rows[0].fpi) };
}

const options = readOptions();
const postgres = await startPostgres({ durable: options.durable });
const dir = mkdtempSync(join(tmpdir(), 'bench-sql-'));
try {
  await migrate(postgres.url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
  await createFixtures(postgres.url, { games: GAMES, players: PLAYERS });
  if (options.webhookEndpoints) await createWebhookEndpoints(postgres.url);
  await query(
    postgres.url,
    `create function public.bench_noop(bytea[], uuid[], uuid[], text[], bigint[], bytea, timestamptz[], integer, text[], uuid[])
       returns table (x integer) language sql as 'select 1'`,
  );
  let compareOneKey = false;
  if (options.compare) {
    // The same file with the function renamed: its own drop and create, next to the current function.
    const body = readFileSync(options.compare, 'utf8').replaceAll(
      'ledger.record_events(',
      'ledger.record_events_compare(',
    );
    if (!body.includes('create function ledger.record_events_compare(')) {
      throw new Error(`${options.compare} does not create ledger.record_events`);
    }
    compareOneKey = !/create function ledger\.record_events_compare\(\s*p_key_hashes bytea\[\]/.test(body);
    await query(postgres.url, body);
  }
  const load0 = loadavg();
  process.stdout.write(
    `bench:sql: ${options.durable ? 'durable' : 'fsync off'}, ${options.clients} client(s), ${options.seconds} s per statement, ${GAMES} games x ${PLAYERS} players, ${options.gamesPerCall} game(s) per call\n\n`,
  );
  process.stdout.write(
    'statement                 transactions/s   events/s   µs per event   ratio to record_event   WAL B/event   FPI/call\n',
  );
  const runs: Array<[string, string, number]> = [
    ['record_event (single)', SINGLE_EVENT_SCRIPT, 1],
    ['noop (arguments of 1)', batchScript(1, 1, 'public.bench_noop'), 1],
    ...options.sizes.flatMap((k) => [
      [`record_events, ${k}`, batchScript(k, options.gamesPerCall), k] as [string, string, number],
      ...(options.compare
        ? [
            [
              `  --compare, ${k}`,
              compareOneKey
                ? batchScript(k, 1, 'ledger.record_events_compare', true)
                : batchScript(k, options.gamesPerCall, 'ledger.record_events_compare'),
              k,
            ] as [string, string, number],
          ]
        : []),
    ]),
  ];
  let singleUs = 0;
  for (const [name, script, k] of runs) {
    const wal0 = await walFigures(postgres.url);
    const t = await tps(postgres.url, script, dir, options.seconds, options.clients);
    const wal1 = await walFigures(postgres.url);
    const calls = t * options.seconds;
    const us = (1e6 * options.clients) / (t * k);
    if (!singleUs) singleUs = us;
    process.stdout.write(
      `${name.padEnd(24)} ${t.toFixed(0).padStart(15)} ${(t * k).toFixed(0).padStart(10)} ${us.toFixed(0).padStart(14)} ${(us / singleUs).toFixed(2).padStart(23)} ${((wal1.bytes - wal0.bytes) / (calls * k)).toFixed(0).padStart(13)} ${((wal1.fpi - wal0.fpi) / calls).toFixed(2).padStart(10)}\n`,
    );
  }
  if (options.statements) {
    await query(postgres.url, `alter system set shared_preload_libraries = 'pg_stat_statements'`);
    postgres.stopImmediately();
    postgres.start();
    await query(postgres.url, 'create extension pg_stat_statements');
    await query(postgres.url, `alter system set pg_stat_statements.track = 'all'`);
    await query(postgres.url, 'select pg_reload_conf()');
    await query(postgres.url, 'select pg_stat_statements_reset()');
    await tps(postgres.url, batchScript(options.statements, options.gamesPerCall), dir, options.seconds, 1);
    const { rows } = await query(
      postgres.url,
      `select calls, total_exec_time / calls * 1000 as us, rows::float / calls as rows,
              regexp_replace(left(query, 90), '\\s+', ' ', 'g') as query
         from pg_stat_statements where query not like '%pg_stat_statements%'
        order by total_exec_time desc limit 20`,
    );
    process.stdout.write(`\npg_stat_statements, batches of ${options.statements} (µs per call, 1 client):\n`);
    for (const row of rows) {
      process.stdout.write(
        `${String(row.calls).padStart(8)} ${Number(row.us).toFixed(0).padStart(6)} µs ${Number(row.rows).toFixed(1).padStart(5)} rows  ${row.query}\n`,
      );
    }
  }
  const load1 = loadavg();
  process.stdout.write(
    `\nload average (1, 5, 15 min) before: ${load0.map((l) => l.toFixed(2)).join(', ')}; after: ${load1.map((l) => l.toFixed(2)).join(', ')}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  await postgres.stop();
}
