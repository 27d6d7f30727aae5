// Throwaway PostgreSQL and NATS servers for the test suite and the benchmarks.
// `npm test` uses DATABASE_URL / NATS_URL when they are given; otherwise it starts its own servers on free ports
// (initdb in a temporary folder, nats-server on loopback) and stops them afterwards.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  findBinary,
  findPostgresBin,
  freePort,
  portOpen,
  startNats,
  startPostgres,
  waitFor,
} from '../../services/launcher/tools/servers.ts';

export interface StartedServers {
  databaseUrl: string;
  natsUrl: string;
  stop: () => Promise<void>;
}

// PostgreSQL and nats-server for the tests are the launcher's (services/launcher/tools/servers.ts: the benchmarks and
// the fault suite use them too); re-exported here for the tests that import them from test/support.
export {
  findBinary,
  findPostgresBin,
  freePort,
  freePorts,
  type PostgresOptions,
  portOpen,
  type StartedNats,
  type StartedPostgres,
  startNats,
  startPostgres,
  waitFor,
} from '../../services/launcher/tools/servers.ts';

/** Uses DATABASE_URL / NATS_URL when set, otherwise starts throwaway servers. */
export async function startServers(): Promise<StartedServers> {
  const stops: Array<() => Promise<void>> = [];
  let databaseUrl = process.env.DATABASE_URL;
  let natsUrl = process.env.NATS_URL;
  if (!databaseUrl) {
    const pg = await startPostgres();
    databaseUrl = pg.url;
    stops.push(pg.stop);
  }
  if (!natsUrl) {
    const nats = await startNats();
    natsUrl = nats.url;
    stops.push(nats.stop);
  }
  return {
    databaseUrl,
    natsUrl,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
    },
  };
}

/** The uid and gid of the `postgres` user when this process is root (the servers refuse to run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

/** A temporary folder owned by the user the servers run as. */
function serverDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const user = postgresUser();
  if (user) chownSync(dir, user.uid, user.gid);
  return dir;
}

/** Sends `signal` to a child this module started and waits (bounded) for it to exit. */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

