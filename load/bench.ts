// npm run bench: the whole service end to end against the database's own ceiling, in one run on one machine.
//
//   1. starts PostgreSQL and nats-server (unless DATABASE_URL / NATS_URL are given) and the five programs as separate
//      processes (or the all-in-one process with --mode all-in-one), with run-made JWKS and an operator token;
//   2. runs the k6 full profile (load/ingest.js): setup() through the console and the link flow, the steady mixed
//      scenarios (ingest, replay, console reads) for --duration, then the peak phase: fresh events in a closed loop
//      of --peak-vus in flight (each sent when one is answered, as pgbench's clients do), for --peak-duration; the
//      completed rate is the end-to-end ceiling;
//   3. runs k6 again (setup, then fresh events only) at half of the measured peak, open model, for --half-duration:
//      the latency a game server sees at a load the service sustains;
//   4. runs pgbench on the same database with the same SQL work as one decision (the single-event record_event
//      statement, load/lib/single-event.ts, on the games and linked players k6 created), with --pgbench-clients clients (16 by default; the
//      ledger's pool is the machine's CPUs by default, --help);
//   5. prints events per second end to end, p50/p95/p99, errors, the pgbench ceiling and the ratio, each program's
//      peak memory, and the CPU each process spent per event during the peak.
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
  --half-duration D     then fresh events at half the measured peak (open model), for
                        the latency at a sustained load, after 5 s of warm-up at the same
                        rate (reported apart); 0s: skipped                             default 30s
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

/** The half phase's warm-up at the same rate before its measured part (k6's halfWarmup scenario). */
const HALF_WARMUP = '5s';

interface BenchOptions {
  duration: string;
  peakDuration: string;
  /** Events per second offered in the peak phase, or `closed` (a closed loop of peakVus). */
  peakRate: number | 'closed';
  peakVus: number;
  halfDuration: string;
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
      'half-duration': { type: 'string' },
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
    halfDuration: values['half-duration'] === '0s' ? '0s' : duration('half-duration', values['half-duration'], '30s'),
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

interface HalfPhase {
  offeredPerSecond: number;
  completedPerSecond: number;
  latencyMs: Trend | undefined;
  /** The warm-up before the measured phase (k6's halfWarmup scenario, HALF_WARMUP at the same rate): reported apart. */
  warmupLatencyMs: Trend | undefined;
  requests: { count: number; failed: number; checksFailed: number };
  droppedIterations: number;
  /** CPUs the machine kept busy meanwhile (all processes). */
  machineBusyCpus: number;
  /** Events per RecordEvents request, per key batch and per ledger.record_events call during the half phase alone. */
  edgeEventsPerBatch: number;
  ledgerEventsPerBatch: number;
  ledgerEventsPerCall: number;
  /** CPU µs per event of each process over the measured phase (as the peak window's), when both ends were read. */
  cpuPerEventUs: Record<string, number>;
  /** Each hop of an event's path: the share of its durations over 25 and 50 ms (the warm-up included). */
  slow: SlowShares;
}

/** The share of durations over 25 ms and over 50 ms, and how many there were, per hop of an event's path. */
type SlowShares = Record<SlowHop, { count: number; over25: number; over50: number }>;
type SlowHop = 'ingest answers' | 'RecordEvents round trips' | 'ledger calls';

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
 * A measured window (the peak's, the half phase's): `startMs` to `endMs` after the end of k6's setup(), the CPU of
 * every process, of k6 and of the database's backends, the machine's busy CPU and the processes' system calls, read at
 * both ends.
 */
function windowSampler(system: LoadSystem, startMs: number, endMs: number) {
  const processes = system.processes;
  let window: MeasuredWindow | undefined;
  let k6Pid: number | undefined;
  const timers: NodeJS.Timeout[] = [];
  const onLogLine = (line: string) => {
    if (!line.includes('setup: done')) return;
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

/** The sum of one histogram's series (of one program's /metrics) whose labels contain every `match` (`name="value"`). */
async function histogramWhere(url: string, name: string, match: string[]): Promise<Histogram> {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  const cumulativeBuckets: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const labels = m[1] as string;
    const le = /le="([^"]+)"/.exec(labels)?.[1];
    if (le === undefined || !match.every((label) => labels.includes(label))) continue;
    cumulativeBuckets[le] = (cumulativeBuckets[le] ?? 0) + Number(m[2]);
  }
  const count = cumulativeBuckets['+Inf'] ?? 0;
  return { count, sum: Number.NaN, cumulativeBuckets };
}

