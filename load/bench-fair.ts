// npm run bench:fair: one game's flood must not take another game's share. Game B posts events at
// a steady rate (open model) alone, then beside game A's flood (a closed loop of many requests always in flight, in a
// child process of its own so that its load does not delay B's clock); B's latency percentiles are printed for both,
// with their ratio, A's completed rate and the machine's load average. The five programs run as separate processes
// on real PostgreSQL (durable) and NATS, as in npm run bench. Then the database's own floor of the same comparison:
// B's decisions through pgbench (the same SQL) alone and beside A's as pgbench clients in a closed loop, and the
// ratio of the two ratios. Figures in docs/reliability.md, "Fair ingest".
import { fork } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createFixtures, EVENT_TYPE, playerId, RATE_LIMIT, recordEventsCallSql } from './lib/fixtures.ts';
import { createLoadIdentity } from './lib/identity.ts';
import { runPgbench, type Side } from './lib/pgbench.ts';
import { percentile } from './lib/proc.ts';
import { recordEventStatement } from './lib/single-event.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:fair -- [options]

Options:
  --flood N            game A's requests always in flight (closed loop)     default 1000
  --flood-rate N       game A at most N events per second (open model, up to --flood in flight):
                       B's ratio against the share of the service A takes   default: none (closed)
  --rate N             game B's events per second (open model)              default 50
  --duration S         measured seconds of each phase (B alone, B beside A) default 20
  --warmup S           seconds of A's flood before B is measured beside it  default 5
  --flood-keys N       game A's flood through N secret keys of its own, its requests spread over them
                       in turn (fairness is per game, not per key)            default 1
  --key-in-flight N    INGEST_EVENT_KEY_IN_FLIGHT_MAX of the run            default: the program's
  --flood-nice N       the flood's client process at this nice value (19: it runs when the service
                       leaves a CPU idle, as a client on other machines would not compete)  default 0
  --service-env K=V    one more environment variable for every program (repeatable), e.g.
                       INGEST_FLOOD_PACING_TARGET_PERCENT=0 (flood pacing off)
  --pgbench-clients N  the database's floor: A's flood as N pgbench clients, one decision per
                       transaction (0: no floor)   default: the CPUs (the ledger's default pool,
                       the connections by which a flood reaches the database)
  --pgbench-batch K    the floor's A: K events per transaction, one call of ledger.record_events
                       (1: the single-event statement)   default 1
  --pgbench-rate R     the floor's A at R decisions per second (\`service\`: the rate A completed
                       through the service in this run)   default: a closed loop
  --json FILE          also write the figures as JSON to FILE
  --help               this text

Environment: DATABASE_URL / NATS_URL to use existing servers (as npm run load).
`;

const PLAYERS = 50;
const EVENTS_PATH = '/api/game-sdk/v2/events';
const log = (line: string) => process.stderr.write(`[fair] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Game g's secret key k: a well-formed value made from g and k (key 0's hash is stored over the fixtures' one). */
const keyValue = (g: number, k = 0) => `cr_sk_sandbox_${`bench-fair-${g}-${k}-`.padEnd(43, 'x')}`;

interface Post {
  status: number;
  ms: number;
}

