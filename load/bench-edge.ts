// npm run bench:edge: the edge's CPU per event in batch mode, a figure that does not need a quiet
// machine. The five programs run as separate processes on real PostgreSQL and NATS (as npm run bench); a closed loop
// of --in-flight batch requests of --batch-size fresh events (one game each, the k6 batch scenario's bodies) posts
// --batches batches to POST /api/game-sdk/v2/events/batch after --warmup ones, and the ingest process's CPU time
// (user + system, /proc/<pid>/stat) over the measured batches is divided by their events. CPU time, not wall time:
// a busy machine stretches the run but not, to first order, what ingest spends per event. With --cpu-prof DIR ingest
// and the ledger run under node --cpu-prof and the profiles' top functions are printed. The ledger's CPU per event
// beside the edge is printed too (what a batch costs behind the edge). Figures in docs/benchmarks.md, "The edge's
// CPU per event".
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type CpuProfile, summarizeCpuProfile, summarizeStages } from './lib/cpuprofile.ts';
import { createFixtures, EVENT_TYPE, playerId } from './lib/fixtures.ts';
import { createLoadIdentity } from './lib/identity.ts';
import { cpuSecondsSplit } from './lib/proc.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:edge -- [options]

Options:
  --batches N      measured batch requests                         default 2000
  --warmup N       batch requests before the measurement             default 500
  --batch-size N   events per batch request                          default 20
  --in-flight N    batch requests in flight (closed loop)            default 8
  --games N        games (a batch is one game's, games in turn)      default 8
  --cpu-prof DIR   run ingest and the ledger with node --cpu-prof, profiles in DIR, their top functions printed
  --json FILE      also write the figures as JSON to FILE
  --help           this text

Environment: DATABASE_URL / NATS_URL to use existing servers (as npm run load).
`;

const PLAYERS = 50;
const BATCH_PATH = '/api/game-sdk/v2/events/batch';
const log = (line: string) => process.stderr.write(`[edge] ${line}\n`);

/** Game g's secret key: a well-formed value made from g, its hash stored over the fixtures' one. */
const keyValue = (g: number) => `cr_sk_sandbox_${`bench-edge-${g}-`.padEnd(43, 'x')}`;

/** One batch of game g's fresh events (the k6 batch scenario's body); resolves with the status. */
function postBatch(agent: http.Agent, url: URL, g: number, size: number, iteration: number): Promise<number> {
  const events = [];
  for (let i = 0; i < size; i++) {
    events.push({
      eventId: randomUUID(),
      playerId: playerId(g, 1 + Math.floor(Math.random() * PLAYERS)),
      eventType: EVENT_TYPE,
      occurredAt: new Date().toISOString(),
      metadata: { source: 'bench-edge', iteration, item: i },
    });
  }
  const body = JSON.stringify({ events });
  return new Promise((resolve) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: BATCH_PATH,
        method: 'POST',
        headers: {
          Authorization: `Bearer ${keyValue(g)}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          if (status !== 200) {
            resolve(status);
            return;
          }
          // Every item must be a fresh decision: a figure over refusals would measure another path.
          const results = (
            JSON.parse(Buffer.concat(chunks).toString()) as { data: { results: Array<{ status: number }> } }
          ).data.results;
          resolve(results.length === size && results.every((r) => r.status === 200) ? 200 : -1);
        });
      },
    );
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

