import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import {
  EDGE_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEYS_MAX_DEFAULT,
  EdgeEventBatcher,
} from '../services/ingest/src/routes/event-batcher.ts';
import {
  extraNodeOptions,
  otelEnvironment,
  type Programs,
  startPrograms,
} from '../services/launcher/tools/processes.ts';
import { startNats, startPostgres } from '../services/launcher/tools/servers.ts';
import { EVENT_GROUP_KEYS_MAX_DEFAULT } from '../services/ledger/src/events/batcher.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';
import { WebhookRepository } from '../services/ledger/src/webhooks/repository.ts';
import {
  createFixtures,
  createWebhookEndpoints,
  EVENT_TYPE,
  keyHash,
  playerId,
  RATE_LIMIT,
  SINGLE_EVENT_SCRIPT,
} from './lib/fixtures.ts';
import { runPgbench as runPgbenchScript, type Side } from './lib/pgbench.ts';
import { prefillEvents } from './lib/prefill.ts';
import { cpuSeconds, machineBusySeconds, percentile, rssMiB, sampleBackendCpu, syscalls } from './lib/proc.ts';

const HELP = `Usage: npm run bench:ledger -- [options]

Options (each also read from the environment variable in brackets):
  --games N          games in the project, events spread uniformly over them   [BENCH_GAMES]        default 50
  --players N        linked players per game                                  [BENCH_PLAYERS]      default 20
  --concurrency N    events in flight on the NATS side (its clients)           [BENCH_CONCURRENCY]  default 256
  --pgbench-clients N  pgbench clients (today's statement, one event each)     [BENCH_PGBENCH_CLIENTS] default 16
  --edge-batch N     events per RecordEvents request, as the ingest edge sends  [BENCH_EDGE_BATCH]   default 256
                     them (EdgeEventBatcher); 1: one RecordEvent per event
  --edge-in-flight N RecordEvents requests in flight                           [BENCH_EDGE_IN_FLIGHT] default 8
  --edge-keys N      most keys (games) per RecordEvents request                [BENCH_EDGE_KEYS]    default 8
                     (INGEST_EVENT_KEYS_MAX)
  --batch-max N      the ledger's EVENT_BATCH_MAX (1: no batching in the ledger) [BENCH_BATCH_MAX]    default 256
  --group-keys N     the ledger's EVENT_GROUP_KEYS_MAX (keys per call)          [BENCH_GROUP_KEYS]   default 16
  --durability D     both (durable row, then fsync-off row), durable or off    [BENCH_DURABILITY]   default both
  --half-rate S      seconds at half of the measured NATS peak (open model)    [BENCH_HALF_RATE_S]  default 10
  --rate N           offer N events/s in that phase instead of half the peak    [BENCH_RATE]         default: half
                     (to compare configurations at one offered load)
  --duration S       measured seconds of each side                            [BENCH_DURATION_S]   default 30
  --rounds N         the sides take turns, N rounds of duration/N s (whole)   [BENCH_ROUNDS]       default 3
  --warmup S         unmeasured seconds of each side, both before measuring   [BENCH_WARMUP_S]     default 5
  --pool N           the ledger's PostgreSQL pool (DATABASE_POOL_MAX)         [BENCH_POOL]         default CPUs
                     (docs/deploy.md "Scaling": about the database's CPUs; the database runs here)
  --prefill N        history written in SQL before the run: N accepted events of  [BENCH_PREFILL]      default 0
                     the bench's games (load/lib/prefill.ts), e.g. 5000000
  --webhook-endpoints  one webhook endpoint per game subscribed to every event type [BENCH_WEBHOOK_ENDPOINTS]
                     (the outbox's cost on the event path; the delivery worker is off: WEBHOOK_WORKER=false)
  --json FILE        also write the figures as JSON to FILE
  --cpu-prof DIR     run the ledger with --cpu-prof, profiles written to DIR
  --help             this text

Environment:
  DATABASE_URL   PostgreSQL server to use (a database bench_<random> is created there and dropped afterwards; its
                 settings are used as they are: one row); unset: a throwaway cluster is started with PostgreSQL's
                 durable defaults (fsync, synchronous_commit, full_page_writes on), switched to all three off for
                 the second row (ALTER SYSTEM + reload)
  NATS_URL       nats-server to use; unset: a throwaway nats-server is started
  PGBENCH        pgbench binary (default: pgbench on PATH, then /usr/bin/pgbench)
`;

type Durability = 'durable' | 'off';

