// node load/http-floor.ts: the HTTP floor of the events route on this machine (docs/benchmarks.md, "The HTTP floor").
//
// Starts, one at a time, a server that does only the HTTP and JSON work of an event (load/http-floor-server.ts, a
// child process with the programs' node flags): bare node:http, Koa with one middleware, Koa with @koa/router, and
// the shared HTTP app of every program (services/runtime/src/http/app.ts) with the same handler on its route. Each
// is driven by k6 with the bench's peak load (load/http-floor.js: fresh events, constant arrival rate, at most 64
// in flight, keep-alive) and measured over a window after a warm-up: the server's requests per second and its CPU
// per request (/proc/<pid>/stat, user + system), k6's, and the CPU the rest of the machine used meanwhile.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { extraNodeOptions, PROGRAM_NODE_OPTIONS } from '../services/launcher/tools/processes.ts';
import { ensureK6, k6Version, runK6 } from './lib/k6.ts';
import { cpuSeconds, cpuSecondsSplit, machine, machineBusySeconds } from './lib/proc.ts';

/** The servers of load/http-floor-server.ts. */
const FLOOR_KINDS = ['bare', 'koa', 'router', 'app'] as const;
type FloorKind = (typeof FLOOR_KINDS)[number];

const HELP = `Usage: node load/http-floor.ts [options]

  --servers LIST    which servers, in order (${FLOOR_KINDS.join(',')})          default all
  --rate N          requests per second offered (the bench's peak: 3000); 0: a closed
                    loop (--vus always in flight: the machine as busy as at the peak)  default 3000
  --vus N           requests in flight at most (the bench's peak: 64)            default 64
  --warmup S        seconds before the measured window                           default 5
  --window S        measured seconds                                             default 20
  --rounds N        run the list of servers N times, interleaved (the machine is shared)  default 1
  --json FILE       also write the rows as JSON
`;

const LABELS: Record<FloorKind, string> = {
  bare: 'node:http alone',
  koa: 'Koa, one middleware',
  router: 'Koa + @koa/router',
  app: 'the shared app.ts (Koa, its middleware, router)',
};

interface Row {
  kind: FloorKind;
  round: number;
  requestsPerSecond: number;
  serverUsPerRequest: number;
  /** Of which in the kernel (system time). */
  serverSystemUsPerRequest: number;
  k6UsPerRequest: number;
  otherCpus: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  loadBefore: number;
  loadAfter: number;
}

const log = (line: string) => process.stderr.write(`[floor] ${line}\n`);

async function startServer(kind: FloorKind): Promise<{ pid: number; url: string; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [...PROGRAM_NODE_OPTIONS, ...extraNodeOptions(), 'load/http-floor-server.ts', kind],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { pid: child.pid!, url: `http://127.0.0.1:${port}`, stop };
}

async function answered(url: string): Promise<number> {
  return Number(await (await fetch(`${url}/__count`)).text());
}

async function measure(kind: FloorKind, round: number, k6: string, options: Options, resultsDir: string): Promise<Row> {
  const server = await startServer(kind);
  const loadBefore = machine().loadAverage1m;
  let k6Pid = 0;
  let window: Promise<Omit<Row, 'p50Ms' | 'p99Ms' | 'failed' | 'loadAfter'>> | undefined;
  const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));
  try {
    const result = await runK6(
      k6,
      {
        BASE_URL: server.url,
        RATE: String(options.rate),
        VUS: String(options.vus),
        DURATION: `${options.warmup + options.window + 2}s`,
      },
      {
        resultsDir,
        profile: `http-floor-${kind}`,
        script: 'load/http-floor.js',
        quiet: true,
        onStart: (pid) => {
          k6Pid = pid;
        },
        onLogLine: (line) => {
          if (!line.includes('setup: done') || window) return;
          window = (async () => {
            await sleep(options.warmup);
            const at = () => ({
              server: cpuSeconds(server.pid),
              serverSystem: cpuSecondsSplit(server.pid).system,
              k6: cpuSeconds(k6Pid),
              machine: machineBusySeconds(),
              time: performance.now(),
            });
            const start = { ...at(), count: await answered(server.url) };
            await sleep(options.window);
            const end = { ...at(), count: await answered(server.url) };
            const requests = end.count - start.count;
            const seconds = (end.time - start.time) / 1000;
            const serverS = end.server - start.server;
            const k6S = end.k6 - start.k6;
            return {
              kind,
              round,
              requestsPerSecond: requests / seconds,
              serverUsPerRequest: (serverS / requests) * 1e6,
              serverSystemUsPerRequest: ((end.serverSystem - start.serverSystem) / requests) * 1e6,
              k6UsPerRequest: (k6S / requests) * 1e6,
              otherCpus: (end.machine - start.machine - serverS - k6S) / seconds,
              loadBefore,
            };
          })();
        },
      },
    );
    if (!window) throw new Error(`k6 never logged "setup: done" (exit ${result.exitCode})`);
    const measured = await window;
    const duration = result.summary?.metrics?.['http_req_duration{scenario:peak}']?.values ??
      result.summary?.metrics?.http_req_duration?.values ?? { med: Number.NaN, 'p(99)': Number.NaN };
    const failed = result.summary?.metrics?.http_req_failed?.values?.passes ?? Number.NaN;
    return {
      ...measured,
      p50Ms: duration.med ?? Number.NaN,
      p99Ms: duration['p(99)'] ?? Number.NaN,
      failed,
      loadAfter: machine().loadAverage1m,
    };
  } finally {
    await server.stop();
  }
}

