// npm run bench: the whole service end to end against the database's own ceiling, in one run on one machine.
//
//   1. starts PostgreSQL and nats-server (unless DATABASE_URL / NATS_URL are given) and the five programs as separate
//      processes (or the all-in-one process with --mode all-in-one), with run-made JWKS and an operator token;
//   2. runs the k6 full profile (load/ingest.js): setup() through the console and the link flow, the steady mixed
//      scenarios (ingest, replay, console reads) for --duration, then the peak phase: fresh events in a closed loop
//      of --peak-vus in flight (each sent when one is answered, as pgbench's clients do), for --peak-duration; the
//      completed rate is the end-to-end ceiling;
//   3. the batch mode: k6 again on the same fixtures (SETUP_DATA), batches of 20 fresh events to
//      POST /api/game-sdk/v2/events/batch in a closed loop of --batch-vus, for --batch-duration: its events per second
//      and the CPU each process spent per event (the edge's against the issue's 40 µs);
//   4. runs pgbench on the same database with the same SQL work as one decision (the single-event record_event
//      statement, load/lib/single-event.ts, on the games and linked players k6 created), with --pgbench-clients
//      clients (16 by default; the ledger's pool is the machine's CPUs by default, --help): its ceiling (closed);
//   5. the rates at p99 <= 25 ms: two step searches for the highest offered rate whose p99 stays within 25 ms, the
//      service's (short k6 runs of fresh events, open model, each --step-duration after 2 s of warm-up at the same
//      rate) and pgbench's (`pgbench -R <rate>`, its per-transaction latencies from the scheduled start), each rate
//      decided by a majority of up to --step-tries tries (load/lib/steps.ts), the two sides' tries taken in turn so
//      that both sides meet the same minutes of the disk;
//   6. prints events per second end to end, p50/p95/p99, errors, the pgbench ceiling and the ratio, the rates at
//      p99 <= 25 ms and their ratio, the batch mode's ratio, each program's peak memory, and the CPU each process spent
//      per event during the peak and in batch mode.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { summarizeCpuProfile, summarizeStages } from './lib/cpuprofile.ts';
import { ensureK6, type K6Summary, k6Version, runK6 } from './lib/k6.ts';
import { runPgbench, type Side } from './lib/pgbench.ts';
import { cpuSeconds, machine, machineBusySeconds, sampleBackendCpu, syscalls } from './lib/proc.ts';
import { installSingleEventFunction, recordEventStatement } from './lib/single-event.ts';
import {
  held,
  interleavedSearches,
  P99_BOUND_MS,
  type Step,
  StepSearch,
  type StepSearchResult,
  triesToHold,
} from './lib/steps.ts';
import type { LoadSystem, SystemMode } from './lib/system.ts';
import { log, prepare } from './run-k6.ts';

const HELP = `Usage: npm run bench -- [options]

Runs the service on real PostgreSQL and NATS, drives it with the k6 full profile, runs pgbench with the same SQL
work as one decision on the same database, and prints events per second end to end, latency percentiles, errors,
the pgbench ceiling, the ratio (target: 0.8 or better), each program's peak memory and CPU per event.

Options:
  --duration D          steady mixed scenarios of the full profile (200 events/s, 50 replays/s,
                        10 console reads/s)                                          default 2m
  --peak-duration D     peak phase: fresh events only, at capacity                      default 60s
  --peak-rate N|closed  the peak phase: closed, a closed loop of --peak-vus requests in flight
                        (each sent when one is answered); N, N events per second offered
                        with at most --peak-vus in flight (open model)                  default closed
  --peak-vus N          requests in flight in the peak phase (at most, with --peak-rate N) default 64
  --batch-duration D    the batch mode: batches of 20 in a closed loop; 0s: skipped      default 20s
  --batch-vus N         batch requests of 20 events in flight in the batch mode (as many
                        as pgbench's clients)                                            default 16
  --step-duration D     each step of the searches for the rate at p99 <= 25 ms (the
                        service's after 2 s of warm-up at the same rate); 0s: skipped   default 5s
  --steps N             rates at most of each search                                     default 8
  --step-tries N        tries of each rate at most (1 to 5); a rate holds when a strict
                        majority of its tries held (one slow commit decides a step)      default 3
  --pool N              the state owners' PostgreSQL connections (DATABASE_POOL_MAX)    default: the CPUs
                        (docs/deploy.md "Scaling": about the database's CPUs; it runs here)
  --pgbench-clients N   pgbench clients                                                  default 16
  --pgbench-duration S  measured pgbench seconds (after a 5 s warm-up)                   default 60
  --pgbench-protocol P  pgbench's -M: prepared (named statements, as the service's default here) or
                        extended (unnamed, parsed and planned each time, as the services with
                        DATABASE_NAMED_STATEMENTS=false)                                 default prepared
  --pgbench-also P      then pgbench again with the other protocol P, reported beside (not in the ratio)
  --service-env K=V     one more environment variable for every program (repeatable), e.g.
                        DATABASE_NAMED_STATEMENTS=false (pooler-safe statements; default here: true, a
                        direct connection, docs/benchmarks.md) or INGEST_EVENT_IN_FLIGHT_MAX=4
  --mode M              programs (five processes) or all-in-one                          default programs
  --durability D        durable (PostgreSQL's defaults: fsync, synchronous_commit on) or off
                        (fsync, synchronous_commit, full_page_writes off, as the tests)   default durable
  --cpu-prof DIR        run ingest and ledger (or the all-in-one process) with node --cpu-prof; profiles
                        written to DIR and their top functions printed
  --wait-for-load L     before starting, wait until the 1-minute load average is below L (polls every 60 s)
  --wait-max M          give up waiting after M minutes and run anyway                   default 20
  --json FILE           also write every figure as JSON to FILE
  --help                this text

Environment: DATABASE_URL, NATS_URL (servers to use; unset: throwaway ones), K6, PGBENCH (binaries).
`;

type PgbenchProtocol = 'prepared' | 'extended';