interface Options {
  games: number;
  players: number;
  concurrency: number;
  pgbenchClients: number;
  edgeBatch: number;
  edgeInFlight: number;
  edgeKeys: number;
  batchMax: number;
  groupKeys: number;
  durability: 'both' | Durability;
  halfRateS: number;
  rate: number | undefined;
  durationS: number;
  rounds: number;
  warmupS: number;
  pool: number;
  json: string | undefined;
  cpuProfile: string | undefined;
  prefill: number;
  webhookEndpoints: boolean;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      games: { type: 'string' },
      players: { type: 'string' },
      concurrency: { type: 'string' },
      'pgbench-clients': { type: 'string' },
      'edge-batch': { type: 'string' },
      'edge-in-flight': { type: 'string' },
      'edge-keys': { type: 'string' },
      'group-keys': { type: 'string' },
      'batch-max': { type: 'string' },
      durability: { type: 'string' },
      'half-rate': { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      pool: { type: 'string' },
      json: { type: 'string' },
      prefill: { type: 'string' },
      'webhook-endpoints': { type: 'boolean' },
      'cpu-prof': { type: 'string' },
      help: { type: 'boolean' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const int = (flag: string | undefined, env: string, fallback: number, min: number, max: number) => {
    const raw = flag ?? process.env[env];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      process.stderr.write(`${env.replace('BENCH_', '--').toLowerCase()} must be an integer from ${min} to ${max}\n`);
      process.exit(2);
    }
    return n;
  };
  const concurrency = int(values.concurrency, 'BENCH_CONCURRENCY', 256, 1, 4096);
  const durability = values.durability ?? process.env.BENCH_DURABILITY ?? 'both';
  if (!['both', 'durable', 'off'].includes(durability)) {
    process.stderr.write('--durability must be both, durable or off\n');
    process.exit(2);
  }
  return {
    pool: int(values.pool, 'BENCH_POOL', availableParallelism(), 1, 200),
    pgbenchClients: int(values['pgbench-clients'], 'BENCH_PGBENCH_CLIENTS', 16, 1, 256),
    edgeBatch: int(values['edge-batch'], 'BENCH_EDGE_BATCH', 256, 1, 256),
    edgeInFlight: int(values['edge-in-flight'], 'BENCH_EDGE_IN_FLIGHT', EDGE_IN_FLIGHT_MAX_DEFAULT, 1, 256),
    edgeKeys: int(values['edge-keys'], 'BENCH_EDGE_KEYS', EDGE_KEYS_MAX_DEFAULT, 1, 256),
    groupKeys: int(
      values['group-keys'],
      'BENCH_GROUP_KEYS',
      EVENT_GROUP_KEYS_MAX_DEFAULT,
      1,
      EVENT_LIMITS.keysPerCallMax,
    ),
    batchMax: int(values['batch-max'], 'BENCH_BATCH_MAX', 256, 1, 1000),
    durability: durability as Options['durability'],
    halfRateS: int(values['half-rate'], 'BENCH_HALF_RATE_S', 10, 0, 600),
    rate:
      (values.rate ?? process.env.BENCH_RATE) === undefined
        ? undefined
        : int(values.rate, 'BENCH_RATE', 0, 1, 1_000_000),
    games: int(values.games, 'BENCH_GAMES', 50, 1, 10_000),
    players: int(values.players, 'BENCH_PLAYERS', 20, 1, 9_999),
    concurrency,
    durationS: int(values.duration, 'BENCH_DURATION_S', 30, 1, 3600),
    rounds: int(values.rounds, 'BENCH_ROUNDS', 3, 1, 100),
    warmupS: int(values.warmup, 'BENCH_WARMUP_S', 5, 0, 600),
    json: values.json,
    prefill: int(values.prefill, 'BENCH_PREFILL', 0, 0, 50_000_000),
    webhookEndpoints: values['webhook-endpoints'] ?? process.env.BENCH_WEBHOOK_ENDPOINTS === 'true',
    cpuProfile: values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined,
  };
}

/** Sums the rounds of one side: rates over the summed time, percentiles over all latencies. */
function combine(rounds: Side[]): Side {
  const latencies = new Float64Array(rounds.reduce((n, r) => n + r.latenciesMs.length, 0));
  let offset = 0;
  for (const r of rounds) {
    latencies.set(r.latenciesMs, offset);
    offset += r.latenciesMs.length;
  }
  latencies.sort();
  const cpuS: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.cpuS)) cpuS[k] = (cpuS[k] ?? 0) + v;
  const decisions = rounds.reduce((n, r) => n + r.decisions, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const withSyscalls = rounds.filter((r) => r.ledgerSyscalls);
  return {
    cpuS,
    ...(withSyscalls.length
      ? {
          ledgerSyscalls: {
            reads: withSyscalls.reduce((n, r) => n + (r.ledgerSyscalls?.reads ?? 0), 0),
            writes: withSyscalls.reduce((n, r) => n + (r.ledgerSyscalls?.writes ?? 0), 0),
          },
        }
      : {}),
    decisions,
    seconds,
    perSecond: decisions / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    latenciesMs: latencies,
  };
}

