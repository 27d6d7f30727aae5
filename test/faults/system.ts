// The service under the fault suite: a PostgreSQL cluster with fsync on, a nats-server and the five programs as
// separate processes (the way Kubernetes runs them), each of which the suite can kill, stop and start again on the
// same port. Everything listens on 127.0.0.1 only.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import * as net from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { freePort, type StartedPostgres, startNats, startPostgres } from '../support/servers.ts';

export const PROGRAMS = {
  'identity-admission': 'services/identity-admission/src/main.ts',
  ledger: 'services/ledger/src/main.ts',
  gateway: 'gateway/src/main.ts',
  ingest: 'services/ingest/src/main.ts',
  links: 'services/links/src/main.ts',
} as const;
export type ProgramName = keyof typeof PROGRAMS;

export interface RunningProgram {
  name: string;
  port: number;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

export interface FaultSystem {
  databaseUrl: string;
  natsUrl: string;
  urls: Record<ProgramName, string>;
  program(name: ProgramName): RunningProgram;
  /** SIGKILL; resolves once the process is gone. */
  kill(name: ProgramName): Promise<void>;
  /** Starts the program again on its port with its environment; resolves once /readyz answers 200. */
  restart(name: ProgramName): Promise<void>;
  /**
   * Starts another copy of a program with its HTTP port set to `port` (e.g. one that is taken); resolves with its
   * exit code once it exits, or null if it is still running after `timeoutMs` (then it is killed).
   */
  startExtra(name: ProgramName, port: number, label: string, timeoutMs: number): Promise<number | null>;
  killNats(): Promise<void>;
  startNatsAgain(): Promise<void>;
  postgres: StartedPostgres;
  stop(): Promise<void>;
}

export interface FaultSystemOptions {
  env: Record<string, string>;
  logDir: string;
  log: (line: string) => void;
  startTimeoutMs?: number;
}

async function waitReady(program: RunningProgram, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (program.child.exitCode !== null || program.child.signalCode !== null) {
      throw new Error(`${program.name} exited (${program.child.exitCode ?? program.child.signalCode}) while starting`);
    }
    try {
      const response = await fetch(`${program.url}/readyz`, { signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${program.name} did not answer /readyz with 200 within ${timeoutMs} ms`);
}

export async function waitPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolveOpen) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolveOpen(true);
      });
      socket.once('error', () => resolveOpen(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`port ${port} did not open within ${timeoutMs} ms`);
}

export async function startFaultSystem(options: FaultSystemOptions): Promise<FaultSystem> {
  const { log } = options;
  const startTimeoutMs = options.startTimeoutMs ?? 120_000;
  mkdirSync(options.logDir, { recursive: true });
  const cleanups: Array<() => Promise<void>> = [];
  const running = new Map<ProgramName, RunningProgram>();
  const extras = new Set<ChildProcess>();

  const stop = async () => {
    for (const child of extras) child.kill('SIGKILL');
    for (const program of [...running.values()].reverse()) {
      if (program.child.exitCode === null && program.child.signalCode === null) {
        program.child.kill('SIGTERM');
        const timer = setTimeout(() => program.child.kill('SIGKILL'), 10_000);
        await program.exited;
        clearTimeout(timer);
      }
    }
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`cleanup failed: ${(error as Error).message}`);
      }
    }
  };

  try {
    log('starting PostgreSQL (initdb; fsync, synchronous_commit and full_page_writes on)');
    const postgres = await startPostgres({ durable: true });
    cleanups.push(postgres.stop);
    const natsPort = await freePort();
    let nats = await startNats(natsPort);
    cleanups.push(() => nats.stop());
    const natsUrl = nats.url;
    log(`nats-server on ${natsUrl}`);

    const databaseName = `faults_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query(`create database ${databaseName}`);
    await admin.end();
    const url = new URL(postgres.url);
    url.pathname = `/${databaseName}`;
    const databaseUrl = url.toString();
    await migrate(databaseUrl, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));

    const env = { ...options.env, DATABASE_URL: databaseUrl, NATS_URL: natsUrl };
    const logs = new Map<string, ReturnType<typeof createWriteStream>>();
    const logOf = (name: string) => {
      let stream = logs.get(name);
      if (!stream) {
        stream = createWriteStream(join(options.logDir, `${name}.log`), { flags: 'a' });
        logs.set(name, stream);
      }
      return stream;
    };
    const spawnProgram = (name: ProgramName, port: number, logName: string = name): RunningProgram => {
      const child = spawn(process.execPath, [resolve(PROGRAMS[name])], {
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env, HTTP_PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const stream = logOf(logName);
      stream.write(`--- ${new Date().toISOString()} start (pid ${child.pid}, port ${port})\n`);
      child.stdout?.pipe(stream, { end: false });
      child.stderr?.pipe(stream, { end: false });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      return { name: logName, port, url: `http://127.0.0.1:${port}`, child, exited };
    };

    for (const name of Object.keys(PROGRAMS) as ProgramName[]) {
      running.set(name, spawnProgram(name, await freePort()));
    }
    await Promise.all([...running.values()].map((p) => waitReady(p, startTimeoutMs)));
    log('five programs ready');
    const program = (name: ProgramName) => running.get(name)!;

    return {
      databaseUrl,
      natsUrl,
      postgres,
      urls: Object.fromEntries([...running].map(([name, p]) => [name, p.url])) as Record<ProgramName, string>,
      program,
      async kill(name) {
        const p = program(name);
        p.child.kill('SIGKILL');
        await p.exited;
      },
      async restart(name) {
        const next = spawnProgram(name, program(name).port);
        running.set(name, next);
        await waitReady(next, startTimeoutMs);
      },
      async startExtra(name, port, label, timeoutMs) {
        const extra = spawnProgram(name, port, label);
        extras.add(extra.child);
        const timer = setTimeout(() => extra.child.kill('SIGKILL'), timeoutMs);
        const code = await extra.exited;
        clearTimeout(timer);
        extras.delete(extra.child);
        return extra.child.signalCode === 'SIGKILL' ? null : code;
      },
      async killNats() {
        nats.process.kill('SIGKILL');
        await new Promise<void>((r) => {
          if (nats.process.exitCode !== null || nats.process.signalCode !== null) r();
          else nats.process.once('exit', () => r());
        });
      },
      async startNatsAgain() {
        nats = await startNats(natsPort);
        await waitPort(natsPort);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