interface Options {
  servers: FloorKind[];
  rate: number;
  vus: number;
  warmup: number;
  window: number;
  rounds: number;
  json: string | undefined;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      servers: { type: 'string' },
      rate: { type: 'string' },
      vus: { type: 'string' },
      warmup: { type: 'string' },
      window: { type: 'string' },
      rounds: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const servers = (values.servers ?? FLOOR_KINDS.join(',')).split(',') as FloorKind[];
  const unknown = servers.filter((s) => !FLOOR_KINDS.includes(s));
  const positive = (raw: string | undefined, fallback: number, min = 1) => {
    const n = raw === undefined ? fallback : Number(raw);
    return Number.isInteger(n) && n >= min ? n : Number.NaN;
  };
  const options = {
    servers,
    rate: positive(values.rate, 3000, 0),
    vus: positive(values.vus, 64),
    warmup: positive(values.warmup, 5),
    window: positive(values.window, 20),
    rounds: positive(values.rounds, 1),
    json: values.json,
  };
  if (
    unknown.length ||
    [options.rate, options.vus, options.warmup, options.window, options.rounds].some(Number.isNaN)
  ) {
    process.stderr.write(HELP);
    process.exit(2);
  }
  return options;
}

function table(rows: Row[], options: Options): string {
  const m = machine();
  const load =
    options.rate > 0
      ? `${options.rate}/s offered, at most ${options.vus} in flight`
      : `${options.vus} in flight (closed loop)`;
  const lines = [
    `HTTP floor: POST /api/game-sdk/v2/events (read, JSON.parse, a ~400-byte JSON answer), ${load}, ` +
      `${options.window} s measured after ${options.warmup} s, ${options.rounds} round(s)`,
    `machine: ${m.cpus} x ${m.cpuModel}, node ${process.version}, node flags ${PROGRAM_NODE_OPTIONS.slice(0, 3).join(' ')}`,
    '',
    '| server | round | requests/s | server CPU µs per request (of which kernel) | k6 µs per request | other processes (CPUs) | p50 / p99 ms | failed | load before / after |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${LABELS[r.kind]} | ${r.round} | ${r.requestsPerSecond.toFixed(0)} | **${r.serverUsPerRequest.toFixed(1)}** (${r.serverSystemUsPerRequest.toFixed(1)}) | ` +
        `${r.k6UsPerRequest.toFixed(0)} | ${r.otherCpus.toFixed(2)} | ${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} | ` +
        `${r.failed} | ${r.loadBefore.toFixed(2)} / ${r.loadAfter.toFixed(2)} |`,
    );
  }
  if (options.rounds > 1) {
    lines.push('', 'server CPU µs per request over the rounds: median (min-max)');
    for (const kind of options.servers) {
      const us = rows
        .filter((r) => r.kind === kind)
        .map((r) => r.serverUsPerRequest)
        .sort((a, b) => a - b);
      const median = us[Math.floor(us.length / 2)] ?? Number.NaN;
      lines.push(`  ${LABELS[kind]}: ${median.toFixed(1)} (${us[0]?.toFixed(1)}-${us.at(-1)?.toFixed(1)})`);
    }
  }
  return lines.join('\n');
}

const options = readOptions();
const k6 = ensureK6(log);
log(`${k6Version(k6)}; servers ${options.servers.join(', ')}`);
const resultsDir = mkdtempSync(join(tmpdir(), 'http-floor-'));
const rows: Row[] = [];
try {
  for (let round = 1; round <= options.rounds; round++) {
    for (const kind of options.servers) {
      log(`round ${round}, ${kind}: ${LABELS[kind]}`);
      rows.push(await measure(kind, round, k6, options, resultsDir));
    }
  }
} finally {
  rmSync(resultsDir, { recursive: true, force: true });
}
process.stdout.write(`${table(rows, options)}\n`);
if (options.json) {
  writeFileSync(options.json, JSON.stringify({ machine: machine(), options, rows }, null, 2));
}