interface Probes {
  database: string;
  ledgerPid: number;
  natsPid: number | undefined;
}

interface RateSide extends Side {
  /** RecordEvents requests sent, and their round trips as the driver saw them. */
  requests: number;
  requestP50Ms: number;
  requestP99Ms: number;
  requestMaxMs: number;
  /** The p99 of the events sent in each second (spikes against a steady queue). */
  p99BySecondMs: number[];
}

interface NatsDriver {
  /** Drives for `seconds` with CONCURRENCY events in flight (closed model); figures kept only when `measured`. */
  run(seconds: number, measured: boolean): Promise<Side>;
  /** Offers `perSecond` events per second for `seconds` (open model: arrivals do not wait for answers). */
  runAtRate(perSecond: number, seconds: number): Promise<RateSide>;
  /** Sizes of the RecordEvents requests sent so far (edge batching). */
  edgeBatches: number[];
  close(): Promise<void>;
}

async function natsDriver(natsUrl: string, options: Options, probes: Probes): Promise<NatsDriver> {
  const logger = pino({ level: 'silent' });
  const transport = await NatsTransport.connect({
    url: natsUrl,
    connectionName: 'bench',
    requestTimeoutMs: 10_000,
    logger,
    metrics: createMetrics(),
  });
  const edgeBatches: number[] = [];
  // The driver sends like the ingest edge: concurrent events share RecordEvents requests (edge-batch 1: RecordEvent).
  // The requests' round trips (the edge's wait for a free slot is the rest of an event's latency).
  const requestMs: number[] = [];
  const timedTransport = new Proxy(transport, {
    get(target, prop, receiver) {
      if (prop !== 'call') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<NatsTransport['call']>) => {
        const t0 = performance.now();
        try {
          return await target.call(...args);
        } finally {
          requestMs.push(performance.now() - t0);
        }
      };
    },
  });
  const edge = new EdgeEventBatcher(
    timedTransport,
    { batchMax: options.edgeBatch, inFlightMax: options.edgeInFlight, keysMax: options.edgeKeys },
    { batch: (size) => edgeBatches.push(size), queued: () => undefined },
  );
  let errors = 0;
  const oneEvent = async (): Promise<number | undefined> => {
    const g = 1 + Math.floor(Math.random() * options.games);
    const p = 1 + Math.floor(Math.random() * options.players);
    const t0 = performance.now();
    try {
      await edge.record(
        {
          keyHash: keyHash(g),
          eventId: randomUUID(),
          playerId: playerId(g, p),
          eventType: EVENT_TYPE,
          occurredAtMs: Date.now(),
          payloadHash: randomBytes(32),
        },
        { requestId: 'bench' },
      );
      return performance.now() - t0;
    } catch (error) {
      errors++;
      if (errors === 1) process.stderr.write(`RecordEvent failed: ${(error as Error).message}\n`);
      return undefined;
    }
  };
  const measure = async (drive: (latencies: number[]) => Promise<void>): Promise<Side> => {
    const latencies: number[] = [];
    const errors0 = errors;
    const database = sampleBackendCpu(probes.database);
    const ledger0 = cpuSeconds(probes.ledgerPid);
    const io0 = syscalls(probes.ledgerPid);
    const nats0 = probes.natsPid ? cpuSeconds(probes.natsPid) : 0;
    const driver0 = process.cpuUsage();
    const started = performance.now();
    await drive(latencies);
    const elapsed = (performance.now() - started) / 1000;
    const driver = process.cpuUsage(driver0);
    const cpuS: Record<string, number> = {
      postgres: database.stop(),
      ledger: cpuSeconds(probes.ledgerPid) - ledger0,
      driver: (driver.user + driver.system) / 1e6,
    };
    if (probes.natsPid) cpuS['nats-server'] = cpuSeconds(probes.natsPid) - nats0;
    const io1 = syscalls(probes.ledgerPid);
    const ledgerSyscalls = { reads: io1.reads - io0.reads, writes: io1.writes - io0.writes };
    const sorted = Float64Array.from(latencies).sort();
    return {
      cpuS,
      ledgerSyscalls,
      decisions: latencies.length,
      seconds: elapsed,
      perSecond: latencies.length / elapsed,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      errors: errors - errors0,
      latenciesMs: sorted,
    };
  };
  const run = (seconds: number, measured: boolean) =>
    measure(async (latencies) => {
      const deadline = performance.now() + seconds * 1000;
      const worker = async () => {
        while (performance.now() < deadline) {
          const ms = await oneEvent();
          if (measured && ms !== undefined) latencies.push(ms);
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, worker));
    });
  // Besides the events' latencies, runAtRate reports its requests' round trips (the rest of an event's latency is
  // its wait for a free request slot at the edge) and the p99 of the events sent in each second.
  const runAtRate = async (perSecond: number, seconds: number): Promise<RateSide> => {
    requestMs.length = 0;
    let p99BySecondMs: number[] = [];
    const side = await measure(async (latencies) => {
      const started = performance.now();
      const total = Math.floor(perSecond * seconds);
      const pending: Array<Promise<void>> = [];
      let sent = 0;
      const bySecond: number[][] = Array.from({ length: Math.ceil(seconds) + 1 }, () => []);
      // Every millisecond tick sends the events due by then (arrivals never wait for answers; at most 10,000 open).
      while (sent < total) {
        const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * perSecond));
        for (; sent < due; sent++) {
          if (pending.length >= 10_000) await Promise.race(pending);
          const second = Math.floor((performance.now() - started) / 1000);
          const p: Promise<void> = oneEvent().then((ms) => {
            pending.splice(pending.indexOf(p), 1);
            if (ms === undefined) return;
            latencies.push(ms);
            bySecond[Math.min(second, bySecond.length - 1)]!.push(ms);
          });
          pending.push(p);
        }
        await new Promise((r) => setTimeout(r, 1));
      }
      await Promise.all(pending);
      p99BySecondMs = bySecond.filter((l) => l.length > 0).map((l) => percentile(Float64Array.from(l).sort(), 99));
    });
    const requests = Float64Array.from(requestMs.splice(0)).sort();
    return {
      ...side,
      requests: requests.length,
      requestP50Ms: percentile(requests, 50),
      requestP99Ms: percentile(requests, 99),
      requestMaxMs: requests.length > 0 ? requests[requests.length - 1]! : 0,
      p99BySecondMs,
    };
  };
  return { run, runAtRate, edgeBatches, close: () => transport.close() };
}