/** The durations of each hop of an event's path so far: ingest's answers, its RecordEvents requests, the ledger's calls. */
async function hopDurations(urls: LoadSystem['urls']): Promise<Record<SlowHop, Histogram>> {
  return {
    'ingest answers': await histogramWhere(urls.ingest, 'http_request_duration_seconds', [
      'method="POST"',
      'route="/api/game-sdk/v2/events"',
      'status="200"',
    ]),
    'RecordEvents round trips': await histogramWhere(urls.ingest, 'transport_request_duration_seconds', [
      'subject="rewards.v1.ledger.RecordEvents"',
      'outcome="ok"',
    ]),
    'ledger calls': await histogramWhere(urls.ledger, 'ledger_event_call_duration_seconds', []),
  };
}

/** The share of each hop's durations over 25 and 50 ms between two readings. */
function slowShares(after: Record<SlowHop, Histogram>, before: Record<SlowHop, Histogram>): SlowShares {
  const shares = {} as SlowShares;
  for (const hop of Object.keys(after) as SlowHop[]) {
    const d = (le: string) => (after[hop].cumulativeBuckets[le] ?? 0) - (before[hop].cumulativeBuckets[le] ?? 0);
    const count = d('+Inf');
    shares[hop] = {
      count,
      over25: count > 0 ? (count - d('0.025')) / count : Number.NaN,
      over50: count > 0 ? (count - d('0.05')) / count : Number.NaN,
    };
  }
  return shares;
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

/**
 * The latency at half of the measured peak: a second k6 run (its own setup), fresh events only, open model; skipped
 * when its duration is 0 or the peak too low.
 */
async function runHalfPhase(run: {
  k6: string;
  k6Env: Record<string, string>;
  resultsDir: string;
  halfDuration: string;
  e2ePerSecond: number;
  system: LoadSystem;
  before: BatchHistograms;
}): Promise<HalfPhase | undefined> {
  const halfS = seconds(run.halfDuration);
  if (halfS <= 0 || run.e2ePerSecond < 2) return undefined;
  const urls = run.system.urls;
  // Every process's CPU over the measured phase (after the warm-up, to 1 s before its end), as the peak window's.
  const warmupS = seconds(HALF_WARMUP);
  const sampler = windowSampler(run.system, warmupS * 1000, (warmupS + halfS - 1) * 1000);
  const hopsBefore = await hopDurations(urls);
  const halfRate = Math.floor(run.e2ePerSecond / 2);
  log(`half of the peak: ${halfRate} fresh events/s offered for ${run.halfDuration} (open model)`);
  // The machine's busy CPUs from the end of setup() to k6's exit (the scenario and its graceful stop).
  let busy0: { cpuS: number; at: number } | undefined;
  const halfResult = await runK6(
    run.k6,
    {
      ...run.k6Env,
      INGEST_RATE: '0',
      REPLAY_RATE: '0',
      CONSOLE_RATE: '0',
      BATCH_RATE: '0',
      PEAK_RATE: '0',
      HALF_RATE: String(halfRate),
      HALF_DURATION: run.halfDuration,
      HALF_WARMUP,
    },
    {
      resultsDir: run.resultsDir,
      profile: 'full',
      onLogLine: (line) => {
        if (line.includes('setup: done')) busy0 = { cpuS: machineBusySeconds(), at: performance.now() };
        sampler.onLogLine(line);
      },
      onStart: sampler.onStart,
    },
  );
  const busyCpus = busy0 ? (machineBusySeconds() - busy0.cpuS) / ((performance.now() - busy0.at) / 1000) : Number.NaN;
  const window = sampler.finish();
  const after = await batchHistograms(urls);
  const slow = slowShares(await hopDurations(urls), hopsBefore);
  const cpuPerEventUs: Record<string, number> = {};
  const windowEvents = window ? await countEvents(run.system.databaseUrl, window.from, window.to) : 0;
  if (window && windowEvents > 0) {
    for (const [name, cpu] of Object.entries(window.cpuS)) cpuPerEventUs[name] = (cpu * 1e6) / windowEvents;
    cpuPerEventUs.postgres = (window.postgresS * 1e6) / windowEvents;
    cpuPerEventUs.k6 = (window.k6CpuS * 1e6) / windowEvents;
  }
  const halfRequests = requests(halfResult.summary, 'half');
  const { edge, ledger } = run.before;
  return {
    offeredPerSecond: halfRate,
    completedPerSecond: (halfRequests.count - halfRequests.failed) / halfS,
    latencyMs: trend(halfResult.summary, 'http_req_duration{scenario:half}'),
    warmupLatencyMs: trend(halfResult.summary, 'http_req_duration{scenario:halfWarmup}'),
    requests: halfRequests,
    droppedIterations: halfResult.summary?.metrics?.dropped_iterations?.values?.count ?? 0,
    machineBusyCpus: busyCpus,
    edgeEventsPerBatch: (after.edge.sum - edge.sum) / Math.max(1, after.edge.count - edge.count),
    ledgerEventsPerBatch: (after.ledger.sum - ledger.sum) / Math.max(1, after.ledger.count - ledger.count),
    ledgerEventsPerCall: (after.ledger.sum - ledger.sum) / Math.max(1, ledgerCalls(after, run.before)),
    cpuPerEventUs,
    slow,
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
  half: HalfPhase | undefined;
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
  const { windowSeconds, peak, half, steady, replay, consoleReads, scenarios, thresholdsFailed, pgb, pgbP95 } = r;
  const { othersCpu, ratio, peaks, cpuPerEvent, syscallsPerEvent, pgbenchCpuPerDecision } = r;
  const k6 = r.k6Name;
  const f = (n: number | undefined, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const t = (x: Trend | undefined) => (x ? `${f(x.p50, 1)} / ${f(x.p95, 1)} / ${f(x.p99, 1)} ms` : '-');
  const pct = (share: number) => (Number.isNaN(share) ? '-' : `${(share * 100).toFixed(2)} %`);
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
    ...(half
      ? [
          `AT HALF THE PEAK (second k6 run: ${half.offeredPerSecond}/s offered, open model, ${options.halfDuration} after ${HALF_WARMUP} of warm-up)`,
          `  events per second:             ${f(half.completedPerSecond)}   (${half.requests.count} requests, ${half.requests.failed} failed, ${half.requests.checksFailed} failed checks, ${half.droppedIterations} dropped iterations)`,
          `  latency p50 / p95 / p99:       ${t(half.latencyMs)}   (target p99: 50 ms or less)`,
          `  its ${HALF_WARMUP} warm-up before:         ${t(half.warmupLatencyMs)}   (the same rate, right after setup(): not in the figures above)`,
          `  batches:                       edge ${f(half.edgeEventsPerBatch, 2)} events per request, ledger ${f(half.ledgerEventsPerCall, 2)} per call (${f(half.ledgerEventsPerBatch, 2)} per key batch); machine busy ${f(half.machineBusyCpus, 2)} of ${before.cpus} CPUs`,
          `  CPU per event:                 ${
            Object.entries(half.cpuPerEventUs)
              .filter(([, us]) => us >= 2)
              .map(([name, us]) => `${name} ${f(us)}`)
              .join(', ') || 'not measured'
          } µs (the peak's: below)`,
          `  over 25 / 50 ms:               ${Object.entries(half.slow)
            .map(([hop, s]) => `${hop} ${pct(s.over25)} / ${pct(s.over50)}`)
            .join('; ')} (warm-up included)`,
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
    `RATIO end to end / pgbench:      ${f(ratio, 2)}   (target: 0.90 or better, issue 30; 0.80 issue 17)`,
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
    // pgbench's targets: the games and players of this run's setup (before the half phase adds its own).
    const list = await targets(system.databaseUrl);
    if (list.length === 0) throw new Error('no linked players found: k6 setup() did not link any');
    // Batch sizes over the whole run (steady and peak phases): the edge's RecordEvents requests, the ledger's calls
    // of ledger.record_events.
    const runBatches = await batchHistograms(system.urls);
    const { edge: edgeBatches, ledger: ledgerBatches } = runBatches;

    // The latency at half of the measured peak: a second k6 run (its own setup), fresh events only, open model.
    const half = await runHalfPhase({
      k6,
      k6Env,
      resultsDir,
      halfDuration: options.halfDuration,
      e2ePerSecond,
      system,
      before: runBatches,
    });

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
      halfPeak: half,
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
      half,
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
