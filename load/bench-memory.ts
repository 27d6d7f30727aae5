import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { extraNodeOptions, PROGRAM_NODE_OPTIONS, startPrograms } from '../services/launcher/tools/processes.ts';
import { createLoadIdentity } from './lib/identity.ts';
import { ensureK6, runK6 } from './lib/k6.ts';
import { machine, rssMiB } from './lib/proc.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:memory -- [options]

Starts the five programs (real PostgreSQL and NATS) and then the all-in-one process on the embedded default
(PGlite, first start included), drives each with a short k6 full profile, and prints every process's RSS when idle,
its peak (VmHWM) and its RSS once idle again, in MiB.

Options:
  --mode M              programs, embedded or both                                   default both
  --idle S              seconds idle before reading the idle RSS (and again after the load)  default 10
  --duration D          k6 steady mixed scenarios                                     default 20s
  --peak-duration D     k6 peak phase (fresh events at capacity)                      default 20s
  --peak-rate N|closed  the peak phase: a closed loop of --peak-vus in flight, or N
                        events per second offered (npm run bench --help)               default closed
  --peak-vus N          requests in flight in the peak phase                           default 64
  --json FILE           also write the figures as JSON to FILE
  --help                this text

Environment: NODE_OPTIONS_EXTRA (more node flags for every program, e.g. to compare V8 settings), K6.
`;

const log = (line: string) => process.stderr.write(`[memory] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Figures {
  /** RSS once ready and idle, MiB. */
  idle: number;
  /** VmHWM over the whole run, MiB. */
  peak: number;
  /** RSS when idle again after the load, MiB. */
  after: number;
  /** The V8 heap at the /metrics sample of highest RSS during the load. */
  heap?: HeapAtPeak | undefined;
}

interface Tracked {
  name: string;
  pid: number;
  /** Where its /metrics answers (prom-client's process and V8 heap figures), when it has one. */
  url?: string;
}

/** What V8 and the process held at the sample of highest RSS: from /metrics, MiB. */
interface HeapAtPeak {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
}

async function heapSample(url: string): Promise<HeapAtPeak | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    const value = (name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]) / 1048576;
    return {
      rss: value('process_resident_memory_bytes'),
      heapTotal: value('nodejs_heap_size_total_bytes'),
      heapUsed: value('nodejs_heap_size_used_bytes'),
      external: value('nodejs_external_memory_bytes'),
    };
  } catch {
    return undefined;
  }
}

/**
 * The peak of short-lived children (the embedded database's new folder: template or initdb), sampled since their
 * VmHWM dies with them.
 */
function childPeaks(parent: number, into: Map<number, number>): void {
  try {
    for (const pid of readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/)) {
      if (!pid) continue;
      const peak = rssMiB(Number(pid));
      if (Number.isFinite(peak)) into.set(Number(pid), Math.max(into.get(Number(pid)) ?? 0, peak));
    }
  } catch {
    // gone
  }
}

async function measure(
  processes: Tracked[],
  k6Env: Record<string, string>,
  options: { idle: number; resultsDir: string; k6: string; env: Record<string, string> },
): Promise<Record<string, Figures>> {
  const peaks = new Map<string, number>();
  const readPeaks = () => {
    for (const p of processes) {
      const peak = rssMiB(p.pid);
      if (Number.isFinite(peak)) peaks.set(p.name, peak);
    }
  };
  const timer = setInterval(readPeaks, 500);
  const heaps = new Map<string, HeapAtPeak>();
  let sampling = false;
  const sampleHeaps = async () => {
    if (sampling) return;
    sampling = true;
    for (const p of processes) {
      const sample = p.url ? await heapSample(p.url) : undefined;
      if (sample && sample.rss > (heaps.get(p.name)?.rss ?? 0)) heaps.set(p.name, sample);
    }
    sampling = false;
  };
  const heapTimer = setInterval(() => void sampleHeaps(), 1000);
  try {
    await sleep(options.idle * 1000);
    const idle = Object.fromEntries(processes.map((p) => [p.name, rssMiB(p.pid, 'VmRSS')]));
    log(`idle RSS: ${processes.map((p) => `${p.name} ${idle[p.name]!.toFixed(0)}`).join(', ')} MiB`);
    const result = await runK6(
      options.k6,
      { ...k6Env, ...options.env },
      { resultsDir: options.resultsDir, profile: 'full' },
    );
    readPeaks();
    const events = result.summary?.metrics?.ingest_decisions?.values?.count;
    log(`k6 exited with ${result.exitCode}${events === undefined ? '' : `; ${events} decisions answered`}`);
    await sleep(options.idle * 1000);
    readPeaks();
    return Object.fromEntries(
      processes.map((p) => [
        p.name,
        {
          idle: idle[p.name]!,
          peak: peaks.get(p.name) ?? Number.NaN,
          after: rssMiB(p.pid, 'VmRSS'),
          heap: heaps.get(p.name),
        },
      ]),
    );
  } finally {
    clearInterval(timer);
    clearInterval(heapTimer);
  }
}

function k6EnvFor(
  urls: { gateway: string; ingest: string; links: string },
  identity: Awaited<ReturnType<typeof createLoadIdentity>>,
  adminToken: string,
): Record<string, string> {
  return {
    BASE_URL: urls.gateway,
    GATEWAY_URL: urls.gateway,
    INGEST_URL: urls.ingest,
    LINKS_URL: urls.links,
    DEV_TOKEN: identity.developerToken,
    NATIVE_TOKENS: JSON.stringify(identity.nativeSessions),
    ADMIN_TOKEN: adminToken,
    EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
  };
}