function runPgbench(
  url: string,
  options: Options,
  dir: string,
  database: string,
  seconds: number,
  measured: boolean,
): Promise<Side> {
  const script = join(dir, 'record-event.sql');
  writeFileSync(script, SINGLE_EVENT_SCRIPT);
  return runPgbenchScript({
    url,
    database,
    script,
    clients: options.pgbenchClients,
    threads: Math.min(options.pgbenchClients, cpus().length),
    seconds,
    defines: { games: options.games, players: options.players },
    dir,
    measured,
  });
}

/** The ledger alone, through the launcher's process mode (its log in `dir`/ledger.log). */
async function startLedger(
  databaseUrl: string,
  natsUrl: string,
  options: Pick<Options, 'pool' | 'batchMax' | 'groupKeys'>,
  cpuProfileDir: string | undefined,
  dir: string,
): Promise<Programs> {
  return startPrograms({
    // As the image: the programs' modules come from Node's compile cache, without the type stripper.
    warmCompileCache: true,
    programs: { ledger: {} },
    env: {
      // Tracing on when the bench's environment says so (docs/benchmarks.md, "Tracing on and off").
      ...otelEnvironment(),
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      // Required with DATABASE_URL; the bench's database is its own.
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      EVENT_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      DATABASE_POOL_MAX: String(options.pool),
      EVENT_BATCH_MAX: String(options.batchMax),
      EVENT_GROUP_KEYS_MAX: String(options.groupKeys),
      WEBHOOK_WORKER: 'false',
    },
    logDir: dir,
    nodeOptions: () => [
      ...extraNodeOptions(),
      ...(cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : []),
    ],
    startTimeoutMs: 30_000,
  });
}

