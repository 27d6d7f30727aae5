// npm run bench:start: how long `npm start` (the embedded default: PGlite under DATA_DIR, the in-process transport)
// takes from the process's start to its banner: on a new DATA_DIR (the template unpacked, the migrations added since it
// was made) and again on the same folder (a restart), with the CPU the process and its children spent until then.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROGRAM_ENTRIES, PROGRAM_ENVIRONMENT, PROGRAM_NODE_OPTIONS } from '../services/launcher/tools/processes.ts';
import { freePort } from '../services/launcher/tools/servers.ts';
import { summarizeCpuProfile } from './lib/cpuprofile.ts';
import { machine, rssMiB } from './lib/proc.ts';

const HELP = `Usage: npm run bench:start -- [options]

Starts the all-in-one process as \`npm start\` does without DATABASE_URL (node with the start script's flags, PGlite
under a new DATA_DIR, no NATS_URL), then again on that folder (a restart), each stopped with SIGTERM once it printed its banner; prints the seconds from spawn to the banner, the banner's own
"started in" (from the process's start, as node counts it), the CPU seconds of the process and its children until
the banner and its peak RSS then.

Options:
  --runs N          runs of the two starts                                           default 3
  --cpu-prof DIR    run node with --cpu-prof (profiles in DIR, their top functions printed)
  --help            this text
`;

const BANNER = /Sandbox Rewards is running \(started in ([\d.]+) s\)/;
const log = (line: string) => process.stderr.write(`[start] ${line}\n`);

const KINDS = ['first start', 'restart'] as const;

interface Start {
  kind: (typeof KINDS)[number];
  /** Seconds from spawn to the banner. */
  seconds: number;
  /** The banner's own figure: from the process's start (performance's time origin) to ready. */
  bannerSeconds: number;
  /** CPU seconds of the process and of its children it waited for, until the banner. */
  cpuSeconds: number;
  /** The process's peak RSS (VmHWM) at the banner, MiB. */
  peakRssMiB: number;
  loadAverage1m: number;
}

/** utime + stime + cutime + cstime of a process, in seconds (/proc/<pid>/stat, USER_HZ = 100). */
function cpuWithChildren(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

async function startOnce(dataDir: string, kind: Start['kind'], cpuProfile: string | undefined): Promise<Start> {
  const port = await freePort();
  const loadAverage1m = machine().loadAverage1m;
  const args = [
    ...PROGRAM_NODE_OPTIONS,
    ...(cpuProfile ? ['--cpu-prof', '--cpu-prof-dir', cpuProfile] : []),
    resolve(PROGRAM_ENTRIES['all-in-one']),
  ];
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  Object.assign(env, PROGRAM_ENVIRONMENT, { PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const spawnedAt = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const banner = await new Promise<{ at: number; bannerSeconds: number; cpuSeconds: number; peakRssMiB: number }>(
    (done, fail) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const match = BANNER.exec(output);
        if (match) {
          child.stdout?.off('data', onData);
          done({
            at: performance.now(),
            bannerSeconds: Number(match[1]),
            cpuSeconds: cpuWithChildren(child.pid!),
            peakRssMiB: rssMiB(child.pid!),
          });
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.once('exit', (code) => fail(new Error(`all-in-one exited ${code} before its banner:\n${output}`)));
    },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  await exited;
  return {
    kind,
    seconds: (banner.at - spawnedAt) / 1000,
    bannerSeconds: banner.bannerSeconds,
    cpuSeconds: banner.cpuSeconds,
    peakRssMiB: banner.peakRssMiB,
    loadAverage1m,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string' }, 'cpu-prof': { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const runs = Number(values.runs ?? 3);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) {
    process.stderr.write('--runs must be an integer from 1 to 20\n');
    process.exit(2);
  }
  const cpuProfile = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
  if (cpuProfile) mkdirSync(cpuProfile, { recursive: true });
  const before = machine();
  const starts: Start[] = [];
  for (let run = 1; run <= runs; run++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'rewards-start-'));
    try {
      for (const kind of KINDS) {
        const start = await startOnce(dataDir, kind, cpuProfile);
        log(
          `run ${run}, ${kind}: ${start.seconds.toFixed(2)} s to the banner (its own: ${start.bannerSeconds.toFixed(1)} s), CPU ${start.cpuSeconds.toFixed(2)} s, load ${start.loadAverage1m.toFixed(2)}`,
        );
        starts.push(start);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const f = (n: number, d = 2) => n.toFixed(d);
  const lines = [
    '',
    `npm run bench:start: ${before.cpus} x ${before.cpuModel}; node ${process.version}; load average ${f(before.loadAverage1m)} before, ${f(machine().loadAverage1m)} after`,
  ];
  for (const kind of KINDS) {
    const of = starts.filter((s) => s.kind === kind);
    lines.push(
      `${kind.toUpperCase()} to the banner: ${of.map((s) => `${f(s.seconds)} s`).join(', ')} ` +
        `(the banner's own: ${of.map((s) => f(s.bannerSeconds, 1)).join(', ')} s; CPU ${of.map((s) => f(s.cpuSeconds)).join(', ')} s; ` +
        `peak RSS ${of.map((s) => f(s.peakRssMiB, 0)).join(', ')} MiB; ` +
        `load ${of.map((s) => f(s.loadAverage1m)).join(', ')})`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (cpuProfile) {
    for (const file of readdirSync(cpuProfile).filter((n) => n.endsWith('.cpuprofile'))) {
      const profile = JSON.parse(readFileSync(join(cpuProfile, file), 'utf8'));
      process.stdout.write(`\nCPU PROFILE ${file}\n${summarizeCpuProfile(profile, 25)}\n`);
    }
  }
}

await main();
