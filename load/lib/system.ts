// The service for a load run, on real PostgreSQL and NATS: either the all-in-one process (one port) or the five
// programs as separate processes (one port each, the way Kubernetes runs them; services/launcher/tools/processes.ts).
// PostgreSQL and nats-server are DATABASE_URL / NATS_URL when given, else throwaway servers
// (services/launcher/tools/servers.ts); either way the run gets a database of its own (created here, migrated, dropped
// at the end).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import {
  extraNodeOptions,
  PROGRAM_ENTRIES as LAUNCHER_ENTRIES,
  type LaunchedProgram,
  otelEnvironment,
  PROGRAMS,
  type ProgramName,
  type ProgramSpec,
  type Programs,
  startPrograms,
} from '../../services/launcher/tools/processes.ts';
import { startNats, startPostgres } from '../../services/launcher/tools/servers.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { rssMiB } from './proc.ts';

export type SystemMode = 'all-in-one' | 'programs';

/** The five programs' entry files (the launcher's list, without the all-in-one process). */
export const PROGRAM_ENTRIES = Object.fromEntries(PROGRAMS.map((name) => [name, LAUNCHER_ENTRIES[name]])) as {
  [K in ProgramName]: (typeof LAUNCHER_ENTRIES)[K];
};
export type { ProgramName };

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
  /** Each program's (or the all-in-one process's) base URL, where its /metrics answers too. */
  programUrls: Record<string, string>;
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

export async function startLoadSystem(options: LoadSystemOptions): Promise<LoadSystem> {
  const log = options.log ?? (() => {});
  const stops: Array<() => Promise<void>> = [];
  let programs: Programs | undefined;
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
    await programs?.stop(15_000);
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

    // The OTEL_* variables of the run reach the programs (tracing on: see docs/benchmarks.md, "Tracing on and off").
    const otel = otelEnvironment();
    // No drain after SIGTERM (SHUTDOWN_DRAIN_MS): nothing balances these processes, and the run stops at once.
    // A ledger with DATABASE_URL needs WEBHOOK_SECRET_KEY: one for the run (its database is the run's own).
    const env = {
      ...otel,
      SHUTDOWN_DRAIN_MS: '0',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      ...options.env,
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
    };
    const names: readonly LaunchedProgram[] = options.mode === 'all-in-one' ? ['all-in-one'] : PROGRAMS;
    const profile = options.cpuProfile;
    programs = await startPrograms({
      // As the image: the programs' modules come from Node's compile cache, without the type stripper.
      warmCompileCache: true,
      programs: Object.fromEntries(names.map((name) => [name, {}])) as Partial<Record<LaunchedProgram, ProgramSpec>>,
      env,
      logDir: options.logDir,
      host: '127.0.0.1',
      nodeOptions: ({ program }) => [
        ...extraNodeOptions(),
        ...(profile?.programs.includes(program)
          ? ['--cpu-prof', `--cpu-prof-dir=${profile.dir}`, `--cpu-prof-name=${program}.${Date.now()}.cpuprofile`]
          : []),
      ],
      startTimeoutMs: options.startTimeoutMs ?? 120_000,
      wait: 'none',
    });
    for (const replica of programs.replicas) {
      if (replica.pid) processes.push({ name: replica.name, pid: replica.pid });
    }
    await Promise.all(programs.replicas.map((replica) => replica.waitReady()));
    const started = programs;
    const urlOf = (name: LaunchedProgram) => (started.of(name)[0] ?? started.replicas[0]!).url;
    log(`${options.mode === 'all-in-one' ? 'all-in-one process' : 'five programs'} ready`);
    return {
      mode: options.mode,
      urls: { gateway: urlOf('gateway'), ingest: urlOf('ingest'), links: urlOf('links'), ledger: urlOf('ledger') },
      programUrls: Object.fromEntries(started.replicas.map((replica) => [replica.name, replica.url])),
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