/** PostgreSQL's durable defaults, or fsync, synchronous_commit and full_page_writes off (our own cluster only). */
async function setDurability(serverUrl: string, mode: Durability): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const value = mode === 'durable' ? 'on' : 'off';
    for (const setting of ['fsync', 'synchronous_commit', 'full_page_writes']) {
      await client.query(`alter system set ${setting} = ${value}`);
    }
    await client.query('select pg_reload_conf()');
  } finally {
    await client.end();
  }
}

/**
 * The ledger's ledger_event_batch_size histogram (cumulative buckets), from its /metrics, and its calls of
 * ledger.record_events: every key's batch is one call unless it shared one (ledger_event_transaction_keys counts the
 * calls of more than one key and their keys), and its database's contention rollbacks so far (one scrape for both).
 */
async function ledgerBatchSizes(
  port: number,
): Promise<{ count: number; sum: number; calls: number; buckets: Record<string, number>; contention: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const buckets: Record<string, number> = {};
  let previous = 0;
  for (const m of text.matchAll(/^ledger_event_batch_size_bucket\{le="([^"]+)"\} (\d+)/gm)) {
    const cumulative = Number(m[2]);
    buckets[m[1]!] = cumulative - previous;
    previous = cumulative;
  }
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
  const count = value('ledger_event_batch_size_count');
  const calls = count - value('ledger_event_transaction_keys_sum') + value('ledger_event_transaction_keys_count');
  // Units of work its database rolled back for contention so far (database_contention_failures_total, all labels).
  let contention = 0;
  for (const m of text.matchAll(/^database_contention_failures_total\{[^}]*\} (\S+)/gm)) contention += Number(m[1]);
  return { count, sum: value('ledger_event_batch_size_sum'), calls, buckets, contention };
}

/**
 * The bench's own cluster logs what can stall a call for a while: checkpoints, lock waits longer than
 * deadlock_timeout, deadlocks, every autovacuum and autoanalyze; with millisecond UTC timestamps, so that
 * serverEvents can put them on the half-peak phase's timeline next to its tall seconds.
 */
const SERVER_LOG_SETTINGS = [
  'log_checkpoints=on',
  'log_lock_waits=on',
  'log_autovacuum_min_duration=0',
  'log_timezone=UTC',
  "log_line_prefix='%m [%p] '",
];

/** The server log's first lines of entries between two instants, as `+seconds message` (seconds from `fromMs`). */
function serverEvents(logPath: string, fromMs: number, toMs: number): string[] {
  let text: string;
  try {
    text = readFileSync(logPath, 'utf8');
  } catch {
    return [];
  }
  const events: string[] = [];
  for (const m of text.matchAll(/^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] (.*)$/gm)) {
    const at = Date.parse(`${m[1]!.replace(' ', 'T')}Z`);
    if (at < fromMs || at > toMs) continue;
    events.push(`+${((at - fromMs) / 1000).toFixed(1)} s ${m[2]!.slice(0, 220)}`);
  }
  return events;
}

async function countEvents(url: string): Promise<{ accepted: number; rejected: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; n: string }>(
      'select status, count(*)::text as n from ledger.events group by status',
    );
    const of = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
    return { accepted: of('accepted'), rejected: of('rejected') };
  } finally {
    await client.end();
  }
}

function cpuPerDecision(side: Side): string {
  const parts = Object.entries(side.cpuS).map(
    ([name, seconds]) => `${name} ${((seconds * 1e6) / side.decisions).toFixed(0)} µs`,
  );
  return parts.join(', ');
}

