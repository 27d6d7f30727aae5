// The service for a load run, on real PostgreSQL and NATS: either the all-in-one process (one port) or the five
// programs as separate processes (one port each, the way Kubernetes runs them). PostgreSQL and nats-server are
// DATABASE_URL / NATS_URL when given, else throwaway servers (test/support/servers.ts); either way the run gets a
// database of its own (created here, migrated, dropped at the end).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { extraNodeOptions, PROGRAM_NODE_OPTIONS } from '../../test/support/processes.ts';
import { freePort, startNats, startPostgres } from '../../test/support/servers.ts';
import { rssMiB } from './proc.ts';

export type SystemMode = 'all-in-one' | 'programs';

export const PROGRAM_ENTRIES = {
  'identity-admission': 'services/identity-admission/src/main.ts',
  ledger: 'services/ledger/src/main.ts',
  gateway: 'gateway/src/main.ts',
  ingest: 'services/ingest/src/main.ts',
  links: 'services/links/src/main.ts',
} as const;
export type ProgramName = keyof typeof PROGRAM_ENTRIES;

export interface LoadSystemOptions {
  mode: SystemMode;
  /** Environment of every program (identity providers, ADMIN_TOKEN, limits, ...). */
  env: Record<string, string>;
  /** Folder for the programs' logs. */
  logDir: string;
  /** Programs run with `node --cpu-prof`, profiles written to cpuProfileDir. */
  cpuProfile?: { dir: string; programs: string[] };
  /** A throwaway cluster with PostgreSQL's durable defaults (fsync, synchronous_commit on); default: off, as the tests. */
  durable?: boolean;
  /** How long a program may take to answer /readyz (slow, shared machines). */
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface RunningProcess {
  name: string;
  pid: number;
}

export interface LoadSystem {
  mode: SystemMode;
  /** Base URL per edge (the same URL for all three in all-in-one mode). */
  urls: { gateway: string; ingest: string; links: string; ledger: string };
  databaseUrl: string;
  /** The run's database name (its PostgreSQL backends carry it in their command line). */
  databaseName: string;
  natsUrl: string;
  /** The programs (or the all-in-one process) and, when started here, nats-server. */
  processes: RunningProcess[];
  /** The last peak RSS (VmHWM, MiB) read of every process; kept after a process exits. */
  peakRssMiB(): Record<string, number>;
  stop(): Promise<void>;
}

interface Child {
  name: string;
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

function spawnProgram(
  name: string,
  entry: string,
  env: Record<string, string>,
  port: number,
  options: LoadSystemOptions,
): Child {
  const profile = options.cpuProfile?.programs.includes(name)
    ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfile.dir}`, `--cpu-prof-name=${name}.${Date.now()}.cpuprofile`]
    : [];
  const portVariable = name === 'all-in-one' ? 'PORT' : 'HTTP_PORT';
  // The OTEL_* variables of the run reach the programs (tracing on: see docs/benchmarks.md, "Tracing on and off").
  const otel = Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith('OTEL_')));
  const child = spawn(process.execPath, [...PROGRAM_NODE_OPTIONS, ...extraNodeOptions(), ...profile, resolve(entry)], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...otel, ...env, [portVariable]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(join(options.logDir, `${name}.log`));
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { name, child, url: `http://127.0.0.1:${port}`, exited };
}

async function waitReady(program: Child, timeoutMs: number, logDir: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (program.child.exitCode !== null) {
      throw new Error(`${program.name} exited with ${program.child.exitCode}; see ${join(logDir, program.name)}.log`);
    }
    try {
      const response = await fetch(`${program.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${program.name} did not answer /readyz with 200 within ${timeoutMs} ms`);
}

export async function startLoadSystem(options: LoadSystemOptions): Promise<LoadSystem> {
  const log = options.log ?? (() => {});
  const stops: Array<() => Promise<void>> = [];
  const children: Child[] = [];
  const peaks = new Map<string, number>();
  const processes: RunningProcess[] = [];
  const readPeaks = () => {
    for (const p of processes) {
      const peak = rssMiB(p.pid);
      if (Number.isFinite(peak)) peaks.set(p.name, peak);
    }
  };
  // VmHWM disappears with the process: read it every second and once more before each stop.
  const peakTimer = setInterval(readPeaks, 1000);
  peakTimer.unref();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    clearInterval(peakTimer);
    readPeaks();
    // Edges first, then the state owners (the order Kubernetes would drain them in does not matter here).
    for (const program of [...children].reverse()) {
      if (program.child.exitCode === null) {
        program.child.kill('SIGTERM');
        const timer = setTimeout(() => program.child.kill('SIGKILL'), 15_000);
        await program.exited;
        clearTimeout(timer);
      }
    }
    for (const s of stops.reverse()) {
      try {
        await s();
      } catch (error) {
        process.stderr.write(`cleanup failed: ${(error as Error).message}\n`);
      }
    }
  };
  try {
    mkdirSync(options.logDir, { recursive: true });
    let serverUrl = process.env.DATABASE_URL;
    if (!serverUrl) {
      log(
        `starting a throwaway PostgreSQL cluster (initdb; ${options.durable ? 'durable: fsync and synchronous_commit on' : 'fsync off, as in the tests'})`,
      );
      const postgres = await startPostgres({ durable: options.durable ?? false });
      stops.push(postgres.stop);
      serverUrl = postgres.url;
    }
    let natsUrl = process.env.NATS_URL;
    if (!natsUrl) {
      const nats = await startNats();
      stops.push(nats.stop);
      natsUrl = nats.url;
      if (nats.process.pid) processes.push({ name: 'nats-server', pid: nats.process.pid });
      log(`nats-server on ${natsUrl}`);
    }
    const databaseName = `load_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${databaseName}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${databaseName}`;
    const databaseUrl = url.toString();
    const server = serverUrl;
    stops.push(async () => {
      const c = new pg.Client({ connectionString: server });
      await c.connect();
      await c.query(`drop database if exists ${databaseName} with (force)`);
      await c.end();
    });
    // Migrated once here, so that the two state owners do not race on an empty database.
    await migrate(databaseUrl, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    log(`database ${databaseName} migrated`);

    const env = { ...options.env, DATABASE_URL: databaseUrl, NATS_URL: natsUrl };
    const names: string[] = options.mode === 'all-in-one' ? ['all-in-one'] : Object.keys(PROGRAM_ENTRIES);
    for (const name of names) {
      const entry = name === 'all-in-one' ? 'services/all-in-one/src/main.ts' : PROGRAM_ENTRIES[name as ProgramName];
      const child = spawnProgram(name, entry, env, await freePort(), options);
      children.push(child);
      if (child.child.pid) processes.push({ name, pid: child.child.pid });
    }
    const timeoutMs = options.startTimeoutMs ?? 120_000;
    await Promise.all(children.map((c) => waitReady(c, timeoutMs, options.logDir)));
    const urlOf = (name: string) => (children.find((c) => c.name === name) ?? children[0]!).url;
    log(`${options.mode === 'all-in-one' ? 'all-in-one process' : 'five programs'} ready`);
    return {
      mode: options.mode,
      urls: { gateway: urlOf('gateway'), ingest: urlOf('ingest'), links: urlOf('links'), ledger: urlOf('ledger') },
      databaseUrl,
      databaseName,
      natsUrl,
      processes,
      peakRssMiB: () => {
        readPeaks();
        return Object.fromEntries(peaks);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