/** One event of game g, a random player, occurring now; resolves with its status and latency. */
function post(agent: http.Agent, url: URL, g: number, k = 0): Promise<Post> {
  const body = JSON.stringify({
    eventId: randomUUID(),
    playerId: playerId(g, 1 + Math.floor(Math.random() * PLAYERS)),
    eventType: EVENT_TYPE,
    occurredAt: new Date().toISOString(),
  });
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: EVENTS_PATH,
        method: 'POST',
        headers: {
          Authorization: `Bearer ${keyValue(g, k)}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    request.end(body);
  });
}

/**
 * The flood (child process): `concurrency` requests of game 1 always in flight until told to stop; with `rate`, each
 * request also waits for its turn of `rate` a second (open model, at most `concurrency` in flight).
 */
async function flood(url: string, concurrency: number, rate: number | undefined, keys: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const statuses: Record<string, number> = {};
  let stopping = false;
  let started = 0;
  let completed = 0;
  let cpuAtStart = process.cpuUsage();
  process.on('message', (message) => {
    if (message === 'measure') {
      started = performance.now();
      cpuAtStart = process.cpuUsage();
      completed = 0;
      for (const key of Object.keys(statuses)) delete statuses[key];
    }
    if (message === 'stop') stopping = true;
  });
  const begun = performance.now();
  let turns = 0;
  // Loop i posts with key i mod `keys`: the flood's requests spread over its keys (and their connections).
  const loop = async (_: unknown, i: number) => {
    while (!stopping) {
      if (rate !== undefined) {
        const wait = begun + (turns++ * 1000) / rate - performance.now();
        if (wait > 0) await sleep(wait);
        if (stopping) break;
      }
      const { status } = await post(agent, target, 1, i % keys);
      completed++;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  // The client's own CPU, cores: on this machine it competes with the service (on others it would not).
  const cores = (cpu.user + cpu.system) / 1e6 / seconds;
  process.send?.({ rate: completed / seconds, completed, statuses, cores });
  agent.destroy();
}

/** Game B (game 2) at `rate` events/s for `seconds`: each request's latency, ms, and the statuses. */
async function quiet(url: string, rate: number, seconds: number) {
  const agent = new http.Agent({ keepAlive: true });
  const target = new URL(url);
  const posts: Array<Promise<Post>> = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    posts.push(post(agent, target, 2));
  }
  const results = await Promise.all(posts);
  agent.destroy();
  const sorted = Float64Array.from(results.map((r) => r.ms)).sort();
  const statuses: Record<string, number> = {};
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    requests: results.length,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    /** Requests per latency band (ms): where the tail sits. */
    bands: latencyBands(sorted),
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
    statuses,
  };
}

const BAND_EDGES_MS = [5, 10, 20, 30, 40, 50, 80];

/** How many of the (sorted) latencies fall in each band: `<5`, `5-10`, ..., `>=80` ms. */
function latencyBands(sorted: Float64Array): Record<string, number> {
  const bands: Record<string, number> = {};
  let lower = 0;
  for (const edge of [...BAND_EDGES_MS, Number.POSITIVE_INFINITY]) {
    const label = edge === Number.POSITIVE_INFINITY ? `>=${lower}` : lower === 0 ? `<${edge}` : `${lower}-${edge}`;
    bands[label] = sorted.filter((ms) => ms >= lower && ms < edge).length;
    lower = edge;
  }
  return bands;
}

/** One figure of a program's /metrics (the first sample of `name`), NaN when absent or unreachable. */
/** One scrape of a program's /metrics: each sample's value by its name and labels as written (NaN if unreachable). */
async function scrape(url: string): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const at = line.lastIndexOf(' ');
      values.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
  } catch {
    // unreachable this second: no sample
  }
  return values;
}

/** The sum of a metric's samples over its labels (0 if absent). */
const total = (values: Map<string, number>, name: string) => {
  let sum = 0;
  for (const [key, value] of values) if (key === name || key.startsWith(`${name}{`)) sum += value;
  return sum;
};

/** What one program did in a phase, from its own metrics (prom-client's process and V8 figures). */
export interface ProgramPhase {
  /** CPU seconds per second of the phase (1 = one core). */
  cpu: number;
  /** Share of the phase in garbage collection pauses (V8's GC callbacks, all kinds). */
  gc: number;
  /** The longest event-loop delay seen in any second of the phase, ms. */
  loopMaxMs: number;
  /** The largest of the seconds' event-loop delay p99s, ms. */
  loopP99Ms: number;
  /** The most events waiting in the program's queue at a sample. */
  queueMax: number;
  /** The most requests waiting parsed in front of the program's app at a sample (ingest's per-key admission). */
  waitingMax: number;
  /** The most connections the admission left unread at a sample (their next requests in the kernel). */
  heldMax: number;
  /** The program's largest resident memory at a sample, MiB. */
  rssMaxMiB: number;
  /** Its batching histograms over the phase: observations per bucket (upper bound), by histogram. */
  histograms: Record<string, Record<string, number>>;
}

/** A histogram's observations over a phase per bucket (not cumulative), from two scrapes; empty buckets left out. */
function histogramDelta(before: Map<string, number>, after: Map<string, number>, name: string): Record<string, number> {
  const prefix = `${name}_bucket{le="`;
  const buckets: Array<[string, number]> = [];
  for (const [key, value] of after) {
    if (key.startsWith(prefix))
      buckets.push([key.slice(prefix.length, key.indexOf('"', prefix.length)), value - (before.get(key) ?? 0)]);
  }
  const result: Record<string, number> = {};
  let below = 0;
  for (const [le, cumulative] of buckets) {
    if (cumulative - below > 0) result[le] = cumulative - below;
    below = cumulative;
  }
  return result;
}

/**
 * Samples ingest's and the ledger's metrics every second over a phase: their CPU, GC share, event-loop delay (each
 * scrape resets prom-client's delay histogram, so each sample covers the second before it) and queue depth.
 */
function samplePrograms(urls: { ingest: string; ledger: string }) {
  const programs = [
    {
      name: 'ingest' as const,
      url: urls.ingest,
      queue: 'ingest_event_queue_depth',
      histograms: ['ingest_event_batch_size'],
    },
    {
      name: 'ledger' as const,
      url: urls.ledger,
      queue: 'ledger_event_queue_depth',
      histograms: ['ledger_event_batch_size', 'ledger_event_call_duration_seconds'],
    },
  ];
  const started = performance.now();
  const first = Promise.all(programs.map((p) => scrape(p.url)));
  const seen = programs.map(() => ({
    loopMaxMs: 0,
    loopP99Ms: 0,
    queueMax: 0,
    waitingMax: 0,
    heldMax: 0,
    rssMaxMiB: 0,
    last: new Map<string, number>(),
  }));
  const timer = setInterval(() => {
    programs.forEach((p, i) => {
      void scrape(p.url).then((values) => {
        if (values.size === 0) return;
        const s = seen[i]!;
        s.loopMaxMs = Math.max(s.loopMaxMs, 1000 * total(values, 'nodejs_eventloop_lag_max_seconds'));
        s.loopP99Ms = Math.max(s.loopP99Ms, 1000 * total(values, 'nodejs_eventloop_lag_p99_seconds'));
        s.queueMax = Math.max(s.queueMax, total(values, p.queue));
        s.waitingMax = Math.max(s.waitingMax, total(values, 'ingest_event_requests_waiting'));
        s.heldMax = Math.max(s.heldMax, total(values, 'ingest_event_connections_held'));
        s.rssMaxMiB = Math.max(s.rssMaxMiB, total(values, 'process_resident_memory_bytes') / 2 ** 20);
        s.last = values;
      });
    });
  }, 1_000);
  return {
    stop: async (): Promise<Record<'ingest' | 'ledger', ProgramPhase>> => {
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      const before = await first;
      const after = await Promise.all(programs.map((p) => scrape(p.url)));
      const delta = (i: number, name: string) => total(after[i]!, name) - total(before[i]!, name);
      const phase = (i: number): ProgramPhase => ({
        cpu: delta(i, 'process_cpu_seconds_total') / seconds,
        gc: delta(i, 'nodejs_gc_duration_seconds_sum') / seconds,
        loopMaxMs: seen[i]!.loopMaxMs,
        loopP99Ms: seen[i]!.loopP99Ms,
        queueMax: seen[i]!.queueMax,
        waitingMax: seen[i]!.waitingMax,
        heldMax: seen[i]!.heldMax,
        rssMaxMiB: seen[i]!.rssMaxMiB,
        histograms: Object.fromEntries(
          programs[i]!.histograms.map((name) => [name, histogramDelta(before[i]!, after[i]!, name)]),
        ),
      });
      return { ingest: phase(0), ledger: phase(1) };
    },
  };
}

const programLine = (name: string, p: ProgramPhase) =>
  `  ${name.padEnd(6)} CPU ${p.cpu.toFixed(2)} cores, GC ${(100 * p.gc).toFixed(1)} % of the time, ` +
  `event-loop delay worst p99 ${p.loopP99Ms.toFixed(1)} ms / max ${p.loopMaxMs.toFixed(1)} ms, queue max ${p.queueMax}, ` +
  `RSS max ${p.rssMaxMiB.toFixed(0)} MiB` +
  Object.entries(p.histograms)
    .map(
      ([histogram, buckets]) =>
        `\n    ${histogram} (observations per bucket, by upper bound): ${JSON.stringify(buckets)}`,
    )
    .join('');

/**
 * The pgbench script of K fresh decisions of game g in one call of ledger.record_events (one transaction): what the
 * service's flood becomes at the database, a key's batch of up to the edge's per-key bound in one call at a time.
 */
function pgbenchBatchScript(g: number, k: number): string {
  const hash = createHash('sha256').update(keyValue(g)).digest('hex');
  return recordEventsCallSql(k, {
    keys: `array_fill('\\x${hash}'::bytea, array[${k}])`,
    player: `'00000000-0000-4000-8000-' || lpad((${g} * 10000 + 1 + (random() * ${PLAYERS - 1})::int)::text, 12, '0')`,
  });
}

/**
 * The pgbench script of one fresh decision of game g (the single-event statement, one event per transaction, on
 * game g's key as this bench stores it and a random player of g).
 */
function pgbenchScript(g: number): string {
  const hash = createHash('sha256').update(keyValue(g)).digest('hex');
  return `\\set p random(1, ${PLAYERS})\n${recordEventStatement([
    `'\\x${hash}'::bytea`,
    'gen_random_uuid()',
    `('00000000-0000-4000-8000-' || lpad((${g} * 10000 + :p)::text, 12, '0'))::uuid`,
    `'${EVENT_TYPE}'`,
    '(extract(epoch from clock_timestamp()) * 1000)::bigint',
    `sha256(convert_to(gen_random_uuid()::text, 'UTF8'))`,
    'null',
    String(RATE_LIMIT),
  ])}\n`;
}

/**
 * The database's own floor of the same comparison: game B's decisions at `rate`/s through pgbench (open model, each
 * latency from its scheduled start) alone, then beside game A's decisions in a closed loop of `clients` pgbench
 * clients, on the same database and SQL. What B's p99 ratio is when nothing but PostgreSQL (its CPU and one WAL,
 * flushed for every commit) is shared.
 */
async function databaseFloor(run: {
  url: string;
  database: string;
  rate: number;
  seconds: number;
  warmupS: number;
  clients: number;
  /** Events of A per transaction (1: the single-event statement; more: one call of ledger.record_events). */
  batch: number;
  /** A's decisions per second (spread over its clients); undefined: a closed loop. */
  aRate: number | undefined;
}): Promise<{ alone: Side; beside: Side; a: Side }> {
  const dir = join(tmpdir(), `bench-fair-pgbench-${randomBytes(4).toString('hex')}`);
  const side = (
    name: string,
    g: number,
    options: { clients: number; seconds: number; rate?: number; batch?: number },
  ) => {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    const script = join(folder, 'script.sql');
    const batch = options.batch ?? 1;
    writeFileSync(script, batch === 1 ? pgbenchScript(g) : pgbenchBatchScript(g, batch));
    return runPgbench({
      url: run.url,
      database: run.database,
      script,
      clients: options.clients,
      threads: 1,
      seconds: options.seconds,
      defines: {},
      dir: folder,
      measured: true,
      ...(options.rate === undefined ? {} : { rate: options.rate }),
    });
  };
  const bClients = 4; // enough that B's schedule never waits for a client
  log(`database floor: pgbench B alone at ${run.rate}/s for ${run.seconds} s`);
  const alone = await side('alone', 2, { clients: bClients, seconds: run.seconds, rate: run.rate });
  log(
    `database floor: pgbench A, ${run.clients} clients of ${run.batch} events a call; B beside it after ${run.warmupS} s`,
  );
  const flood = side('flood', 1, {
    clients: run.clients,
    seconds: run.warmupS + run.seconds + 1,
    batch: run.batch,
    ...(run.aRate === undefined ? {} : { rate: run.aRate / run.batch }),
  });
  await sleep(run.warmupS * 1000);
  const beside = await side('beside', 2, { clients: bClients, seconds: run.seconds, rate: run.rate });
  return { alone, beside, a: await flood };
}

const optionalNumber = (value: string | undefined) => (value === undefined ? undefined : Number(value));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      flood: { type: 'string', default: '1000' },
      rate: { type: 'string', default: '50' },
      duration: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '5' },
      'key-in-flight': { type: 'string' },
      'flood-keys': { type: 'string', default: '1' },
      'flood-nice': { type: 'string', default: '0' },
      'pgbench-batch': { type: 'string', default: '1' },
      'pgbench-rate': { type: 'string' },
      'flood-rate': { type: 'string' },
      'service-env': { type: 'string', multiple: true, default: [] },
      'pgbench-clients': { type: 'string', default: String(availableParallelism()) },
      json: { type: 'string' },
      'flood-url': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const concurrency = Number(values.flood);
  const floodRate = values['flood-rate'] === undefined ? undefined : Number(values['flood-rate']);
  const floodKeys = Number(values['flood-keys']);
  if (!(Number.isInteger(floodKeys) && floodKeys >= 1)) throw new Error(`--flood-keys ${values['flood-keys']}`);
  if (values['flood-url']) return flood(values['flood-url'], concurrency, floodRate, floodKeys);
  const rate = Number(values.rate);
  const durationS = Number(values.duration);
  const warmupS = Number(values.warmup);

  const identity = await createLoadIdentity(randomBytes(4).toString('hex'), 1);
  const system = await startLoadSystem({
    mode: 'programs',
    env: {
      ...identity.env,
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
      EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
      ...(values['key-in-flight'] ? { INGEST_EVENT_KEY_IN_FLIGHT_MAX: values['key-in-flight'] } : {}),
      ...Object.fromEntries(
        (values['service-env'] ?? []).map((pair) => {
          const at = pair.indexOf('=');
          if (at <= 0) throw new Error(`--service-env ${pair}: expected K=V`);
          return [pair.slice(0, at), pair.slice(at + 1)];
        }),
      ),
    },
    logDir: join(tmpdir(), `bench-fair-${randomBytes(4).toString('hex')}`),
    log,
    durable: true,
  });
  try {
    await createFixtures(system.databaseUrl, { games: 2, players: PLAYERS });
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    for (const g of [1, 2]) {
      await client.query(`update ledger.keys set key_hash = $1 where game_id = $2`, [
        createHash('sha256').update(keyValue(g)).digest(),
        `00000000-0000-4000-9000-${String(g).padStart(12, '0')}`,
      ]);
    }
    // Game A's further keys (--flood-keys), each a secret key of game 1 of its own.
    for (let k = 1; k < floodKeys; k++) {
      await client.query(
        `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, key_hash)
         select gen_random_uuid(), id, organization_id, 'secret', $2, 'cr_sk_sandbox_bench', $1
         from ledger.games where id = '00000000-0000-4000-9000-000000000001'`,
        [createHash('sha256').update(keyValue(1, k)).digest(), `bench-${k}`],
      );
    }
    await client.end();
    const url = system.urls.ingest;
    await quiet(url, rate, 2); // warm-up: connections, compiled paths

    const loadBefore = loadavg()[0]!;
    log(`B alone: ${rate}/s for ${durationS} s`);
    const aloneSampler = samplePrograms(system.urls);
    const alone = await quiet(url, rate, durationS);
    const programsAlone = await aloneSampler.stop();

    log(`A: ${concurrency} in flight through ${floodKeys} key(s); B beside it after ${warmupS} s`);
    const floodArgs = ['--flood-url', url, '--flood', String(concurrency), '--flood-keys', String(floodKeys)];
    if (floodRate !== undefined) floodArgs.push('--flood-rate', String(floodRate));
    const child = fork(new URL(import.meta.url).pathname, floodArgs, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const floodNice = Number(values['flood-nice']);
    if (floodNice !== 0 && child.pid !== undefined) setPriority(child.pid, floodNice);
    const floodFigures = new Promise<{
      rate: number;
      completed: number;
      statuses: Record<string, number>;
      cores: number;
    }>((resolve) => child.once('message', (m) => resolve(m as never)));
    await sleep(warmupS * 1000);
    child.send('measure');
    const sampler = samplePrograms(system.urls);
    const beside = await quiet(url, rate, durationS);
    const programsBeside = await sampler.stop();
    const queues = {
      edgeMax: programsBeside.ingest.queueMax,
      edgeWaitingMax: programsBeside.ingest.waitingMax,
      edgeHeldMax: programsBeside.ingest.heldMax,
      ledgerMax: programsBeside.ledger.queueMax,
    };
    const loadBeside = loadavg()[0]!;
    child.send('stop');
    const a = await floodFigures;
    // The IPC channel keeps both processes alive: close it and wait for the flood's process to end.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    child.kill();
    await exited;

    const ratio = beside.p99Ms / alone.p99Ms;
    const pgbenchClients = Number(values['pgbench-clients']);
    const pgbenchBatch = Number(values['pgbench-batch']);
    const floor =
      pgbenchClients > 0
        ? await databaseFloor({
            url: system.databaseUrl,
            database: system.databaseName,
            rate,
            seconds: durationS,
            warmupS,
            clients: pgbenchClients,
            batch: pgbenchBatch,
            aRate: values['pgbench-rate'] === 'service' ? a.rate : optionalNumber(values['pgbench-rate']),
          })
        : undefined;
    const floorRatio = floor ? floor.beside.p99Ms / floor.alone.p99Ms : undefined;
    const side = (s: Side) => ({ decisions: s.decisions, perSecond: s.perSecond, p50Ms: s.p50Ms, p99Ms: s.p99Ms });
    const figures = {
      flood: concurrency,
      floodKeys,
      floodRate,
      floodNice,
      rate,
      durationS,
      alone,
      beside,
      a,
      ratio,
      loadBefore,
      loadBeside,
      queues,
      programs: { alone: programsAlone, beside: programsBeside },
      ...(floor && {
        floor: {
          clients: pgbenchClients,
          batch: pgbenchBatch,
          alone: side(floor.alone),
          beside: side(floor.beside),
          a: side(floor.a),
        },
        floorRatio,
      }),
    };
    const ms = (v: number) => v.toFixed(1);
    process.stdout.write(
      [
        `B alone         (${rate}/s): p50 ${ms(alone.p50Ms)} ms, p90 ${ms(alone.p90Ms)} ms, p99 ${ms(alone.p99Ms)} ms, max ${ms(alone.maxMs)} ms, statuses ${JSON.stringify(alone.statuses)}`,
        `  latency bands, ms: ${JSON.stringify(alone.bands)}`,
        `B beside A      (${rate}/s): p50 ${ms(beside.p50Ms)} ms, p90 ${ms(beside.p90Ms)} ms, p99 ${ms(beside.p99Ms)} ms, max ${ms(beside.maxMs)} ms, statuses ${JSON.stringify(beside.statuses)}`,
        `  latency bands, ms: ${JSON.stringify(beside.bands)}`,
        `A (${concurrency} in flight through ${floodKeys} key(s)${floodRate === undefined ? '' : `, at most ${floodRate}/s offered`}${floodNice === 0 ? '' : `, its client at nice ${floodNice}`}): ${a.rate.toFixed(0)} events/s completed, statuses ${JSON.stringify(a.statuses)}, its client ${a.cores.toFixed(2)} cores`,
        `RATIO B p99 beside A / alone: ${ratio.toFixed(2)} (target <= 2)`,
        `queues beside A (max of 1 s samples): edge ${queues.edgeMax} events (and ${queues.edgeWaitingMax} requests waiting parsed, ${queues.edgeHeldMax} connections held unread), ledger ${queues.ledgerMax} events waiting`,
        'the programs in the phase B alone:',
        programLine('ingest', programsAlone.ingest),
        programLine('ledger', programsAlone.ledger),
        'the programs in the phase B beside A:',
        programLine('ingest', programsBeside.ingest),
        programLine('ledger', programsBeside.ledger),
        `load average (1 min): ${loadBefore.toFixed(2)} before, ${loadBeside.toFixed(2)} at the end of the flood`,
        ...(floor && floorRatio !== undefined
          ? [
              `DATABASE FLOOR (pgbench of the same SQL, B one decision per transaction at ${rate}/s, A ${pgbenchClients} clients ${values['pgbench-rate'] === undefined ? 'in a closed loop' : `at ${values['pgbench-rate'] === 'service' ? `${a.rate.toFixed(0)}/s (the service's A)` : `${values['pgbench-rate']}/s`}`}, ${pgbenchBatch} decisions per transaction):`,
              `  B alone p50 ${ms(floor.alone.p50Ms)} ms, p99 ${ms(floor.alone.p99Ms)} ms; beside A p50 ${ms(floor.beside.p50Ms)} ms, p99 ${ms(floor.beside.p99Ms)} ms; A ${(floor.a.perSecond * pgbenchBatch).toFixed(0)} decisions/s`,
              `  latency bands beside A, ms: ${JSON.stringify(latencyBands(floor.beside.latenciesMs))}`,
              `RATIO B p99 beside A / alone, pgbench: ${floorRatio.toFixed(2)}; the service's / the database's: ${(ratio / floorRatio).toFixed(2)}`,
            ]
          : []),
        '',
      ].join('\n'),
    );
    if (values.json) {
      writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
    }
  } finally {
    await system.stop();
  }
}

await main();