async function main(): Promise<void> {
  const options = readOptions();
  const stops: Array<() => Promise<void>> = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-ledger-'));
  stops.push(async () => rmSync(dir, { recursive: true, force: true }));
  let ledgerProcess: Programs | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await ledgerProcess?.stop();
      for (const stop of stops.reverse()) {
        try {
          await stop();
        } catch (error) {
          process.stderr.write(`cleanup failed: ${(error as Error).message}\n`);
        }
      }
    })());
  // Ctrl-C stops the ledger, the servers and the database this run started.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`${signal}: cleaning up\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  let ownCluster = false;
  /** The own cluster's server log (SERVER_LOG_SETTINGS); undefined with DATABASE_URL. */
  let serverLog: string | undefined;
  try {
    let serverUrl = process.env.DATABASE_URL;
    if (!serverUrl) {
      const postgres = await startPostgres({ durable: true, settings: SERVER_LOG_SETTINGS });
      stops.push(postgres.stop);
      serverLog = postgres.logPath;
      serverUrl = postgres.url;
      ownCluster = true;
    }
    let natsUrl = process.env.NATS_URL;
    let natsPid: number | undefined;
    if (!natsUrl) {
      const nats = await startNats();
      stops.push(nats.stop);
      natsUrl = nats.url;
      natsPid = nats.process.pid;
    }
    const name = `bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const databaseUrl = url.toString();
    stops.push(async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    });

    await migrate(databaseUrl, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    await createFixtures(databaseUrl, options);
    if (options.webhookEndpoints) await createWebhookEndpoints(databaseUrl);
    let prefillSeconds: number | undefined;
    if (options.prefill > 0) {
      const filled = await prefillEvents(
        databaseUrl,
        { events: options.prefill, games: options.games, players: options.players, eventType: EVENT_TYPE },
        (line) => process.stderr.write(`${line}\n`),
      );
      prefillSeconds = filled.seconds;
      process.stderr.write(`prefill: ${options.prefill} events in ${filled.seconds.toFixed(0)} s\n`);
    }
    ledgerProcess = await startLedger(databaseUrl, natsUrl, options, options.cpuProfile, dir);
    const ledger = ledgerProcess.get('ledger');
    const ledgerPort = ledger.port;
    const idleRss = rssMiB(ledger.pid!, 'VmRSS');
    const loadBefore = loadavg();

    process.stderr.write(
      `bench: ${options.games} games x ${options.players} players; NATS side ${options.concurrency} in flight ` +
        `(edge batch ${options.edgeBatch}, ${options.edgeKeys} keys, ${options.edgeInFlight} requests in flight; ` +
        `ledger pool ${options.pool}, EVENT_BATCH_MAX ${options.batchMax}, EVENT_GROUP_KEYS_MAX ${options.groupKeys}); pgbench ${options.pgbenchClients} clients; ` +
        `${options.warmupS} s warm-up + ${options.durationS} s per side in ${options.rounds} rounds\n`,
    );
    const driver = await natsDriver(natsUrl, options, { database: name, ledgerPid: ledger.pid!, natsPid });
    const pgbench = (seconds: number, measured: boolean) =>
      runPgbench(databaseUrl, options, dir, name, seconds, measured);
    const modes: Array<Durability | 'as configured'> = !ownCluster
      ? ['as configured']
      : options.durability === 'both'
        ? ['durable', 'off']
        : [options.durability];
    const rows: Array<Record<string, unknown>> = [];
    const lines: string[] = [''];
    const f = (n: number, d = 0) => n.toFixed(d);
    for (const mode of modes) {
      if (mode !== 'as configured') await setDurability(serverUrl, mode);
      if (options.warmupS > 0) {
        await driver.run(options.warmupS, false);
        await pgbench(options.warmupS, false);
      }
      // Both sides warm up before either is measured, then take turns: ROUNDS rounds of DURATION / ROUNDS seconds
      // each. The cost of an event changes while the tables are young (index growth, the first autovacuum and
      // analyze passes, HOT pruning of the game rows); taking turns gives both sides the same history.
      // Whole seconds: pgbench's -T takes no fraction (--duration 20 in 3 rounds: rounds of 7 s).
      const roundS = Math.max(1, Math.round(options.durationS / options.rounds));
      const natsRounds: Side[] = [];
      const pgbenchRounds: Side[] = [];
      const roundRss: number[] = [];
      const batches0 = await ledgerBatchSizes(ledgerPort);
      const edge0 = driver.edgeBatches.length;
      for (let round = 0; round < options.rounds; round++) {
        natsRounds.push(await driver.run(roundS, true));
        roundRss.push(rssMiB(ledger.pid!, 'VmRSS'));
        pgbenchRounds.push(await pgbench(roundS, true));
      }
      const batches1 = await ledgerBatchSizes(ledgerPort);
      const edgeSizes = driver.edgeBatches.slice(edge0);
      const nats = combine(natsRounds);
      const pgb = combine(pgbenchRounds);
      // At half the peak: the latency, and what the machine and the batches looked like meanwhile.
      const halfBatches0 = await ledgerBatchSizes(ledgerPort);
      const halfEdge0 = driver.edgeBatches.length;
      const halfBusy0 = machineBusySeconds();
      const offered = options.rate ?? nats.perSecond / 2;
      const halfStartMs = Date.now();
      const half = options.halfRateS > 0 ? await driver.runAtRate(offered, options.halfRateS) : undefined;
      const halfEndMs = Date.now();
      const halfBatches1 = await ledgerBatchSizes(ledgerPort);
      const halfContention = halfBatches1.contention - halfBatches0.contention;
      const halfServerEvents = serverLog ? serverEvents(serverLog, halfStartMs, halfEndMs) : undefined;
      const halfEdgeSizes = driver.edgeBatches.slice(halfEdge0);
      const halfDetail = half
        ? {
            machineBusyCpus: (machineBusySeconds() - halfBusy0) / half.seconds,
            ledgerEventsPerBatch:
              (halfBatches1.sum - halfBatches0.sum) / Math.max(1, halfBatches1.count - halfBatches0.count),
            ledgerEventsPerCall:
              (halfBatches1.sum - halfBatches0.sum) / Math.max(1, halfBatches1.calls - halfBatches0.calls),
            edgeEventsPerRequest: halfEdgeSizes.reduce((a, b) => a + b, 0) / Math.max(1, halfEdgeSizes.length),
          }
        : undefined;
      const ratio = nats.perSecond / pgb.perSecond;
      const ledgerBatches = {
        count: batches1.count - batches0.count,
        events: batches1.sum - batches0.sum,
        calls: batches1.calls - batches0.calls,
        buckets: Object.fromEntries(
          Object.entries(batches1.buckets).map(([le, n]) => [le, n - (batches0.buckets[le] ?? 0)]),
        ),
      };
      const edgeMean = edgeSizes.length ? edgeSizes.reduce((a, b) => a + b, 0) / edgeSizes.length : 0;
      rows.push({
        durability: mode,
        recordEventsOverNats: { ...nats, latenciesMs: undefined },
        pgbench: { ...pgb, latenciesMs: undefined },
        halfPeak: half
          ? {
              ...half,
              ...halfDetail,
              latenciesMs: undefined,
              offeredPerSecond: offered,
              contentionFailures: halfContention,
              serverLog: halfServerEvents,
            }
          : undefined,
        ratio,
        ledgerBatches,
        edgeBatches: { count: edgeSizes.length, mean: edgeMean, max: Math.max(0, ...edgeSizes) },
        ledgerRssAfterRoundsMiB: roundRss,
      });
      lines.push(
        `PostgreSQL: ${mode === 'durable' ? 'durable (fsync, synchronous_commit, full_page_writes on)' : mode === 'off' ? 'fsync, synchronous_commit, full_page_writes off' : 'as configured'}`,
        `                         decisions/s   p50 ms   p99 ms   decisions   errors`,
        `RecordEvents over NATS   ${f(nats.perSecond).padStart(11)}  ${f(nats.p50Ms, 2).padStart(7)}  ${f(nats.p99Ms, 2).padStart(7)}  ${String(nats.decisions).padStart(10)}  ${String(nats.errors).padStart(7)}`,
        `pgbench, record_event    ${f(pgb.perSecond).padStart(11)}  ${f(pgb.p50Ms, 2).padStart(7)}  ${f(pgb.p99Ms, 2).padStart(7)}  ${String(pgb.decisions).padStart(10)}  ${String(pgb.errors).padStart(7)}`,
        half
          ? `NATS at half its peak    ${f(half.perSecond).padStart(11)}  ${f(half.p50Ms, 2).padStart(7)}  ${f(half.p99Ms, 2).padStart(7)}  ${String(half.decisions).padStart(10)}  ${String(half.errors).padStart(7)}   (offered ${f(offered)}/s for ${options.halfRateS} s)`
          : '',
        half && halfDetail
          ? `at half its peak: machine busy ${f(halfDetail.machineBusyCpus, 2)} of ${cpus().length} CPUs; ledger batches ${f(halfDetail.ledgerEventsPerBatch, 2)} events, calls ${f(halfDetail.ledgerEventsPerCall, 2)}, edge requests ${f(halfDetail.edgeEventsPerRequest, 2)}; CPU per decision: ${cpuPerDecision(half)}`
          : '',
        half
          ? `at half its peak: RecordEvents round trips p50 ${f(half.requestP50Ms, 1)} ms, p99 ${f(half.requestP99Ms, 1)} ms, max ${f(half.requestMaxMs)} ms (the rest of an event's latency: its wait for a request slot); p99 of each second's events: ${half.p99BySecondMs.map((ms) => f(ms)).join(' ')} ms`
          : '',
        half
          ? `at half its peak: the ledger's database rolled back ${halfContention} unit(s) of work for contention (deadlock or serialization failure; retried)`
          : '',
        ...(half && halfServerEvents
          ? halfServerEvents.length === 0
            ? ['at half its peak: the server logged no checkpoint, lock wait or autovacuum']
            : [
                `at half its peak: the server logged (seconds from the phase's start; checkpoints, lock waits, autovacuum):`,
                ...halfServerEvents.slice(0, 40).map((line) => `  ${line}`),
                ...(halfServerEvents.length > 40 ? [`  ... ${halfServerEvents.length - 40} more`] : []),
              ]
          : []),
        `ratio (NATS / pgbench): ${f(ratio, 2)}`,
        `ledger batches: ${ledgerBatches.count} batches, ${f(ledgerBatches.events / Math.max(1, ledgerBatches.count), 1)} events each on average; by size (at most): ${Object.entries(
          ledgerBatches.buckets,
        )
          .map(([le, n]) => `${le}: ${n}`)
          .join(', ')}`,
        `ledger calls of record_events: ${ledgerBatches.calls}, ${f(ledgerBatches.count / Math.max(1, ledgerBatches.calls), 1)} keys and ${f(ledgerBatches.events / Math.max(1, ledgerBatches.calls), 1)} events each on average`,
        `edge (RecordEvents) requests: ${edgeSizes.length}, ${f(edgeMean, 1)} events each on average, largest ${Math.max(0, ...edgeSizes)}`,
        `CPU per decision, NATS side: ${cpuPerDecision(nats)}`,
        `CPU per decision, pgbench:   ${cpuPerDecision(pgb)}`,
        `ledger system calls per decision: ${f((nats.ledgerSyscalls?.reads ?? 0) / nats.decisions, 2)} reads, ` +
          `${f((nats.ledgerSyscalls?.writes ?? 0) / nats.decisions, 2)} writes`,
        `ledger RSS after each NATS round: ${roundRss.map((r) => f(r, 0)).join(', ')} MiB`,
        '',
      );
    }
    await driver.close();
    const peak = rssMiB(ledger.pid!);
    const stored = await countEvents(databaseUrl);
    const loadAfter = loadavg();
    const outbox = options.webhookEndpoints ? await expandOutbox(databaseUrl) : undefined;
    if (outbox) lines.push(outbox.line);
    lines.push(
      `ledger peak RSS (VmHWM): ${f(peak, 1)} MiB (${f(idleRss, 1)} MiB when ready)`,
      `load average (1, 5, 15 min) before: ${loadBefore.map((l) => f(l, 2)).join(', ')}; after: ${loadAfter.map((l) => f(l, 2)).join(', ')}`,
      `stored decisions: ${stored.accepted} accepted, ${stored.rejected} rejected (warm-ups included${options.prefill ? `, and the ${options.prefill} prefilled in ${f(prefillSeconds ?? 0)} s` : ''})`,
      '',
    );
    const figures = {
      machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}`,
      options,
      rows,
      ledgerPeakRssMiB: peak,
      ledgerReadyRssMiB: idleRss,
      loadBefore,
      loadAfter,
      storedDecisions: stored,
      prefillSeconds,
      webhookOutbox: outbox?.figures,
    };
    process.stdout.write(lines.join('\n'));
    if (options.json) writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    await cleanup();
  }
}

/**
 * The part of the outbox the event path left to the delivery worker (off during the bench): the rows of decision
 * pairs the run wrote, made into messages by the worker's own statement, one chunk after another on one connection,
 * as one replica's worker would. Wall time, so PostgreSQL's work plus the round trips and commits.
 */
async function expandOutbox(databaseUrl: string) {
  const database = await Database.open({ url: databaseUrl, poolMax: 1, logger: pino({ level: 'silent' }) });
  try {
    const repository = new WebhookRepository(database);
    const started = performance.now();
    let rows = 0;
    for (let made = -1; made !== 0; rows += made) made = await repository.expandDecisionBatches(50);
    const seconds = (performance.now() - started) / 1000;
    const [count] = await database.query<{ n: string }>(
      `select count(*)::text as n from ledger.webhook_messages where decision_id is not null`,
    );
    const messages = Number(count?.n ?? 0);
    return {
      figures: { rows, messages, seconds },
      line:
        `webhook outbox: the worker's statement made ${messages} messages of ${rows} rows of pairs in ` +
        `${seconds.toFixed(1)} s (${((seconds * 1e6) / Math.max(1, messages)).toFixed(1)} µs per message, one connection)`,
    };
  } finally {
    await database.close();
  }
}

await main();