export interface StartedPgBouncer {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`: set the path to the database wanted. */
  url: string;
  port: number;
  /** PgBouncer's log file (removed with its folder by stop). */
  logPath: string;
  /** SIGKILL of the PgBouncer process; resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts PgBouncer again on its port with its settings (after kill); resolves once it accepts connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * PgBouncer (Debian's 1.18: no prepared statements in transaction mode, the strict case) in transaction mode in front
 * of a PostgreSQL server on loopback, on a private port, as user postgres when this process is root
 * (TOOLCHAIN.md, "production topology"). `poolSize` is default_pool_size: server connections per database and user,
 * so that clients share sessions (small pools make session-state bugs certain).
 */
/** True when PgBouncer is installed (Debian's `pgbouncer`): the pooler's tests skip, saying so, without it. */
export function pgBouncerInstalled(): boolean {
  return findBinary('pgbouncer') !== undefined;
}

export async function startPgBouncer(options: { postgresPort: number; poolSize: number }): Promise<StartedPgBouncer> {
  const binary = findBinary('pgbouncer');
  if (!binary) throw new Error('pgbouncer not found. Install it with `apt-get install pgbouncer`.');
  const dir = serverDir('rewards-pgbouncer-');
  const port = await freePort();
  const logPath = join(dir, 'pgbouncer.log');
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${options.postgresPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits,options,application_name',
      `logfile = ${logPath}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const user = postgresUser();
  if (user) for (const file of ['users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), user.uid, user.gid);
  // In the foreground (no -d), so that this module holds its process.
  let child!: ChildProcess;
  const start = async () => {
    child = spawn(binary, [ini], { stdio: 'ignore', ...(user ? { uid: user.uid, gid: user.gid } : {}) });
    const current = child;
    await waitFor(async () => current.exitCode === null && (await portOpen(port)), 'pgbouncer');
  };
  try {
    await start();
  } catch (error) {
    await stopChild(child, 'SIGTERM');
    const log = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n${log}`);
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    logPath,
    kill: () => stopChild(child, 'SIGKILL'),
    start,
    stop: async () => {
      // SIGTERM: immediate shutdown (SIGINT would wait for the clients).
      await stopChild(child, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True when pg_auto_failover's `pg_autoctl` and PostgreSQL's binaries are installed. */
export function autoFailoverInstalled(): boolean {
  try {
    return findBinary('pg_autoctl') !== undefined && existsSync(join(findPostgresBin(), 'pg_ctl'));
  } catch {
    return false;
  }
}

/** A node of the formation as the monitor reports it (`pg_autoctl show state --json`). */
export interface AutoFailoverNode {
  name: string;
  port: number;
  reportedState: string;
  assignedState: string;
}

export interface StartedAutoFailover {
  /**
   * The formation's multi-host URI (`pg_autoctl show uri --formation default`: target_session_attrs=read-write) with
   * the user `postgres` (the nodes' superuser) added: the URI names no user, and this process may run as root.
   */
  url: string;
  /** The URI exactly as `pg_autoctl show uri` printed it. */
  uri?: string;
  /** The two nodes' ports, first node first. */
  ports: [number, number];
  /** The nodes as the monitor reports them now. */
  state(): Promise<AutoFailoverNode[]>;
  /** `pg_autoctl perform switchover`: the secondary becomes the primary (waits for it); returns the new primary. */
  switchover(): Promise<AutoFailoverNode>;
  /** SIGKILL of the primary's postmaster (its pid from PGDATA/postmaster.pid); returns the node killed. */
  killPrimary(): Promise<AutoFailoverNode>;
  /**
   * The primary's whole node gone: SIGKILL of its keeper (`pg_autoctl run` and its subprocesses) and its postgres
   * at once, so that nothing restarts it and the monitor promotes the standby; returns the node killed.
   */
  killPrimaryNode(): Promise<AutoFailoverNode>;
  /** Waits until one node is primary (or wait_primary) as assigned and reported, and takes writes; returns it. */
  waitForPrimary(timeoutMs?: number): Promise<AutoFailoverNode>;
  /** Stops every pg_autoctl (each stops its postgres) and removes the folder. */
  stop(): Promise<void>;
}

/** Every process under `pid` (children, their children, ...), from /proc's parent pids. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone
    }
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** States of a node that accepts writes (pg_auto_failover's FSM). */
const WRITABLE_STATES = new Set(['primary', 'wait_primary', 'single']);

/**
 * A pg_auto_failover formation on loopback (TOOLCHAIN.md, "production topology"): a monitor and two PostgreSQL nodes,
 * each its own `pg_autoctl run` started here, as user postgres when this process is root. Resolves once one node is
 * primary and the other secondary (about 30 s). Throws when pg_autoctl is not installed (see autoFailoverInstalled).
 */
export interface AutoFailoverSettings {
  /** The monitor's settings (`pgautofailover.*`, set with ALTER SYSTEM before the nodes are created). */
  monitor: Record<string, string>;
  /** Each keeper's settings (`pg_autoctl config set`, e.g. `timeout.network_partition_timeout`), before its run. */
  keeper: Record<string, string>;
}

export async function startAutoFailover(
  options: { formTimeoutMs?: number; settings?: AutoFailoverSettings } = {},
): Promise<StartedAutoFailover> {
  const pgAutoctl = findBinary('pg_autoctl');
  if (!pgAutoctl) {
    throw new Error(
      'pg_autoctl not found. Install it with `apt-get install postgresql-15-auto-failover pg-auto-failover-cli`.',
    );
  }
  const bin = findPostgresBin();
  const dir = serverDir('rewards-autofailover-');
  const user = postgresUser();
  const env = {
    // Only system folders: pg_autoctl runs as postgres and looks for pg_ctl in every PATH entry.
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'share'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    LANG: 'C.UTF-8',
  };
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  const autoctl = (args: string[], timeoutMs = 120_000) =>
    new Promise<string>((resolve, reject) => {
      execFile(pgAutoctl, args, { env, cwd: dir, timeout: timeoutMs, ...asUser }, (error, stdout) => {
        // execFile's message holds the command and its stderr.
        if (error) reject(new Error(`pg_autoctl ${args.slice(0, 2).join(' ')} failed: ${error.message}`));
        else resolve(stdout);
      });
    });
  const runs: ChildProcess[] = [];
  const runOf = new Map<string, ChildProcess>();
  const logs: string[] = [];
  const run = (pgdata: string) => {
    const log = openSync(`${pgdata}.log`, 'a');
    const child = spawn(pgAutoctl, ['run', '--pgdata', pgdata], {
      env,
      cwd: dir,
      stdio: ['ignore', log, log],
      ...asUser,
    });
    closeSync(log);
    logs.push(`${pgdata}.log`);
    runs.push(child);
    runOf.set(pgdata, child);
  };
  const [monitorPort, port1, port2] = [await freePort(), await freePort(), await freePort()];
  const monitor = join(dir, 'monitor');
  const nodes: Array<{ pgdata: string; port: number }> = [
    { pgdata: join(dir, 'node1'), port: port1 },
    { pgdata: join(dir, 'node2'), port: port2 },
  ];
  const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl'];
  const stop = async () => {
    // Nodes first, then the monitor; each pg_autoctl stops its own postgres on SIGTERM.
    for (const child of [...runs].reverse()) await stopChild(child, 'SIGTERM', 30_000);
    rmSync(dir, { recursive: true, force: true });
  };
  const state = async (): Promise<AutoFailoverNode[]> => {
    const text = await autoctl(['show', 'state', '--pgdata', monitor, '--json'], 20_000);
    const rows = JSON.parse(text) as Array<Record<string, unknown>>;
    return rows.map((row) => ({
      name: String(row.nodename ?? row.node_name ?? row.name ?? ''),
      port: Number(row.nodeport ?? row.node_port ?? row.port),
      reportedState: String(row.current_group_state ?? row.reported_state ?? ''),
      assignedState: String(row.assigned_group_state ?? row.assigned_state ?? ''),
    }));
  };
  const writable = async (port: number) => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const rows = (await client.query<{ ro: string }>(`select current_setting('transaction_read_only') as ro`)).rows;
      return rows[0]?.ro === 'off';
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const waitForPrimary = async (timeoutMs = 90_000): Promise<AutoFailoverNode> => {
    let found: AutoFailoverNode | undefined;
    await waitFor(
      async () => {
        const nodes = await state();
        found = nodes.find((n) => WRITABLE_STATES.has(n.reportedState) && n.assignedState === n.reportedState);
        return found !== undefined && (await writable(found.port));
      },
      'a pg_auto_failover primary',
      timeoutMs,
    );
    return found as AutoFailoverNode;
  };
  const formed = async (timeoutMs: number) => {
    await waitFor(
      async () => {
        const nodes = await state();
        return (
          nodes.length === 2 &&
          nodes.some((n) => n.reportedState === 'primary' && n.assignedState === 'primary') &&
          nodes.some((n) => n.reportedState === 'secondary' && n.assignedState === 'secondary')
        );
      },
      'the pg_auto_failover formation (a primary and a secondary)',
      timeoutMs,
    );
  };
  try {
    await autoctl(['create', 'monitor', '--pgdata', monitor, '--pgport', String(monitorPort), ...common]);
    run(monitor);
    const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
    await waitFor(() => portOpen(monitorPort), 'the pg_auto_failover monitor', 30_000);
    const monitorSettings = Object.entries(options.settings?.monitor ?? {});
    if (monitorSettings.length > 0) {
      let admin!: pg.Client;
      await waitFor(
        async () => {
          const client = new pg.Client({
            host: '127.0.0.1',
            port: monitorPort,
            user: 'postgres',
            database: 'postgres',
          });
          client.on('error', () => undefined);
          await client.connect().catch(async (error) => {
            await client.end().catch(() => undefined);
            throw error;
          });
          admin = client;
          return true;
        },
        'a connection to the monitor',
        30_000,
      );
      try {
        for (const [name, value] of monitorSettings) {
          if (!/^pgautofailover\.[a-z_]+$/.test(name) || !/^[0-9]+$/.test(value))
            throw new Error(`bad monitor setting ${name}=${value}`);
          await admin.query(`alter system set ${name} = ${value}`);
        }
        await admin.query('select pg_reload_conf()');
      } finally {
        await admin.end();
      }
    }
    for (const node of nodes) {
      await autoctl([
        'create',
        'postgres',
        '--pgdata',
        node.pgdata,
        '--pgport',
        String(node.port),
        // Loopback only (with listen_addresses '*' the IPv4 socket was seen refused "address in use" at first start).
        '--listen',
        '127.0.0.1',
        ...common,
        '--monitor',
        monitorUri,
      ]);
      for (const [name, value] of Object.entries(options.settings?.keeper ?? {})) {
        await autoctl(['config', 'set', '--pgdata', node.pgdata, name, value]);
      }
      run(node.pgdata);
      // The second node is made from the first with pg_basebackup: the first must be primary before it is created.
      if (node === nodes[0]) await waitForPrimary(60_000);
    }
    await formed(options.formTimeoutMs ?? 120_000);
    const uri = (await autoctl(['show', 'uri', '--pgdata', monitor, '--formation', 'default'], 20_000)).trim();
    const url = uri.includes('@') ? uri : uri.replace('://', '://postgres@');
    const primaryOf = (nodes: AutoFailoverNode[]) => nodes.find((n) => n.reportedState === 'primary');
    return {
      url,
      uri,
      ports: [port1, port2],
      state,
      switchover: async () => {
        await autoctl(['perform', 'switchover', '--pgdata', monitor, '--formation', 'default', '--group', '0']);
        return waitForPrimary();
      },
      killPrimary: async () => {
        const primary = primaryOf(await state());
        const node = nodes.find((n) => n.port === primary?.port);
        if (!primary || !node) throw new Error('no primary to kill');
        const pid = Number(readFileSync(join(node.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
        if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no postmaster pid in ${node.pgdata}`);
        process.kill(pid, 'SIGKILL');
        return primary;
      },
      killPrimaryNode: async () => {
        const primary = primaryOf(await state());
        const node = nodes.find((n) => n.port === primary?.port);
        if (!primary || !node) throw new Error('no primary to kill');
        // The node's `pg_autoctl run` and every process under it (its supervised subprocesses, which rename
        // themselves, and postgres with its backends): stopped first, so that no supervisor restarts what was killed.
        const keeper = runOf.get(node.pgdata);
        if (!keeper?.pid) throw new Error(`no pg_autoctl run of ${node.pgdata}`);
        const pids = [keeper.pid, ...descendants(keeper.pid)];
        for (const signal of ['SIGSTOP', 'SIGKILL'] as const) {
          for (const pid of pids) {
            try {
              process.kill(pid, signal);
            } catch {
              // gone already
            }
          }
        }
        return primary;
      },
      waitForPrimary,
      stop,
    };
  } catch (error) {
    const tail = logs
      .map((file) =>
        existsSync(file) ? `--- ${file}\n${readFileSync(file, 'utf8').split('\n').slice(-30).join('\n')}` : '',
      )
      .join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${tail}`, { cause: error });
  }
}
