// npm run bench:fair (issue 44, item 3): one game's flood must not take another game's share. Game B posts events at
// a steady rate (open model) alone, then beside game A's flood (a closed loop of many requests always in flight, in a
// child process of its own so that its load does not delay B's clock); B's latency percentiles are printed for both,
// with their ratio, A's completed rate and the machine's load average. The five programs run as separate processes
// on real PostgreSQL (durable) and NATS, as in npm run bench. Figures in docs/reliability.md, "Fair ingest".
import { fork } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createFixtures, EVENT_TYPE, playerId } from './lib/fixtures.ts';
import { createLoadIdentity } from './lib/identity.ts';
import { percentile } from './lib/proc.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:fair -- [options]

Options:
  --flood N          game A's requests always in flight (closed loop)       default 1000
  --rate N           game B's events per second (open model)                default 50
  --duration S       measured seconds of each phase (B alone, B beside A)   default 20
  --warmup S         seconds of A's flood before B is measured beside it    default 5
  --key-in-flight N  INGEST_EVENT_KEY_IN_FLIGHT_MAX of the run              default: the program's default
  --json FILE        also write the figures as JSON to FILE
  --help             this text

Environment: DATABASE_URL / NATS_URL to use existing servers (as npm run load).
`;

const PLAYERS = 50;
const EVENTS_PATH = '/api/game-sdk/v2/events';
const log = (line: string) => process.stderr.write(`[fair] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Game g's secret key: a well-formed value made from g, its hash stored over the fixtures' one. */
const keyValue = (g: number) => `cr_sk_sandbox_${`bench-fair-${g}-`.padEnd(43, 'x')}`;

interface Post {
  status: number;
  ms: number;
}

/** One event of game g, a random player, occurring now; resolves with its status and latency. */
function post(agent: http.Agent, url: URL, g: number): Promise<Post> {
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
          Authorization: `Bearer ${keyValue(g)}`,
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

/** The flood (child process): `concurrency` requests of game 1 always in flight until told to stop. */
async function flood(url: string, concurrency: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const statuses: Record<string, number> = {};
  let stopping = false;
  let started = 0;
  let completed = 0;
  process.on('message', (message) => {
    if (message === 'measure') {
      started = performance.now();
      completed = 0;
      for (const key of Object.keys(statuses)) delete statuses[key];
    }
    if (message === 'stop') stopping = true;
  });
  const loop = async () => {
    while (!stopping) {
      const { status } = await post(agent, target, 1);
      completed++;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  process.send?.({ rate: completed / seconds, completed, statuses });
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
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
    statuses,
  };
}

/** One figure of a program's /metrics (the first sample of `name`), NaN when absent or unreachable. */
async function metric(url: string, name: string): Promise<number> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

/** Samples the edge's and the ledger's waiting events every second; `stop` answers their maxima. */
function sampleQueues(ingestUrl: string, ledgerUrl: string) {
  let edgeMax = 0;
  let ledgerMax = 0;
  const timer = setInterval(() => {
    void metric(ingestUrl, 'ingest_event_queue_depth').then((v) => {
      if (v > edgeMax) edgeMax = v;
    });
    void metric(ledgerUrl, 'ledger_event_queue_depth').then((v) => {
      if (v > ledgerMax) ledgerMax = v;
    });
  }, 1_000);
  return {
    stop: () => {
      clearInterval(timer);
      return { edgeMax, ledgerMax };
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      flood: { type: 'string', default: '1000' },
      rate: { type: 'string', default: '50' },
      duration: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '5' },
      'key-in-flight': { type: 'string' },
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
  if (values['flood-url']) return flood(values['flood-url'], concurrency);
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
    await client.end();
    const url = system.urls.ingest;
    await quiet(url, rate, 2); // warm-up: connections, compiled paths

    const loadBefore = loadavg()[0]!;
    log(`B alone: ${rate}/s for ${durationS} s`);
    const alone = await quiet(url, rate, durationS);

    log(`A: ${concurrency} in flight; B beside it after ${warmupS} s`);
    const child = fork(new URL(import.meta.url).pathname, ['--flood-url', url, '--flood', String(concurrency)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const floodFigures = new Promise<{ rate: number; completed: number; statuses: Record<string, number> }>((resolve) =>
      child.once('message', (m) => resolve(m as never)),
    );
    await sleep(warmupS * 1000);
    child.send('measure');
    const sampler = sampleQueues(system.urls.ingest, system.urls.ledger);
    const beside = await quiet(url, rate, durationS);
    const queues = sampler.stop();
    const loadBeside = loadavg()[0]!;
    child.send('stop');
    const a = await floodFigures;
    // The IPC channel keeps both processes alive: close it and wait for the flood's process to end.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    child.kill();
    await exited;

    const ratio = beside.p99Ms / alone.p99Ms;
    const figures = { flood: concurrency, rate, durationS, alone, beside, a, ratio, loadBefore, loadBeside, queues };
    const ms = (v: number) => v.toFixed(1);
    process.stdout.write(
      [
        `B alone         (${rate}/s): p50 ${ms(alone.p50Ms)} ms, p99 ${ms(alone.p99Ms)} ms, max ${ms(alone.maxMs)} ms, statuses ${JSON.stringify(alone.statuses)}`,
        `B beside A      (${rate}/s): p50 ${ms(beside.p50Ms)} ms, p99 ${ms(beside.p99Ms)} ms, max ${ms(beside.maxMs)} ms, statuses ${JSON.stringify(beside.statuses)}`,
        `A (${concurrency} in flight): ${a.rate.toFixed(0)} events/s completed, statuses ${JSON.stringify(a.statuses)}`,
        `RATIO B p99 beside A / alone: ${ratio.toFixed(2)} (target <= 2)`,
        `queues beside A (max of 1 s samples): edge ${queues.edgeMax}, ledger ${queues.ledgerMax} events waiting`,
        `load average (1 min): ${loadBefore.toFixed(2)} before, ${loadBeside.toFixed(2)} at the end of the flood`,
        '',
      ].join('\n'),
    );
    if (values.json) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
    }
  } finally {
    await system.stop();
  }
}

await main();