interface BenchOptions {
  duration: string;
  peakDuration: string;
  /** Events per second offered in the peak phase, or `closed` (a closed loop of peakVus). */
  peakRate: number | 'closed';
  peakVus: number;
  batchDuration: string;
  batchVus: number;
  stepDuration: string;
  steps: number;
  /** Tries of each rate of the step searches at most; a strict majority of them decides the rate. */
  stepTries: number;
  pool: number;
  pgbenchClients: number;
  pgbenchSeconds: number;
  pgbenchProtocol: PgbenchProtocol;
  pgbenchAlso: PgbenchProtocol | undefined;
  serviceEnv: Record<string, string>;
  mode: SystemMode;
  durability: 'durable' | 'off';
  cpuProfile: string | undefined;
  waitForLoad: number | undefined;
  waitMaxMinutes: number;
  json: string | undefined;
}

function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[unit!]!;
  }
  return total;
}

function readOptions(): BenchOptions {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      'peak-duration': { type: 'string' },
      'peak-rate': { type: 'string' },
      'peak-vus': { type: 'string' },
      'batch-duration': { type: 'string' },
      'batch-vus': { type: 'string' },
      'step-duration': { type: 'string' },
      steps: { type: 'string' },
      'step-tries': { type: 'string' },
      pool: { type: 'string' },
      'pgbench-clients': { type: 'string' },
      'pgbench-duration': { type: 'string' },
      'pgbench-protocol': { type: 'string' },
      'pgbench-also': { type: 'string' },
      'service-env': { type: 'string', multiple: true },
      mode: { type: 'string' },
      durability: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'wait-for-load': { type: 'string' },
      'wait-max': { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const problems: string[] = [];
  const int = (flag: string, raw: string | undefined, fallback: number, min: number, max: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) problems.push(`--${flag} must be an integer from ${min} to ${max}`);
    return n;
  };
  const peakRate = (raw: string | undefined): number | 'closed' => {
    if (raw === undefined || raw === 'closed') return 'closed';
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 100_000) {
      problems.push('--peak-rate must be closed or an integer from 1 to 100000');
    }
    return n;
  };
  const duration = (flag: string, raw: string | undefined, fallback: string) => {
    const value = raw ?? fallback;
    if (!/^(\d+(ms|s|m|h))+$/.test(value) || seconds(value) <= 0) problems.push(`--${flag} must look like 90s or 2m`);
    return value;
  };
  const pool = int('pool', values.pool, availableParallelism(), 1, 200);
  const mode = values.mode ?? 'programs';
  if (mode !== 'programs' && mode !== 'all-in-one') problems.push('--mode must be programs or all-in-one');
  const durability = values.durability ?? 'durable';
  if (durability !== 'durable' && durability !== 'off') problems.push('--durability must be durable or off');
  const pgbenchProtocol = values['pgbench-protocol'] ?? 'prepared';
  const pgbenchAlso = values['pgbench-also'];
  for (const [flag, value] of [
    ['pgbench-protocol', pgbenchProtocol],
    ['pgbench-also', pgbenchAlso],
  ] as const) {
    if (value !== undefined && value !== 'prepared' && value !== 'extended') {
      problems.push(`--${flag} must be prepared or extended`);
    }
  }
  // The bench's service talks to PostgreSQL directly (no transaction pooler), as pgbench does: so it prepares its hot
  // statements, as docs/deploy.md advises for a direct connection, and both sides parse and plan once per connection
  // (docs/benchmarks.md, "Prepared statements on both sides"). --service-env DATABASE_NAMED_STATEMENTS=false measures
  // the pooler-safe setting (then compare with --pgbench-protocol extended).
  const serviceEnv: Record<string, string> = { DATABASE_NAMED_STATEMENTS: 'true' };
  for (const pair of values['service-env'] ?? []) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (match) serviceEnv[match[1]!] = match[2]!;
    else problems.push(`--service-env must look like NAME=value, got ${pair}`);
  }
  const waitForLoad = values['wait-for-load'] === undefined ? undefined : Number(values['wait-for-load']);
  if (waitForLoad !== undefined && !(waitForLoad > 0)) problems.push('--wait-for-load must be a positive number');
  const options: BenchOptions = {
    duration: duration('duration', values.duration, '2m'),
    peakDuration: duration('peak-duration', values['peak-duration'], '60s'),
    peakRate: peakRate(values['peak-rate']),
    peakVus: int('peak-vus', values['peak-vus'], 64, 1, 2000),
    batchDuration:
      values['batch-duration'] === '0s' ? '0s' : duration('batch-duration', values['batch-duration'], '20s'),
    batchVus: int('batch-vus', values['batch-vus'], 16, 1, 2000),
    stepDuration: values['step-duration'] === '0s' ? '0s' : duration('step-duration', values['step-duration'], '5s'),
    steps: int('steps', values.steps, 8, 1, 30),
    stepTries: int('step-tries', values['step-tries'], 3, 1, 5),
    pool,
    pgbenchClients: int('pgbench-clients', values['pgbench-clients'], 16, 1, 200),
    pgbenchSeconds: int('pgbench-duration', values['pgbench-duration'], 60, 1, 3600),
    pgbenchProtocol: pgbenchProtocol as PgbenchProtocol,
    pgbenchAlso: pgbenchAlso as PgbenchProtocol | undefined,
    serviceEnv,
    mode: mode as SystemMode,
    durability: durability as BenchOptions['durability'],
    cpuProfile: values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined,
    waitForLoad,
    waitMaxMinutes: int('wait-max', values['wait-max'], 20, 0, 600),
    json: values.json,
  };
  if (problems.length) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(2);
  }
  return options;
}

async function waitForQuietMachine(options: BenchOptions): Promise<void> {
  if (options.waitForLoad === undefined) return;
  const deadline = Date.now() + options.waitMaxMinutes * 60_000;
  for (;;) {
    const load = machine().loadAverage1m;
    if (load < options.waitForLoad) {
      log(`1-minute load average ${load.toFixed(2)} < ${options.waitForLoad}: starting`);
      return;
    }
    if (Date.now() >= deadline) {
      log(`1-minute load average still ${load.toFixed(2)} after ${options.waitMaxMinutes} min: running anyway`);
      return;
    }
    log(`1-minute load average ${load.toFixed(2)} >= ${options.waitForLoad}: waiting 60 s`);
    await new Promise((r) => setTimeout(r, 60_000));
  }
}

interface Target {
  keyHash: Buffer;
  playerId: string;
}