async function programs(options: Options, k6: string): Promise<Record<string, Figures>> {
  const identity = await createLoadIdentity(randomBytes(4).toString('hex'), 10);
  const adminToken = randomBytes(24).toString('hex');
  const resultsDir = join(options.resultsDir, 'programs');
  const system = await startLoadSystem({
    mode: 'programs',
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      NATIVE_ADMISSION_MODE: 'enforce',
      EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
    },
    logDir: join(resultsDir, 'logs'),
    log,
    durable: true,
  });
  try {
    const urls: Record<string, string> = system.urls;
    const processes = system.processes.map((p) => (urls[p.name] ? { ...p, url: urls[p.name] } : p));
    return await measure(processes, k6EnvFor(system.urls, identity, adminToken), {
      idle: options.idle,
      resultsDir,
      k6,
      env: options.k6Env,
    });
  } finally {
    await system.stop();
  }
}

async function embedded(options: Options, k6: string): Promise<Record<string, Figures>> {
  const identity = await createLoadIdentity(randomBytes(4).toString('hex'), 10);
  const adminToken = randomBytes(24).toString('hex');
  const resultsDir = join(options.resultsDir, 'embedded');
  mkdirSync(resultsDir, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'rewards-memory-'));
  // The launcher's process mode, not waiting: the sampler below watches the first start's child processes.
  const launched = await startPrograms({
    // As the image: the programs' modules come from Node's compile cache, without the type stripper.
    warmCompileCache: true,
    programs: { 'all-in-one': {} },
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      NATIVE_ADMISSION_MODE: 'enforce',
      EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
      DATA_DIR: dataDir,
    },
    logDir: resultsDir,
    nodeOptions: () => extraNodeOptions(),
    wait: 'none',
  });
  const replica = launched.get('all-in-one');
  const child = replica.child;
  const initdb = new Map<number, number>();
  const sampler = setInterval(() => childPeaks(child.pid!, initdb), 100);
  try {
    const started = Date.now();
    await replica.waitReady(300_000);
    clearInterval(sampler);
    log(
      `all-in-one ready in ${((Date.now() - started) / 1000).toFixed(1)} s (first start: ${initdb.size ? `new-folder child peak ${Math.max(...initdb.values()).toFixed(0)} MiB` : 'no child process'}, main ${rssMiB(child.pid!).toFixed(0)} MiB)`,
    );
    const url = replica.url;
    const figures = await measure(
      [{ name: 'all-in-one', pid: child.pid! }],
      k6EnvFor({ gateway: url, ingest: url, links: url }, identity, adminToken),
      {
        idle: options.idle,
        resultsDir,
        k6,
        env: options.k6Env,
      },
    );
    if (initdb.size) {
      figures['new-folder child (first start)'] = {
        idle: Number.NaN,
        peak: Math.max(...initdb.values()),
        after: Number.NaN,
      };
    }
    return figures;
  } finally {
    clearInterval(sampler);
    await launched.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Options {
  mode: 'programs' | 'embedded' | 'both';
  idle: number;
  k6Env: Record<string, string>;
  resultsDir: string;
  json: string | undefined;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string', default: 'both' },
      idle: { type: 'string', default: '10' },
      duration: { type: 'string', default: '20s' },
      'peak-duration': { type: 'string', default: '20s' },
      'peak-rate': { type: 'string', default: 'closed' },
      'peak-vus': { type: 'string', default: '64' },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const mode = values.mode as Options['mode'];
  if (!['programs', 'embedded', 'both'].includes(mode)) throw new Error('--mode must be programs, embedded or both');
  return {
    mode,
    idle: Number(values.idle),
    k6Env: {
      DURATION: values.duration!,
      PEAK_DURATION: values['peak-duration']!,
      PEAK_RATE: values['peak-rate']!,
      PEAK_VUS: values['peak-vus']!,
    },
    resultsDir: resolve('load/results/memory'),
    json: values.json,
  };
}

async function main(): Promise<void> {
  const options = readOptions();
  const k6 = ensureK6(log);
  const before = machine();
  const results: Record<string, Record<string, Figures>> = {};
  if (options.mode !== 'embedded') results.programs = await programs(options, k6);
  if (options.mode !== 'programs') results.embedded = await embedded(options, k6);
  const after = machine();
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
  const lines = [
    `npm run bench:memory: ${before.cpus} x ${before.cpuModel}; load average ${before.loadAverage1m.toFixed(2)} before, ${after.loadAverage1m.toFixed(2)} after`,
    `node flags: ${[...PROGRAM_NODE_OPTIONS, ...extraNodeOptions()].join(' ')}`,
    '',
    '| mode | process | idle RSS MiB | peak RSS MiB (VmHWM) | RSS after the load MiB | at the highest /metrics sample: RSS / V8 heap total / used / external MiB |',
    '|---|---|---|---|---|---|',
  ];
  for (const [mode, figures] of Object.entries(results)) {
    for (const [name, fig] of Object.entries(figures)) {
      const h = fig.heap;
      const heap = h ? `${f(h.rss)} / ${f(h.heapTotal)} / ${f(h.heapUsed)} / ${f(h.external)}` : '-';
      lines.push(`| ${mode} | ${name} | ${f(fig.idle)} | ${f(fig.peak)} | ${f(fig.after)} | ${heap} |`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (options.json) {
    writeFileSync(options.json, JSON.stringify({ machine: { before, after }, results }, null, 2));
  }
}

await main();
