// Throwaway PostgreSQL and nats-server processes on loopback, for the benchmarks (load/), the fault suite
// (test/faults/) and the tests (test/support/servers.ts re-exports them): initdb in a temporary folder, nats-server
// on a free port, each stopped by whoever started it. Tools for running the service on a development or CI machine,
// never part of a program.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Ports this process has handed out: a port is free until its program binds it, which can take seconds. */
const handedOut = new Set<number>();

/**
 * Where freePort looks in a jest worker (and freePorts always): below Linux's ephemeral range (32768 and up by
 * default), where the kernel takes the ports of outgoing connections and of bind(0), so no other test's connection or
 * server can take a port between the check and the program's listen. Each jest worker (JEST_WORKER_ID 1, 2, ...) has a slice of its own, so two test files running
 * at once never hand out the same port (a program whose port another test's program had taken answered that one's
 * /readyz, and the test went on against the wrong process).
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_768;
const PORT_SLICES = 8;

function portRange(): { from: number; size: number } {
  const worker = Number(process.env.JEST_WORKER_ID);
  if (!(Number.isInteger(worker) && worker >= 1)) return { from: PORTS_FROM, size: PORTS_TO - PORTS_FROM };
  const size = Math.floor((PORTS_TO - PORTS_FROM) / PORT_SLICES);
  return { from: PORTS_FROM + ((worker - 1) % PORT_SLICES) * size, size };
}

/** True when 127.0.0.1:port can be bound now (nothing listens on it). */
function bindable(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port nothing listens on now (see PORTS_FROM), never one this process handed out before: two programs started
 * one after the other (the first still starting, its port not bound yet) could otherwise both get it, and the slower
 * one fail with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  if (process.env.JEST_WORKER_ID !== undefined) return freePorts(1);
  // One process alone (a benchmark, the fault suite): the kernel's choice, as it always was there.
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** A port p with p .. p + count - 1 all free as freePort's (a launcher's programs on consecutive ports); p. */
export async function freePorts(count: number): Promise<number> {
  const { from, size } = portRange();
  for (;;) {
    const base = from + Math.floor(Math.random() * (size - count + 1));
    let free = true;
    for (let port = base; port < base + count && free; port++) {
      free = !handedOut.has(port) && (await bindable(port));
    }
    if (!free) continue;
    for (let port = base; port < base + count; port++) handedOut.add(port);
    return base;
  }
}

/** True once something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Resolves once 127.0.0.1:port accepts connections; throws after `timeoutMs`. */
export async function waitPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`port ${port} did not open within ${timeoutMs} ms`);
}

/** Polls `check` every 50 ms until it returns true (a throw counts as not yet); throws after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

export function findPostgresBin(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  if (existsSync('/usr/lib/postgresql')) {
    for (const version of readdirSync('/usr/lib/postgresql').sort().reverse()) {
      candidates.push(join('/usr/lib/postgresql', version, 'bin'));
    }
  }
  for (const dir of candidates) if (existsSync(join(dir, 'initdb'))) return dir;
  throw new Error(
    'PostgreSQL binaries (initdb, pg_ctl) not found. Install them with `apt-get install postgresql`, ' +
      'set PG_BIN to their folder, or set DATABASE_URL to a server the tests may use.',
  );
}

/** A program on PATH or in the usual system folders; undefined when it is not installed. */
export function findBinary(name: string, extra: string[] = []): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/usr/local/bin', ...extra])) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

export function findNatsServer(): string {
  const found = findBinary('nats-server');
  if (found) return found;
  throw new Error(
    'nats-server not found. Install it with `apt-get install nats-server`, or set NATS_URL to a server the tests may use.',
  );
}

export interface PostgresOptions {
  /**
   * `true`: a cluster with the server's durable defaults (fsync, synchronous_commit and full_page_writes on), for the
   * fault suite (test/faults/), whose crash checks mean nothing if a commit may vanish. Default: fsync off, as the
   * tests need no durability and run faster without it.
   */
  durable?: boolean;
  /** More server settings (`name=value`, each passed as `-c name=value`; single quotes allowed, as in postgresql.conf). */
  settings?: string[];
  /**
   * More addresses to listen on besides 127.0.0.1, and the networks (CIDR) allowed to connect from them (pg_hba
   * `host ... trust`): for clients in a network namespace of their own (the fault suite's partitions).
   */
  listen?: { addresses: string[]; clientNetworks: string[] };
}

export interface StartedPostgres {
  url: string;
  /** The cluster's data folder (PGDATA). */
  dataDir: string;
  port: number;
  /** The server's log file (removed with the folder by stop). */
  logPath: string;
  /** `pg_ctl stop -m immediate`: the server quits without a checkpoint (crash recovery on the next start). */
  stopImmediately(): void;
  /** `pg_ctl start -w` on the same port and settings (after stopImmediately). */
  start(): void;
  /** Stops the server and removes the folder. */
  stop(): Promise<void>;
}

/** Starts a PostgreSQL cluster in a temporary folder. Runs as the `postgres` user when this process is root. */
export async function startPostgres(options: PostgresOptions = {}): Promise<StartedPostgres> {
  const bin = findPostgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'rewards-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const full = join(bin, cmd);
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', full, ...args], { stdio: 'pipe' });
    else execFileSync(full, args, { stdio: 'pipe' });
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  const listenAddresses = ['127.0.0.1', ...(options.listen?.addresses ?? [])].join(',');
  if (options.listen) {
    const hba = options.listen.clientNetworks.map((network) => `host all all ${network} trust\n`).join('');
    appendFileSync(join(data, 'pg_hba.conf'), hba);
  }
  const speed = options.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const settings = (options.settings ?? []).map((setting) => ` -c ${setting}`).join('');
  const logPath = join(dir, 'postgres.log');
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      logPath,
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=${listenAddresses}${speed} -c max_connections=300${settings}`,
      'start',
    ]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir: data,
    port,
    logPath,
    stopImmediately: () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start,
    stop: async () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface StartedNats {
  url: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

export interface NatsOptions {
  /**
   * The address to listen on (default 127.0.0.1; another local address for clients in network namespaces of their
   * own, test/faults/netns.ts).
   */
  host?: string;
  /** A configuration file (`-c`), e.g. charts/sandbox-rewards/nats-authorization.conf; address and port still win. */
  configFile?: string;
  /** Environment of the server over this process's (the variables a configuration file names). */
  env?: Record<string, string>;
  /** The server's log file (`-l`); none by default. */
  logFile?: string;
}

/** Starts nats-server on `options.host` (default 127.0.0.1) and `port` (or a free one); resolves once it accepts. */
export async function startNats(port?: number, options: NatsOptions = {}): Promise<StartedNats> {
  const binary = findNatsServer();
  const host = options.host ?? '127.0.0.1';
  const natsPort = port ?? (await freePort());
  const args = ['-a', host, '-p', String(natsPort)];
  if (options.configFile) args.push('-c', options.configFile);
  if (options.logFile) args.push('-l', options.logFile);
  const child = spawn(binary, args, { stdio: 'ignore', env: { ...process.env, ...options.env } });
  await waitFor(() => portOpen(natsPort, host), 'nats-server');
  return {
    url: `nats://${host}:${natsPort}`,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}