/** The secret keys and linked players k6's setup() created: what the fresh events of the load were sent as. */
async function targets(url: string): Promise<Target[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ key_hash: Buffer; player_id: string }>(
      `select k.key_hash, p.id as player_id
         from ledger.keys k join ledger.players p on p.game_id = k.game_id
        where k.kind = 'secret' and k.revoked_at is null and p.linked_at is not null
        order by k.game_id, p.id`,
    );
    return rows.map((r) => ({ keyHash: r.key_hash, playerId: r.player_id }));
  } finally {
    await client.end();
  }
}

/**
 * A pgbench script doing what the ledger does for one fresh event of the load: the same prepared statement with a
 * random (key, linked player) of the run, a new event id, event type level_complete, occurredAt now, a random
 * payload hash, receipt now() and the run's rate limit. The pair is chosen by pgbench's \if on a random number (client
 * side), so each branch's statement carries its key hash and player id as literals and the server does exactly the
 * decision's work.
 */
function pgbenchScript(list: Target[], rateLimit: number): string {
  const lines = [`\\set i random(1, ${list.length})`];
  list.forEach((t, index) => {
    lines.push(`${index === 0 ? '\\if' : '\\elif'} :i = ${index + 1}`);
    lines.push(
      recordEventStatement([
        `'\\x${t.keyHash.toString('hex')}'::bytea`,
        'gen_random_uuid()',
        `'${t.playerId}'::uuid`,
        `'level_complete'`,
        '(extract(epoch from clock_timestamp()) * 1000)::bigint',
        `sha256(convert_to(gen_random_uuid()::text, 'UTF8'))`,
        'null',
        String(rateLimit),
      ]),
    );
  });
  lines.push('\\endif', '');
  return lines.join('\n');
}

async function countEvents(url: string, from: Date, to: Date): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'select count(*)::text as n from ledger.events where created_at >= $1 and created_at < $2',
      [from, to],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

interface Histogram {
  count: number;
  sum: number;
  cumulativeBuckets: Record<string, number>;
}