/** `count` batches in a closed loop of `inFlight`; the statuses that were not 200, counted. */
async function run(url: URL, options: { count: number; inFlight: number; games: number; size: number }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.inFlight });
  const failures: Record<string, number> = {};
  let next = 0;
  const loop = async () => {
    while (next < options.count) {
      const iteration = next++;
      const status = await postBatch(agent, url, 1 + (iteration % options.games), options.size, iteration);
      if (status !== 200) failures[status] = (failures[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, loop));
  agent.destroy();
  return failures;
}

/** The samples of a profile between `start` and `end` seconds before its end (ingest's stop), the others dropped. */
function measuredWindow(profile: CpuProfile, window: { start: number; end: number }): CpuProfile {
  const total = profile.timeDeltas.reduce((sum, d) => sum + d, 0);
  const fromUs = total - window.start * 1e6;
  const toUs = total - window.end * 1e6;
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < fromUs || at > toUs) return;
    samples.push(id);
    timeDeltas.push(delta);
  });
  return { nodes: profile.nodes, samples, timeDeltas };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      batches: { type: 'string', default: '2000' },
      warmup: { type: 'string', default: '500' },
      'batch-size': { type: 'string', default: '20' },
      'in-flight': { type: 'string', default: '8' },
      games: { type: 'string', default: '8' },
      'cpu-prof': { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const batches = Number(values.batches);
  const warmup = Number(values.warmup);
  const size = Number(values['batch-size']);
  const inFlight = Number(values['in-flight']);
  const games = Number(values.games);
  const profileDir = values['cpu-prof'];

  const identity = await createLoadIdentity(randomBytes(4).toString('hex'), 1);
  const system = await startLoadSystem({
    mode: 'programs',
    env: {
      ...identity.env,
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
      EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
    },
    logDir: join(tmpdir(), `bench-edge-${randomBytes(4).toString('hex')}`),
    ...(profileDir ? { cpuProfile: { dir: profileDir, programs: ['ingest', 'ledger'] } } : {}),
    log,
  });
  let figures: Record<string, unknown>;
  // The measured window, as seconds before ingest's stop (its profile ends there).
  let measuredStart = 0;
  let measuredEnd = 0;
  let windowBeforeStopS = { start: 0, end: 0 };
  try {
    await createFixtures(system.databaseUrl, { games, players: PLAYERS });
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    for (let g = 1; g <= games; g++) {
      await client.query(`update ledger.keys set key_hash = $1 where game_id = $2`, [
        createHash('sha256').update(keyValue(g)).digest(),
        `00000000-0000-4000-9000-${String(g).padStart(12, '0')}`,
      ]);
    }
    await client.end();
    const ingest = system.processes.find((p) => p.name === 'ingest');
    const ledger = system.processes.find((p) => p.name === 'ledger');
    if (!ingest || !ledger) throw new Error('no ingest or ledger process');
    const url = new URL(system.urls.ingest);

    log(`warm-up: ${warmup} batches of ${size}`);
    const warmupFailures = await run(url, { count: warmup, inFlight, games, size });
    if (Object.keys(warmupFailures).length > 0) throw new Error(`warm-up failures ${JSON.stringify(warmupFailures)}`);

    const loadBefore = loadavg()[0] as number;
    log(`measured: ${batches} batches of ${size}, ${inFlight} in flight`);
    const cpuBefore = cpuSecondsSplit(ingest.pid);
    const ledgerBefore = cpuSecondsSplit(ledger.pid);
    const started = performance.now();
    measuredStart = started;
    const failures = await run(url, { count: batches, inFlight, games, size });
    measuredEnd = performance.now();
    const seconds = (measuredEnd - started) / 1000;
    const cpuAfter = cpuSecondsSplit(ingest.pid);
    const ledgerAfter = cpuSecondsSplit(ledger.pid);
    const loadAfter = loadavg()[0] as number;
    const events = batches * size;
    const userUs = ((cpuAfter.user - cpuBefore.user) * 1e6) / events;
    const systemUs = ((cpuAfter.system - cpuBefore.system) * 1e6) / events;
    const ledgerUs = ((ledgerAfter.user - ledgerBefore.user + ledgerAfter.system - ledgerBefore.system) * 1e6) / events;
    figures = {
      batches,
      size,
      inFlight,
      games,
      events,
      seconds,
      eventsPerSecond: events / seconds,
      ingestCpuUsPerEvent: userUs + systemUs,
      ingestUserUsPerEvent: userUs,
      ingestSystemUsPerEvent: systemUs,
      ledgerCpuUsPerEvent: ledgerUs,
      failures,
      loadBefore,
      loadAfter,
    };
    process.stdout.write(
      [
        `EDGE CPU PER EVENT, batches of ${size}: ingest ${(userUs + systemUs).toFixed(1)} µs (user ${userUs.toFixed(1)}, system ${systemUs.toFixed(1)}; target: 40 or less)`,
        `the ledger beside it: ${ledgerUs.toFixed(1)} µs per event (user + system)`,
        `${batches} batches, ${inFlight} in flight, ${(events / seconds).toFixed(0)} events/s wall, failures ${JSON.stringify(failures)}`,
        `load average (1 min): ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after`,
        '',
      ].join('\n'),
    );
  } finally {
    const stopping = performance.now();
    windowBeforeStopS = { start: (stopping - measuredStart) / 1000, end: (stopping - measuredEnd) / 1000 };
    await system.stop();
  }
  // The profile's samples of the measured window only (not the start nor the warm-up): its stages in shares.
  const profiles = profileDir
    ? readdirSync(profileDir).filter((n) => n.startsWith('ingest.') || n.startsWith('ledger.'))
    : [];
  for (const file of profiles) {
    const profile = measuredWindow(
      JSON.parse(readFileSync(join(profileDir as string, file), 'utf8')),
      windowBeforeStopS,
    );
    // The stages are the edge's (load/lib/cpuprofile.ts); the ledger's profile is shown by its top functions.
    const stages = file.startsWith('ingest.') ? `\n${summarizeStages(profile)}` : '';
    process.stdout.write(`\nCPU PROFILE ${file}, the measured window\n${summarizeCpuProfile(profile, 30)}${stages}\n`);
  }
  if (values.json) writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
}

await main();
