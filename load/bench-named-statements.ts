// node load/bench-named-statements.ts: what DATABASE_NAMED_STATEMENTS saves, in PostgreSQL alone. One connection
// calls the ledger's batched statement (RECORD_EVENTS_SQL, ledger.record_events) with K fresh events, alternately as
// a named prepared statement (parsed and planned once per connection) and unnamed (parsed and planned per call, what
// a transaction pooler needs), ROUNDS x CALLS times each, and prints per call the wall time and the backend's CPU
// (/proc/<pid>/stat of the server process) for each K. Starts its own cluster (fsync off) and stops it.
// docs/deploy.md, "PostgreSQL: pooler and failover". With --lock-timeout it compares instead, both unnamed, the
// statement as the ledger sends it (RECORD_EVENTS_WITHIN_SQL: its lock_timeout set by an argument) with the plain one.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { startPostgres } from '../services/launcher/tools/servers.ts';
import {
  RECORD_EVENTS_SQL,
  RECORD_EVENTS_WITHIN_SQL,
  type RecordEventParams,
  recordEventsValues,
} from '../services/ledger/src/events/repository.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';
import { createFixtures, EVENT_TYPE, keyHash, playerId } from './lib/fixtures.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1,4,16' },
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '1000' },
    'lock-timeout': { type: 'boolean' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(
    'Usage: node load/bench-named-statements.ts [--sizes 1,4,16] [--rounds 5] [--calls 1000] [--lock-timeout]\n' +
      '  events per call (comma-separated), alternating rounds of each kind, calls per round;\n' +
      '  --lock-timeout: the statement with its lock_timeout argument against the plain one, both unnamed\n',
  );
  process.exit(0);
}
const sizes = values.sizes.split(',').map(Number);
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const lockTimeout = values['lock-timeout'] === true;
if (![...sizes, rounds, calls].every((n) => Number.isInteger(n) && n >= 1 && n <= 100_000)) {
  process.stderr.write('--sizes, --rounds and --calls take whole numbers from 1 to 100000\n');
  process.exit(2);
}

/** User plus system CPU of a process, in microseconds (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] as string).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] as number;
const sha256 = (text: string) => createHash('sha256').update(text).digest();

const cluster = await startPostgres();
try {
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('create database bench_named');
  await admin.end();
  const url = new URL(cluster.url);
  url.pathname = '/bench_named';
  await migrate(url.toString(), [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
  // The benches' fixtures: 8 games with budgets and caps that no run exhausts, so every call decides and writes.
  const games = 8;
  await createFixtures(url.toString(), { games, players: 1 });
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const events = (size: number): RecordEventParams[] =>
    Array.from({ length: size }, (_, i) => {
      const game = (i % games) + 1;
      const eventId = randomUUID();
      return {
        keyHash: keyHash(game),
        eventId,
        playerId: playerId(game, 1),
        eventType: EVENT_TYPE,
        occurredAtMs: BigInt(Date.now()),
        payloadHash: sha256(eventId),
        receivedAt: null,
        rateLimitPerMinute: 1_000_000,
      };
    });
  const round = async (named: boolean, size: number, count: number) => {
    const cpuBefore = cpuMicros(pid);
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
      const args = recordEventsValues(events(size));
      if (lockTimeout) {
        // "named" stands for the ledger's statement here: the plain one's arguments and a 2 s lock_timeout.
        await client.query(
          named
            ? { text: RECORD_EVENTS_WITHIN_SQL, values: [...args, '2000'] }
            : { text: RECORD_EVENTS_SQL, values: args },
        );
        continue;
      }
      await client.query(
        named
          ? { name: `bench_${size}`, text: RECORD_EVENTS_SQL, values: args }
          : { text: RECORD_EVENTS_SQL, values: args },
      );
    }
    return {
      wallUs: Number(process.hrtime.bigint() - start) / 1000 / count,
      cpuUs: (cpuMicros(pid) - cpuBefore) / count,
    };
  };
  process.stdout.write(
    `load average before: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}\n`,
  );
  process.stdout.write(
    lockTimeout
      ? 'events/call   with lock_timeout: wall µs, backend CPU µs   plain: wall µs, backend CPU µs   (medians, unnamed)\n'
      : 'events/call   named: wall µs, backend CPU µs   unnamed: wall µs, backend CPU µs   (medians)\n',
  );
  for (const size of sizes) {
    await round(true, size, 100);
    await round(false, size, 100);
    const named: Array<{ wallUs: number; cpuUs: number }> = [];
    const unnamed: typeof named = [];
    for (let r = 0; r < rounds; r++) {
      named.push(await round(true, size, calls));
      unnamed.push(await round(false, size, calls));
    }
    const line = (list: typeof named) =>
      `${median(list.map((x) => x.wallUs)).toFixed(0)}, ${median(list.map((x) => x.cpuUs)).toFixed(0)}`;
    process.stdout.write(`${String(size).padStart(11)}   ${line(named).padEnd(33)}  ${line(unnamed)}\n`);
  }
  process.stdout.write(
    `load average after: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}\n`,
  );
  await client.end();
} finally {
  await cluster.stop();
}