interface Trend {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function trend(summary: K6Summary | undefined, metric: string): Trend | undefined {
  const v = summary?.metrics?.[metric]?.values;
  if (!v) return undefined;
  const at = (name: string) => v[name] ?? Number.NaN;
  return { p50: at('med'), p95: at('p(95)'), p99: at('p(99)'), max: at('max') };
}

/** Requests of a scenario and how many failed (http_req_failed counts a failure as a "pass" of the rate). */
function requests(
  summary: K6Summary | undefined,
  scenario: string,
): { count: number; failed: number; checksFailed: number } {
  const failed = summary?.metrics?.[`http_req_failed{scenario:${scenario}}`]?.values;
  const checks = summary?.metrics?.[`checks{scenario:${scenario}}`]?.values;
  return {
    count: (failed?.passes ?? 0) + (failed?.fails ?? 0),
    failed: failed?.passes ?? 0,
    checksFailed: checks?.fails ?? 0,
  };
}

interface MeasuredWindow {
  from: Date;
  to: Date;
  cpuS: Record<string, number>;
  k6CpuS: number;
  postgresS: number;
  syscalls: Record<string, { reads: number; writes: number }>;
  /** CPU seconds the whole machine was busy. */
  machineS: number;
}

/**
 * A measured window (the peak's, the batch mode's): `startMs` to `endMs` after the end of k6's setup(), the CPU of
 * every process, of k6 and of the database's backends, the machine's busy CPU and the processes' system calls, read at
 * both ends.
 */
function windowSampler(system: LoadSystem, startMs: number, endMs: number) {
  const processes = system.processes;
  let window: MeasuredWindow | undefined;
  let k6Pid: number | undefined;
  const timers: NodeJS.Timeout[] = [];
  const onLogLine = (line: string) => {
    // A window that would end before it starts (a peak of 3 s or less) is not measured: its start would begin sampling
    // the database's backends that no end stops.
    if (!line.includes('setup: done') || endMs <= startMs) return;
    let startCpu: Record<string, number> = {};
    let startIo: Record<string, { reads: number; writes: number }> = {};
    let startK6 = 0;
    let startMachine = 0;
    let from = new Date();
    let backendSampler: { stop: () => number } | undefined;
    timers.push(
      setTimeout(() => {
        from = new Date();
        startCpu = Object.fromEntries(processes.map((p) => [p.name, cpuSeconds(p.pid)]));
        startIo = Object.fromEntries(processes.map((p) => [p.name, syscalls(p.pid)]));
        startK6 = k6Pid ? cpuSeconds(k6Pid) : 0;
        startMachine = machineBusySeconds();
        backendSampler = sampleBackendCpu(system.databaseName);
      }, startMs),
      setTimeout(() => {
        window = {
          from,
          to: new Date(),
          cpuS: Object.fromEntries(processes.map((p) => [p.name, cpuSeconds(p.pid) - (startCpu[p.name] ?? 0)])),
          k6CpuS: k6Pid ? cpuSeconds(k6Pid) - startK6 : Number.NaN,
          postgresS: backendSampler?.stop() ?? Number.NaN,
          machineS: machineBusySeconds() - startMachine,
          syscalls: Object.fromEntries(
            processes.map((p) => {
              const io = syscalls(p.pid);
              const io0 = startIo[p.name] ?? { reads: Number.NaN, writes: Number.NaN };
              return [p.name, { reads: io.reads - io0.reads, writes: io.writes - io0.writes }];
            }),
          ),
        };
      }, endMs),
    );
  };
  return {
    onLogLine,
    onStart: (pid: number) => {
      k6Pid = pid;
    },
    /** Stops the timers; the window, if both ends were read. */
    finish(): MeasuredWindow | undefined {
      for (const t of timers) clearTimeout(t);
      return window;
    },
  };
}

/** A Prometheus histogram of one program's /metrics. */
async function histogram(url: string, name: string): Promise<Histogram> {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  const value = (suffix: string) => Number(new RegExp(`^${name}_${suffix} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
  const buckets = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'))].map(
    (m) => [m[1]!, Number(m[2])] as const,
  );
  return { count: value('count'), sum: value('sum'), cumulativeBuckets: Object.fromEntries(buckets) };
}

interface BatchHistograms {
  /** Events per RecordEvents request of the edge. */
  edge: Histogram;
  /** Events per key's batch in the ledger (a call of ledger.record_events holds the batches of up to 8 keys). */
  ledger: Histogram;
  /** Keys per call of ledger.record_events, for the calls of more than one key only. */
  ledgerKeys: Histogram;
}

/** The batch sizes so far: the edge's RecordEvents requests, the ledger's key batches and its calls. */
async function batchHistograms(urls: LoadSystem['urls']): Promise<BatchHistograms> {
  return {
    edge: await histogram(urls.ingest, 'ingest_event_batch_size'),
    ledger: await histogram(urls.ledger, 'ledger_event_batch_size'),
    ledgerKeys: await histogram(urls.ledger, 'ledger_event_transaction_keys'),
  };
}

/**
 * Calls of ledger.record_events between two readings: every key batch is in one call, and a call of k > 1 keys
 * counts k batches (ledger_event_transaction_keys observes only those), so calls = batches - (keys - multi-key calls).
 */
function ledgerCalls(after: BatchHistograms, before?: BatchHistograms): number {
  const d = (pick: (h: BatchHistograms) => number) => pick(after) - (before ? pick(before) : 0);
  return d((h) => h.ledger.count) - (d((h) => h.ledgerKeys.sum) - d((h) => h.ledgerKeys.count));
}

/** The rates at p99 <= P99_BOUND_MS of both sides, their steps and their ratio. */
interface RateAtP99 {
  boundMs: number;
  stepSeconds: number;
  /** Tries of each rate at most; a rate holds when a strict majority of them held (triesToHold). */
  stepTries: number;
  service: StepSearchResult;
  pgbench: StepSearchResult;
  ratio: number;
}

/** One step of the service: a k6 run on the first run's fixtures, fresh events at `rate`/s, open model. */
async function serviceStep(
  run: { k6: string; k6Env: Record<string, string>; resultsDir: string; setupFile: string; stepDuration: string },
  rate: number,
): Promise<Step> {
  const result = await runK6(
    run.k6,
    {
      ...run.k6Env,
      SETUP_DATA: run.setupFile,
      INGEST_RATE: '0',
      REPLAY_RATE: '0',
      CONSOLE_RATE: '0',
      BATCH_RATE: '0',
      PEAK_RATE: '0',
      STEP_RATE: String(rate),
      STEP_DURATION: run.stepDuration,
      STEP_WARMUP,
    },
    { resultsDir: run.resultsDir, profile: 'full', quiet: true },
  );
  const stepRequests = requests(result.summary, 'step');
  const latency = trend(result.summary, 'http_req_duration{scenario:step}');
  return held(
    {
      offeredPerSecond: rate,
      completedPerSecond: (stepRequests.count - stepRequests.failed) / seconds(run.stepDuration),
      p50Ms: latency?.p50 ?? Number.NaN,
      p99Ms: latency?.p99 ?? Number.NaN,
      failed: stepRequests.failed + stepRequests.checksFailed,
      dropped: result.summary?.metrics?.dropped_iterations?.values?.count ?? 0,
    },
    seconds(run.stepDuration),
    'constant',
  );
}

/** The batch mode's peak: batches of BATCH_SIZE in a closed loop, on the first run's fixtures. */
interface BatchPeak {
  size: number;
  vus: number;
  seconds: number;
  eventsPerSecond: number;
  batchesPerSecond: number;
  latencyMs: Trend | undefined;
  requests: { count: number; failed: number; checksFailed: number };
  /** CPU µs per event stored in the measured window (3 s after the start to 1 s before the end), per process. */
  cpuPerEventUs: Record<string, number>;
  windowEvents: number;
  /** The edge's read and write system calls per event in the measured window. */
  edgeSyscallsPerEvent: { reads: number; writes: number } | undefined;
  /** Events per RecordEvents request of the edge, and per ledger.record_events call, over the batch mode. */
  edgeEventsPerRequest: number;
  ledgerEventsPerCall: number;
}

/** Events per batch request in the batch mode (k6's BATCH_SIZE; the issue's game server bursts). */
const BATCH_SIZE = 20;
/** The step's warm-up at the same rate before its measured part (k6's stepWarmup scenario). */
const STEP_WARMUP = '2s';

async function runBatchPeak(run: {
  k6: string;
  k6Env: Record<string, string>;
  resultsDir: string;
  setupFile: string;
  duration: string;
  vus: number;
  system: LoadSystem;
}): Promise<BatchPeak> {
  const batchS = seconds(run.duration);
  const sampler = windowSampler(run.system, 3000, (batchS - 1) * 1000);
  const batchesBefore = await batchHistograms(run.system.urls);
  log(`batches of ${BATCH_SIZE}: a closed loop of ${run.vus} batch requests in flight for ${run.duration}`);
  const result = await runK6(
    run.k6,
    {
      ...run.k6Env,
      SETUP_DATA: run.setupFile,
      INGEST_RATE: '0',
      REPLAY_RATE: '0',
      CONSOLE_RATE: '0',
      BATCH_RATE: '0',
      BATCH_SIZE: String(BATCH_SIZE),
      PEAK_RATE: 'closed',
      PEAK_BATCH: 'true',
      PEAK_DURATION: run.duration,
      PEAK_VUS: String(run.vus),
    },
    {
      resultsDir: run.resultsDir,
      profile: 'full',
      quiet: true,
      onLogLine: sampler.onLogLine,
      onStart: sampler.onStart,
    },
  );
  const window = sampler.finish();
  const windowEvents = window ? await countEvents(run.system.databaseUrl, window.from, window.to) : 0;
  const cpuPerEventUs: Record<string, number> = {};
  if (window && windowEvents > 0) {
    for (const [name, cpu] of Object.entries(window.cpuS)) cpuPerEventUs[name] = (cpu * 1e6) / windowEvents;
    cpuPerEventUs.postgres = (window.postgresS * 1e6) / windowEvents;
    cpuPerEventUs.k6 = (window.k6CpuS * 1e6) / windowEvents;
  }
  const batchRequests = requests(result.summary, 'peak');
  const completed = batchRequests.count - batchRequests.failed;
  const after = await batchHistograms(run.system.urls);
  const edgeIo = window?.syscalls.ingest ?? window?.syscalls['all-in-one'];
  return {
    size: BATCH_SIZE,
    vus: run.vus,
    seconds: batchS,
    eventsPerSecond: (completed * BATCH_SIZE) / batchS,
    batchesPerSecond: completed / batchS,
    latencyMs: trend(result.summary, 'http_req_duration{scenario:peak}'),
    requests: batchRequests,
    cpuPerEventUs,
    windowEvents,
    edgeSyscallsPerEvent: edgeIo && { reads: edgeIo.reads / windowEvents, writes: edgeIo.writes / windowEvents },
    edgeEventsPerRequest:
      (after.edge.sum - batchesBefore.edge.sum) / Math.max(1, after.edge.count - batchesBefore.edge.count),
    ledgerEventsPerCall: (after.ledger.sum - batchesBefore.ledger.sum) / Math.max(1, ledgerCalls(after, batchesBefore)),
  };
}

/** pgbench on the same database with the same decision: 5 s of warm-up, then the measured run. */
async function runPgbenchSide(run: {
  url: string;
  database: string;
  script: string;
  scriptText: string;
  clients: number;
  threads: number;
  seconds: number;
  dir: string;
  protocol: PgbenchProtocol;
}): Promise<{ pgb: Side; pgbenchMachineS: number; pgbP95: number | undefined }> {
  writeFileSync(run.script, run.scriptText);
  const pgbenchRun = (secondsRun: number, measured: boolean) =>
    runPgbench({
      url: run.url,
      database: run.database,
      script: run.script,
      clients: run.clients,
      threads: run.threads,
      seconds: secondsRun,
      defines: {},
      dir: run.dir,
      measured,
      protocol: run.protocol,
    });
  log(`pgbench -M ${run.protocol}: ${run.clients} clients, 5 s warm-up, ${run.seconds} s measured`);
  await pgbenchRun(5, false);
  const machine0 = machineBusySeconds();
  const pgb: Side = await pgbenchRun(run.seconds, true);
  const pgbenchMachineS = machineBusySeconds() - machine0;
  const pgbP95 = pgb.latenciesMs[Math.min(pgb.latenciesMs.length - 1, Math.floor(0.95 * pgb.latenciesMs.length))];
  return { pgb, pgbenchMachineS, pgbP95 };
}

/** The printed report. */
function reportLines(r: {
  options: BenchOptions;
  before: ReturnType<typeof machine>;
  after: ReturnType<typeof machine>;
  k6Name: string;
  edgeBatches: Histogram;
  ledgerBatches: Histogram;
  ledgerCalls: number;
  e2ePerSecond: number;
  peakCompleted: number;
  windowEvents: number;
  windowSeconds: number;
  peak: Trend | undefined;
  rateAtP99: RateAtP99 | undefined;
  batch: BatchPeak | undefined;
  steady: Trend | undefined;
  replay: Trend | undefined;
  consoleReads: Trend | undefined;
  scenarios: Array<{ name: string; count: number; failed: number; checksFailed: number }>;
  thresholdsFailed: string[];
  pgb: Side;
  pgbP95: number | undefined;
  pgbAlso: { protocol: PgbenchProtocol; side: Side } | undefined;
  othersCpu: { peakWindow: number; pgbench: number; peakWindowBusy: number; pgbenchBusy: number };
  ratio: number;
  peaks: Record<string, number>;
  cpuPerEvent: Record<string, number>;
  syscallsPerEvent: Record<string, { reads: number; writes: number }>;
  pgbenchCpuPerDecision: Record<string, number>;
}): string[] {
  const { options, before, after, edgeBatches, ledgerBatches, e2ePerSecond, peakCompleted, windowEvents } = r;
  const { rateAtP99, batch } = r;
  const { windowSeconds, peak, steady, replay, consoleReads, scenarios, thresholdsFailed, pgb, pgbP95 } = r;
  const { othersCpu, ratio, peaks, cpuPerEvent, syscallsPerEvent, pgbenchCpuPerDecision } = r;
  const k6 = r.k6Name;
  const f = (n: number | undefined, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const t = (x: Trend | undefined) => (x ? `${f(x.p50, 1)} / ${f(x.p95, 1)} / ${f(x.p99, 1)} ms` : '-');
  return [
    '',
    `npm run bench: ${before.cpus} x ${before.cpuModel}, ${f(before.memoryGiB, 1)} GiB; load average ${f(before.loadAverage1m, 2)} before, ${f(after.loadAverage1m, 2)} after`,
    `service: ${options.mode === 'programs' ? 'five programs as separate processes' : 'all-in-one process'}, ledger pool ${options.pool}${Object.entries(
      options.serviceEnv,
    )
      .map(([k, v]) => `, ${k}=${v}`)
      .join(
        '',
      )}; ${k6}; PostgreSQL ${options.durability === 'durable' ? 'durable (fsync, synchronous_commit on)' : 'fsync, synchronous_commit off'}`,
    `batches: edge ${edgeBatches.count} RecordEvents requests, ${f(edgeBatches.sum / Math.max(1, edgeBatches.count), 2)} events each; ledger ${r.ledgerCalls} record_events calls, ${f(ledgerBatches.sum / Math.max(1, r.ledgerCalls), 2)} events each, ${ledgerBatches.count} key batches, ${f(ledgerBatches.sum / Math.max(1, ledgerBatches.count), 2)} events each (key batches, cumulative by size: ${Object.entries(
      ledgerBatches.cumulativeBuckets,
    )
      .map(([le, n]) => `<=${le}: ${n}`)
      .join(', ')})`,
    '',
    `END TO END (k6 peak phase: ${options.peakRate === 'closed' ? `a closed loop of ${options.peakVus} in flight` : `${options.peakRate}/s offered, at most ${options.peakVus} in flight`}, ${options.peakDuration})`,
    `  events per second:             ${f(e2ePerSecond)}   (${peakCompleted} completed; ${f(windowEvents / windowSeconds)}/s stored in the measured window)`,
    `  latency p50 / p95 / p99:       ${t(peak)}   (at saturation: queueing of ${options.peakVus} in flight)`,
    ...(rateAtP99
      ? [
          `RATE AT P99 <= ${rateAtP99.boundMs} MS (step search, open model, ${rateAtP99.stepSeconds} s a step; the service's after ${STEP_WARMUP} of warm-up; ${rateAtP99.stepTries === 1 ? 'one try a rate' : `a rate holds when ${triesToHold(rateAtP99.stepTries)} of its ${rateAtP99.stepTries} tries do`})`,
          ...(['service', 'pgbench'] as const).map(
            (side) =>
              `  ${side} steps:${' '.repeat(17 - side.length)}${rateAtP99[side].rates
                .map((rate) => {
                  const tries = rateAtP99[side].steps.filter((s) => s.offeredPerSecond === rate.offeredPerSecond);
                  if (tries.length === 1) {
                    return `${rate.offeredPerSecond}/s p99 ${f(tries[0]!.p99Ms, 1)} ms${rate.held ? '' : ' (not held)'}`;
                  }
                  const p99s = tries.map((s) => `${f(s.p99Ms, 1)}${s.held ? '' : ' (not held)'}`).join(', ');
                  return `${rate.offeredPerSecond}/s p99 ${p99s} ms: ${rate.held ? 'held' : 'not held'}`;
                })
                .join('; ')}`,
          ),
        ]
      : []),
    ...(batch
      ? [
          `BATCHES OF ${batch.size} (k6 closed loop of ${batch.vus} batch requests in flight to POST /api/game-sdk/v2/events/batch, ${batch.seconds} s)`,
          `  events per second:             ${f(batch.eventsPerSecond)}   (${f(batch.batchesPerSecond)} batches/s; ${batch.requests.count} requests, ${batch.requests.failed} failed, ${batch.requests.checksFailed} failed checks)`,
          `  batch latency p50 / p95 / p99: ${t(batch.latencyMs)}`,
          `  CPU per event:                 ${Object.entries(batch.cpuPerEventUs)
            .map(([name, us]) => `${name} ${f(us, 1)}`)
            .join(', ')} µs (${batch.windowEvents} events stored in the measured window)`,
          `  batches:                       edge ${f(batch.edgeEventsPerRequest, 2)} events per RecordEvents request, ledger ${f(batch.ledgerEventsPerCall, 2)} per call; the edge's system calls per event (reads / writes) ${f(batch.edgeSyscallsPerEvent?.reads, 3)} / ${f(batch.edgeSyscallsPerEvent?.writes, 3)}`,
        ]
      : []),
    `STEADY MIXED LOAD (full profile, ${options.duration}: ingest 200/s, replay 50/s, console 10/s)`,
    `  ingest p50 / p95 / p99:        ${t(steady)}`,
    `  replay p50 / p95 / p99:        ${t(replay)}`,
    `  console p50 / p95 / p99:       ${t(consoleReads)}`,
    `ERRORS`,
    ...scenarios.map(
      (s) =>
        `  ${s.name.padEnd(8)} ${String(s.count).padStart(8)} requests, ${s.failed} failed, ${s.checksFailed} failed checks`,
    ),
    `  thresholds failed: ${thresholdsFailed.length ? thresholdsFailed.join('; ') : 'none'}`,
    `PGBENCH (same SQL work as one decision, same database, -M ${options.pgbenchProtocol}, ${options.pgbenchClients} clients, ${options.pgbenchSeconds} s)`,
    `  decisions per second:          ${f(pgb.perSecond)}   (p50 / p95 / p99 ${f(pgb.p50Ms, 1)} / ${f(pgbP95, 1)} / ${f(pgb.p99Ms, 1)} ms; ${pgb.errors} failed)`,
    ...(r.pgbAlso
      ? [
          `  then -M ${r.pgbAlso.protocol}:            ${f(r.pgbAlso.side.perSecond)} decisions/s (p50 / p99 ${f(r.pgbAlso.side.p50Ms, 1)} / ${f(r.pgbAlso.side.p99Ms, 1)} ms; ${r.pgbAlso.side.errors} failed); end to end / it: ${f(e2ePerSecond / r.pgbAlso.side.perSecond, 2)}; CPU per decision ${Object.entries(
            r.pgbAlso.side.cpuS,
          )
            .map(([name, cpu]) => `${name} ${f((cpu * 1e6) / r.pgbAlso!.side.decisions)} µs`)
            .join(', ')}`,
        ]
      : []),
    '',
    `MACHINE: busy ${f(othersCpu.peakWindowBusy, 2)} of ${before.cpus} CPUs in the peak window (other processes ${f(othersCpu.peakWindow, 2)}), ` +
      `${f(othersCpu.pgbenchBusy, 2)} under pgbench (other processes ${f(othersCpu.pgbench, 2)})`,
    '',
    `RATIO end to end / pgbench:      ${f(ratio, 2)}   (target: 1.0 or better)`,
    ...(rateAtP99
      ? [
          `RATE at p99 <= ${rateAtP99.boundMs} ms: service ${f(rateAtP99.service.ratePerSecond)}/s, pgbench ${f(rateAtP99.pgbench.ratePerSecond)}/s, ratio ${f(rateAtP99.ratio, 2)}`,
        ]
      : []),
    ...(batch
      ? [
          `RATIO end to end, batches of ${batch.size} / pgbench: ${f(batch.eventsPerSecond / pgb.perSecond, 2)}`,
          `EDGE CPU PER EVENT, batches of ${batch.size}: ${['ingest', 'all-in-one']
            .filter((name) => batch.cpuPerEventUs[name] !== undefined)
            .map((name) => `${name} ${f(batch.cpuPerEventUs[name], 1)} µs`)
            .join(', ')} (target: 40 or less)`,
        ]
      : []),
    '',
    `PEAK MEMORY (VmHWM): ${Object.entries(peaks)
      .map(([name, mib]) => `${name} ${f(mib)} MiB`)
      .join(', ')}`,
    `CPU PER EVENT in the peak window (${windowEvents} events in ${f(windowSeconds, 1)} s): ${Object.entries(
      cpuPerEvent,
    )
      .map(([name, us]) => `${name} ${f(us)} µs`)
      .join(', ')}; total ${f(Object.values(cpuPerEvent).reduce((a, b) => a + b, 0))} µs`,
    `SYSTEM CALLS PER EVENT (reads / writes): ${Object.entries(syscallsPerEvent)
      .map(([name, io]) => `${name} ${f(io.reads, 2)} / ${f(io.writes, 2)}`)
      .join(', ')}`,
    `CPU PER DECISION under pgbench: ${Object.entries(pgbenchCpuPerDecision)
      .map(([name, us]) => `${name} ${f(us)} µs`)
      .join(', ')}`,
    '',
  ];
}

async function main(): Promise<void> {
  const options = readOptions();
  const k6 = ensureK6(log);
  await waitForQuietMachine(options);
  const before = machine();
  const rateLimit = 1_000_000; // the limiter counts every event but never refuses: every decision is an acceptance
  const resultsDir = resolve('load/results/bench');
  const runDir = mkdtempSync(join(tmpdir(), 'bench-'));
  if (options.cpuProfile) mkdirSync(options.cpuProfile, { recursive: true });
  const profiled = options.mode === 'all-in-one' ? ['all-in-one'] : ['ingest', 'ledger'];
  log(
    `${k6Version(k6)}; ${options.mode === 'programs' ? 'five programs as separate processes' : 'the all-in-one process'} ` +
      `on real PostgreSQL (${options.durability === 'durable' ? 'durable' : 'fsync off'}) and NATS; load average ${before.loadAverage1m.toFixed(2)}`,
  );
  const { system, k6Env } = await prepare(
    { profile: 'full', mode: options.mode, duration: options.duration, rateLimit, resultsDir },
    { DATABASE_POOL_MAX: String(options.pool), ...options.serviceEnv },
    options.cpuProfile ? { dir: options.cpuProfile, programs: profiled } : undefined,
    options.durability === 'durable',
  );
  const stop = () => system.stop();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the service`);
      void stop().finally(() => process.exit(130));
    });
  }
  try {
    // The peak window: from the peak scenario's start (steady duration + 10 s graceful stop after setup ends) plus
    // 3 s of ramp, to 1 s before its end. CPU of every process and of the database's backends is read at both ends.
    const steadyS = seconds(options.duration) + 10;
    const peakS = seconds(options.peakDuration);
    const windowStartS = steadyS + 3;
    const windowEndS = steadyS + peakS - 1;
    const sampler = windowSampler(system, windowStartS * 1000, windowEndS * 1000);
    const k6Result = await runK6(
      k6,
      {
        ...k6Env,
        PEAK_RATE: String(options.peakRate),
        PEAK_DURATION: options.peakDuration,
        PEAK_VUS: String(options.peakVus),
      },
      { resultsDir, profile: 'full', onLogLine: sampler.onLogLine, onStart: sampler.onStart },
    );
    const window = sampler.finish();
    const summary = k6Result.summary;
    if (!summary) throw new Error(`k6 wrote no summary (exit ${k6Result.exitCode})`);
    const peakRequests = requests(summary, 'peak');
    const peakCompleted = peakRequests.count - peakRequests.failed;
    const e2ePerSecond = peakCompleted / peakS;
    const windowEvents = window ? await countEvents(system.databaseUrl, window.from, window.to) : 0;
    const windowSeconds = window ? (window.to.getTime() - window.from.getTime()) / 1000 : Number.NaN;
    // pgbench's targets: the games and players of this run's setup.
    const list = await targets(system.databaseUrl);
    if (list.length === 0) throw new Error('no linked players found: k6 setup() did not link any');
    // Batch sizes over the whole run (steady and peak phases): the edge's RecordEvents requests, the ledger's calls
    // of ledger.record_events.
    const runBatches = await batchHistograms(system.urls);
    const { edge: edgeBatches, ledger: ledgerBatches } = runBatches;

    // The later k6 runs reuse this run's fixtures (its setup_data): no setup of their own.
    const setupFile = join(runDir, 'setup.json');
    writeFileSync(setupFile, JSON.stringify(summary.setup_data));
    const batch =
      seconds(options.batchDuration) > 0
        ? await runBatchPeak({
            k6,
            k6Env,
            resultsDir,
            setupFile,
            duration: options.batchDuration,
            vus: options.batchVus,
            system,
          })
        : undefined;
    // pgbench on the same database, the same decision (the single-event function, installed for it).
    await installSingleEventFunction(system.databaseUrl);
    const pgbenchSide = (protocol: typeof options.pgbenchProtocol) =>
      runPgbenchSide({
        url: system.databaseUrl,
        database: system.databaseName,
        script: join(runDir, 'decision.sql'),
        scriptText: pgbenchScript(list, rateLimit),
        clients: options.pgbenchClients,
        threads: Math.min(options.pgbenchClients, before.cpus || 2),
        seconds: options.pgbenchSeconds,
        dir: runDir,
        protocol,
      });
    const { pgb, pgbenchMachineS, pgbP95 } = await pgbenchSide(options.pgbenchProtocol);
    const pgbAlso = options.pgbenchAlso
      ? { protocol: options.pgbenchAlso, side: (await pgbenchSide(options.pgbenchAlso)).pgb }
      : undefined;
    // The rates at p99 <= P99_BOUND_MS, the two searches' tries in turn. The service's from 40 % of its closed-loop
    // peak (its p99 at half the peak was over 50 ms on 2026-11-28); pgbench's with `pgbench -R <rate>` (its latencies
    // count from each transaction's scheduled start, so a queue behind the schedule counts, as k6's open model's does),
    // from 60 % of its ceiling.
    const stepsWanted = seconds(options.stepDuration) > 0;
    // pgbench's -T takes whole seconds: its steps last the service's step rounded, at least 1 s.
    const pgbenchStepS = Math.max(1, Math.round(seconds(options.stepDuration)));
    const searchOptions = { maxSteps: options.steps, tries: options.stepTries, log };
    const serviceSearch = new StepSearch('service', 0.4 * e2ePerSecond, searchOptions);
    const pgbenchSearch = new StepSearch('pgbench', 0.6 * pgb.perSecond, searchOptions);
    if (stepsWanted) {
      await interleavedSearches([
        {
          search: serviceSearch,
          probe: (rate) => serviceStep({ k6, k6Env, resultsDir, setupFile, stepDuration: options.stepDuration }, rate),
        },
        {
          search: pgbenchSearch,
          probe: async (rate) => {
            const side = await runPgbench({
              url: system.databaseUrl,
              database: system.databaseName,
              script: join(runDir, 'decision.sql'),
              clients: options.pgbenchClients,
              threads: Math.min(options.pgbenchClients, before.cpus || 2),
              seconds: pgbenchStepS,
              defines: {},
              dir: runDir,
              measured: true,
              protocol: options.pgbenchProtocol,
              rate,
            });
            return held(
              {
                offeredPerSecond: rate,
                completedPerSecond: side.perSecond,
                p50Ms: side.p50Ms,
                p99Ms: side.p99Ms,
                failed: side.errors,
                dropped: 0,
              },
              pgbenchStepS,
              'poisson',
            );
          },
        },
      ]);
    }
    const serviceRate = stepsWanted ? serviceSearch.result : undefined;
    const pgbenchRate = stepsWanted ? pgbenchSearch.result : undefined;
    const rateAtP99 =
      serviceRate && pgbenchRate
        ? {
            boundMs: P99_BOUND_MS,
            stepSeconds: seconds(options.stepDuration),
            stepTries: options.stepTries,
            service: serviceRate,
            pgbench: pgbenchRate,
            ratio: pgbenchRate.ratePerSecond > 0 ? serviceRate.ratePerSecond / pgbenchRate.ratePerSecond : Number.NaN,
          }
        : undefined;
    // Events the edge handled over the whole run (the profiles cover it all): for the stage split in µs per event.
    const edgeEventsAll = options.cpuProfile ? (await batchHistograms(system.urls)).edge.sum : 0;
    const peaks = { ...system.peakRssMiB(), k6: k6Result.peakRssMiB };
    const after = machine();
    await stop();

    const ratio = e2ePerSecond / pgb.perSecond;
    const steady = trend(summary, 'http_req_duration{scenario:ingest}');
    const replay = trend(summary, 'http_req_duration{scenario:replay}');
    const consoleReads = trend(summary, 'http_req_duration{scenario:console}');
    const peak = trend(summary, 'http_req_duration{scenario:peak}');
    const perEventUs = (cpuS: number, events: number) => (cpuS * 1e6) / events;
    const cpuPerEvent: Record<string, number> = {};
    if (window && windowEvents > 0) {
      for (const [name, cpu] of Object.entries(window.cpuS)) cpuPerEvent[name] = perEventUs(cpu, windowEvents);
      cpuPerEvent.postgres = perEventUs(window.postgresS, windowEvents);
      cpuPerEvent.k6 = perEventUs(window.k6CpuS, windowEvents);
    }
    // How shared the machine was: CPU used by processes that are not this run's, per second, in each measured window.
    const ownPeakS = window
      ? Object.values(window.cpuS).reduce((a, b) => a + b, 0) + window.postgresS + window.k6CpuS
      : Number.NaN;
    const othersCpu = {
      peakWindow: window ? (window.machineS - ownPeakS) / windowSeconds : Number.NaN,
      pgbench: (pgbenchMachineS - Object.values(pgb.cpuS).reduce((a, b) => a + b, 0)) / pgb.seconds,
      peakWindowBusy: window ? window.machineS / windowSeconds : Number.NaN,
      pgbenchBusy: pgbenchMachineS / pgb.seconds,
    };
    // Read and write system calls per event of the processes on the event's path.
    const syscallsPerEvent = Object.fromEntries(
      Object.entries(window?.syscalls ?? {})
        .filter(([name]) => ['ingest', 'ledger', 'all-in-one', 'nats-server'].includes(name))
        .map(([name, io]) => [name, { reads: io.reads / windowEvents, writes: io.writes / windowEvents }]),
    );
    const pgbenchCpuPerDecision = Object.fromEntries(
      Object.entries(pgb.cpuS).map(([name, cpu]) => [name, perEventUs(cpu, pgb.decisions)]),
    );
    const scenarios = ['ingest', 'replay', 'console', 'peak'].map((name) => ({ name, ...requests(summary, name) }));
    const thresholdsFailed = Object.entries(summary.metrics ?? {}).flatMap(([name, m]) =>
      Object.entries((m.thresholds ?? {}) as Record<string, { ok: boolean }>)
        .filter(([, r]) => !r.ok)
        .map(([expr]) => `${name} ${expr}`),
    );
    const figures = {
      measuredAt: new Date().toISOString(),
      machine: { ...before, loadAverage1mAfter: after.loadAverage1m },
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      k6: k6Version(k6),
      options,
      endToEnd: {
        eventsPerSecond: e2ePerSecond,
        peakCompleted,
        peakSeconds: peakS,
        peakLatencyMs: peak,
        windowEventsPerSecond: windowEvents / windowSeconds,
      },
      steadyLatencyMs: { ingest: steady, replay, console: consoleReads },
      requests: scenarios,
      droppedIterations: summary.metrics?.dropped_iterations?.values?.count ?? 0,
      thresholdsFailed,
      pgbench: { ...pgb, latenciesMs: undefined, p95Ms: pgbP95, clients: options.pgbenchClients, targets: list.length },
      pgbenchAlso: pgbAlso && { protocol: pgbAlso.protocol, ...pgbAlso.side, latenciesMs: undefined },
      ratio,
      peakRssMiB: peaks,
      cpuPerEventUs: { endToEnd: cpuPerEvent, pgbench: pgbenchCpuPerDecision },
      syscallsPerEvent,
      otherProcessesCpuPerSecond: othersCpu,
    };

    Object.assign(figures, {
      edgeBatches,
      ledgerBatches,
      ledgerCalls: ledgerCalls(runBatches),
      rateAtP99,
      batches: batch && { ...batch, ratio: batch.eventsPerSecond / pgb.perSecond },
      durability: options.durability,
    });
    const out = reportLines({
      options,
      before,
      after,
      k6Name: k6Version(k6),
      edgeBatches,
      ledgerBatches,
      ledgerCalls: ledgerCalls(runBatches),
      e2ePerSecond,
      peakCompleted,
      windowEvents,
      windowSeconds,
      peak,
      rateAtP99,
      batch,
      steady,
      replay,
      consoleReads,
      scenarios,
      thresholdsFailed,
      pgb,
      pgbP95,
      pgbAlso,
      othersCpu,
      ratio,
      peaks,
      cpuPerEvent,
      syscallsPerEvent,
      pgbenchCpuPerDecision,
    });
    process.stdout.write(out.join('\n'));
    if (options.cpuProfile) {
      for (const file of readdirSync(options.cpuProfile).filter((n) => n.endsWith('.cpuprofile'))) {
        const name = file.split('.')[0]!;
        if (!profiled.includes(name)) continue;
        const profile = JSON.parse(readFileSync(join(options.cpuProfile, file), 'utf8'));
        process.stdout.write(`\nCPU PROFILE ${file}\n${summarizeCpuProfile(profile, 15)}\n`);
        // The edge's stages (load/lib/cpuprofile.ts EDGE_STAGES): where its µs per event go.
        if (name === 'ingest' || name === 'all-in-one') {
          process.stdout.write(`${summarizeStages(profile, edgeEventsAll || undefined)}\n`);
        }
      }
    }
    if (options.json) writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    await stop();
    rmSync(runDir, { recursive: true, force: true });
  }
}

await main();
