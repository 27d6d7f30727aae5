// The service under the fault suite: PostgreSQL with fsync on, NATS and the five programs as separate processes (the
// way Kubernetes runs them; services/launcher/tools/processes.ts), each of which the suite can kill, stop and start
// again on the same port. Everything listens on 127.0.0.1 only. A topology chooses the production shapes the newer
// faults need (docs/reliability.md): PostgreSQL through PgBouncer in transaction mode, or a pg_auto_failover formation
// reached by its multi-host URL; a three-node NATS cluster; two replicas of every program with the edges behind
// HAProxy.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { type StartedHaproxy, startHaproxy } from '../../services/launcher/tools/haproxy.ts';
import { type NatsCluster, startNatsCluster } from '../../services/launcher/tools/nats-cluster.ts';
import { createPgBackRest, type PgBackRest } from '../../services/launcher/tools/pgbackrest.ts';
import {
  EDGES,
  type ProgramName as LauncherProgramName,
  PROGRAM_ENTRIES,
  PROGRAMS as PROGRAM_ORDER,
  type ProgramReplica,
  type ProgramSpec,
  type Programs,
  type ReplicaPlacement,
  rollingRestart,
  startPrograms,
} from '../../services/launcher/tools/processes.ts';
import {
  freePort,
  type StartedNats,
  type StartedPostgres,
  startNats,
  startPostgres,
  waitPort,
} from '../../services/launcher/tools/servers.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import {
  type AutoFailoverSettings,
  type StartedAutoFailover,
  type StartedPgBouncer,
  startAutoFailover,
  startPgBouncer,
} from '../support/servers.ts';
import { createPartitions, type DelayProxy, type Partitions, startDelayProxy } from './netns.ts';
import { type PreviousRelease, runMigrations, unpackPreviousRelease } from './previous-release.ts';

export { waitPort };

/** The delay proxy's ports inside a namespace (a fresh namespace has nothing else listening). */
const PROXY_POSTGRES_PORT = 15432;
const PROXY_NATS_PORT = 14222;

export const PROGRAMS = Object.fromEntries(PROGRAM_ORDER.map((name) => [name, PROGRAM_ENTRIES[name]])) as {
  [K in LauncherProgramName]: (typeof PROGRAM_ENTRIES)[K];
};
export type ProgramName = LauncherProgramName;

/** A running replica of a program (the first one when a program has several). */
export type RunningProgram = ProgramReplica;

/** The production shapes a fault may need (docs/reliability.md, "The production topology"). */
export interface FaultTopology {
  /** How the state owners reach PostgreSQL: directly, through PgBouncer (transaction mode), or a failover formation. */
  database: 'direct' | 'pgbouncer' | 'auto-failover';
  /** One nats-server, or a three-node cluster (every program given all three URLs). */
  nats: 'single' | 'cluster';
  /** Replicas of every program. */
  replicas: number;
  /** HAProxy in front of the edges' replicas: the world and the load go through it. */
  balancer: boolean;
  /**
   * Ledger replicas each in a network namespace of its own (test/faults/netns.ts; the other programs on the host),
   * instead of `replicas` of them on the host; with `delayProxy`, each reaches PostgreSQL and NATS through a delay
   * proxy inside its namespace.
   */
  ledgerNamespaces?: number;
  delayProxy?: boolean;
  /**
   * pgBackRest with a local repository (services/launcher/tools/pgbackrest.ts): the server archives its WAL there
   * (archive_command, archive_timeout `ARCHIVE_TIMEOUT_SECONDS`) and records commit times; `backups` takes backups and
   * restores to a point in time.
   */
  backups?: boolean;
  /**
   * `previous`: the programs start as the previous release's (.ci/previous-release, unpacked from this clone's
   * history: previous-release.ts) on a database migrated by its migrations, with a spare port per replica of every
   * program (in HAProxy's backends, DOWN until something listens) so that a rolling upgrade can start a new replica
   * before an old one leaves (test/faults/upgrade.ts).
   */
  release?: 'previous';
}

export const DEFAULT_TOPOLOGY: FaultTopology = { database: 'direct', nats: 'single', replicas: 1, balancer: false };

/**
 * pg_auto_failover's settings for a promotion within seconds (docs/deploy.md, "PostgreSQL: pooler and failover"): the
 * monitor checks each node every second (1 s timeout, 1 retry 0.5 s later) and deems a node unhealthy once its keeper has
 * not reported for 3 s; a standby is promoted after the primary had 6 s to demote itself (defaults: 5 s, 5 s, 2,
 * 2 s, 20 s and 30 s). A keeper cut from the monitor and its standby demotes its own primary after 4 s (default 20 s),
 * within the 6 s the monitor waits: never two primaries.
 */
export const AUTO_FAILOVER_SETTINGS: AutoFailoverSettings = {
  monitor: {
    'pgautofailover.health_check_period': '1000',
    'pgautofailover.health_check_timeout': '1000',
    'pgautofailover.health_check_max_retries': '1',
    'pgautofailover.health_check_retry_delay': '500',
    'pgautofailover.node_considered_unhealthy_timeout': '3000',
    'pgautofailover.primary_demote_timeout': '6000',
  },
  keeper: { 'timeout.network_partition_timeout': '4' },
};

/** PgBouncer's server connections per database and user in the `pgbouncer` topology (small: sessions are shared). */
export const POOLER_POOL_SIZE = 4;
/** HAProxy's health check interval; with `fall 1` a replica that turns unready is out within this. */
export const BALANCER_CHECK_INTERVAL_MS = 500;
/** SHUTDOWN_DRAIN_MS of the edges behind the balancer: unready but serving for longer than the balancer takes to see it. */
export const EDGE_DRAIN_MS = 1_500;

/** archive_timeout of the `backups` topology's server: short, so that the drill's target time is archived soon. */
export const ARCHIVE_TIMEOUT_SECONDS = 5;

export function describeTopology(t: FaultTopology): string {
  const database = {
    direct: 'PostgreSQL',
    pgbouncer: `PostgreSQL through PgBouncer (transaction mode, pool ${POOLER_POOL_SIZE})`,
    'auto-failover': 'a pg_auto_failover formation (multi-host DATABASE_URL)',
  }[t.database];
  const nats = t.nats === 'cluster' ? 'a 3-node NATS cluster' : 'nats-server';
  const backups = t.backups ? ` archiving its WAL to pgBackRest (archive_timeout ${ARCHIVE_TIMEOUT_SECONDS} s)` : '';
  const programs = t.replicas === 1 ? 'the five programs' : `${t.replicas} replicas of each program`;
  const namespaces = t.ledgerNamespaces
    ? `, ${t.ledgerNamespaces === 1 ? 'the ledger' : `${t.ledgerNamespaces} ledgers`} in network namespaces of their own${t.delayProxy ? ' behind a delay proxy' : ''}`
    : '';
  const release = t.release === 'previous' ? ' of the previous release (.ci/previous-release)' : '';
  return `${database}${backups}, ${nats}, ${programs}${release}${t.balancer ? ' (edges behind HAProxy)' : ''}${namespaces}`;
}

export interface FaultSystem {
  topology: FaultTopology;
  /** What the state owners are given as DATABASE_URL. */
  databaseUrl: string;
  natsUrl: string;
  /** The edges' URLs (the balancer's when there is one) and the state owners' first replicas. */
  urls: Record<ProgramName, string>;
  programs: Programs;
  /** The first replica of a program. */
  program(name: ProgramName): RunningProgram;
  /** SIGKILL of the first replica; resolves once the process is gone. */
  kill(name: ProgramName): Promise<void>;
  /** Starts the first replica again on its port with its environment; resolves once /readyz answers 200. */
  restart(name: ProgramName): Promise<void>;
  /**
   * Starts another copy of a program with its HTTP port set to `port` (e.g. one that is taken); resolves with its
   * exit code once it exits, or null if it is still running after `timeoutMs` (then it is killed).
   */
  startExtra(name: ProgramName, port: number, label: string, timeoutMs: number): Promise<number | null>;
  /** The single nats-server: SIGKILL, and start again on its port. */
  killNats(): Promise<void>;
  startNatsAgain(): Promise<void>;
  /** The PostgreSQL cluster (undefined in the auto-failover topology: there are two). */
  postgres: StartedPostgres | undefined;
  bouncer?: StartedPgBouncer;
  formation?: StartedAutoFailover;
  natsCluster?: NatsCluster;
  balancer?: StartedHaproxy;
  /** A URL of the database itself for the checks (never through the pooler; the current primary). */
  checkDatabaseUrl(): Promise<string>;
  /** Every program restarted one replica at a time (edges: until the balancer sees the new one up). */
  rollingRestart(log: (line: string) => void): Promise<string>;
  /** The PgBouncer process (to signal it); undefined without one. */
  bouncerPid(): number | undefined;
  /** The pgBackRest repository of the `backups` topology. */
  backups?: PgBackRest;
  /** The ledgers' namespaces (index i: ledger replica i), the servers' ports and the delay proxies, when partitioned. */
  partitions?: Partitions;
  natsPort: number;
  delayProxies: DelayProxy[];
  /** The previous release the programs started as (topology `release: 'previous'`). */
  previousRelease?: PreviousRelease;
  /** Per program, the spare ports of the rolling upgrade's surge (`release: 'previous'`; edges: in HAProxy, DOWN). */
  surgePorts: Partial<Record<ProgramName, number[]>>;
  /** Where the programs' logs go. */
  logDir: string;
  /** Why processes exited while starting and were started again (waitReadyRestarting; `upgrade` topology). */
  startFailures: string[];
  stop(): Promise<void>;
}

export interface FaultSystemOptions {
  env: Record<string, string>;
  logDir: string;
  log: (line: string) => void;
  topology?: FaultTopology;
  startTimeoutMs?: number;
}

/** Starts of a process that exits while starting after which waitReadyRestarting gives up. */
export const START_ATTEMPTS = 4;

/**
 * Waits for a replica's /readyz 200, starting its process again when it exits while starting (up to START_ATTEMPTS
 * starts), as the kubelet restarts a pod's container: the `upgrade` topology's programs, whose start-up on this loaded
 * machine can lose its NATS connection (nats-server drops a client that misses 2 pings 250 ms apart) and exit.
 * Answers why each start failed (the last error line of its output), for the phase's note.
 */
export async function waitReadyRestarting(replica: ProgramReplica, log: (line: string) => void): Promise<string[]> {
  const failures: string[] = [];
  for (;;) {
    try {
      await replica.waitReady();
      return failures;
    } catch (error) {
      if (replica.running() || failures.length + 1 >= START_ATTEMPTS) throw error;
      const why =
        replica
          .output()
          .split('\n')
          .filter((line) => line.includes('"level":50') || line.includes('"level":60'))
          .at(-1)
          ?.slice(0, 300) ?? (error as Error).message;
      failures.push(`${replica.name}: ${why}`);
      log(`${replica.name} exited while starting, started again (${failures.length}): ${why}`);
      replica.start();
    }
  }
}

/** The same URL on another database (path). */
function withDatabase(url: string, database: string): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
}

/** A pgbouncer process whose command line names a file in `dir` (its ini file). */
function findProcessIn(dir: string, program: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith(program) && args.some((a) => a.startsWith(`${dir}/`))) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

export async function startFaultSystem(options: FaultSystemOptions): Promise<FaultSystem> {
  const { log } = options;
  const topology = options.topology ?? DEFAULT_TOPOLOGY;
  const cleanups: Array<() => Promise<void>> = [];
  let programs: Programs | undefined;
  let balancer: StartedHaproxy | undefined;
  let partitions: Partitions | undefined;
  const delayProxies: DelayProxy[] = [];
  let backups: PgBackRest | undefined;

  const stop = async () => {
    await balancer?.stop();
    await programs?.stop(10_000);
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`cleanup failed: ${(error as Error).message}`);
      }
    }
  };

  try {
    if (topology.ledgerNamespaces) {
      partitions = await createPartitions(topology.ledgerNamespaces);
      const made = partitions;
      cleanups.push(async () => made.remove());
      log(
        `network namespaces ${made.namespaces.map((ns) => `${ns.name} (${ns.address})`).join(', ')}; servers on ${made.serversAddress}`,
      );
    }
    const databaseName = `faults_${randomBytes(4).toString('hex')}`;
    let postgres: StartedPostgres | undefined;
    let bouncer: StartedPgBouncer | undefined;
    let formation: StartedAutoFailover | undefined;
    /** The database itself (for migrations and the checks), resolved when asked (the primary may move). */
    let directUrl: () => Promise<string>;
    let databaseUrl: string;
    if (topology.database === 'auto-failover') {
      log('starting a pg_auto_failover formation (monitor, primary, synchronous standby; about 30 s)');
      formation = await startAutoFailover({ settings: AUTO_FAILOVER_SETTINGS });
      const started = formation;
      cleanups.push(() => started.stop());
      directUrl = async () => `postgres://postgres@127.0.0.1:${(await started.waitForPrimary()).port}/${databaseName}`;
      const primary = await started.waitForPrimary();
      const admin = new pg.Client({ host: '127.0.0.1', port: primary.port, user: 'postgres', database: 'postgres' });
      await admin.connect();
      await admin.query(`create database ${databaseName}`);
      await admin.end();
      // The formation's URI (`postgres://h1:p1,h2:p2/postgres?target_session_attrs=read-write&sslmode=prefer`) on
      // the suite's database, as user postgres (node-postgres would take the operating system's user).
      const uri = /^postgres(?:ql)?:\/\/(?:[^@/]*@)?([^/?]*)\/[^?]*(\?.*)?$/.exec(started.url);
      if (!uri) throw new Error(`cannot read the formation's URI ${started.url}`);
      databaseUrl = `postgres://postgres@${uri[1]}/${databaseName}${uri[2] ?? '?target_session_attrs=read-write'}`;
      log(`formation ready: DATABASE_URL ${databaseUrl}`);
    } else {
      log('starting PostgreSQL (initdb; fsync, synchronous_commit and full_page_writes on)');
      if (topology.backups) {
        const made = createPgBackRest({ archiveTimeoutSeconds: ARCHIVE_TIMEOUT_SECONDS });
        backups = made;
        cleanups.push(async () => made.remove());
      }
      const started = await startPostgres({
        durable: true,
        ...(backups ? { settings: backups.serverSettings } : {}),
        ...(partitions
          ? { listen: { addresses: [partitions.serversAddress], clientNetworks: [partitions.network] } }
          : {}),
      });
      postgres = started;
      cleanups.push(started.stop);
      if (backups) {
        await backups.attach(started);
        log('pgBackRest: stanza created, WAL archiving checked');
      }
      const admin = new pg.Client({ connectionString: started.url });
      await admin.connect();
      await admin.query(`create database ${databaseName}`);
      await admin.end();
      const direct = withDatabase(started.url, databaseName);
      directUrl = async () => direct;
      databaseUrl = direct;
      if (topology.database === 'pgbouncer') {
        bouncer = await startPgBouncer({ postgresPort: started.port, poolSize: POOLER_POOL_SIZE });
        const pooler = bouncer;
        cleanups.push(() => pooler.stop());
        databaseUrl = withDatabase(pooler.url, databaseName);
        log(`PgBouncer (transaction mode, default_pool_size ${POOLER_POOL_SIZE}) on ${pooler.port}`);
      }
    }
    // Migrated once here, on the database itself, so that the state owners do not race on an empty database; by the
    // release the programs start as.
    let previousRelease: PreviousRelease | undefined;
    if (topology.release === 'previous') {
      previousRelease = await unpackPreviousRelease();
      const unpacked = previousRelease;
      cleanups.push(async () => unpacked.remove());
      log(`previous release ${unpacked.tag} (${unpacked.commit.slice(0, 12)}) unpacked in ${unpacked.root}`);
      mkdirSync(options.logDir, { recursive: true });
      await runMigrations(unpacked.root, await directUrl(), join(options.logDir, 'migrate.log'));
    } else {
      await migrate(await directUrl(), [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    }

    let nats: StartedNats | undefined;
    let natsCluster: NatsCluster | undefined;
    let natsPort = 0;
    let natsUrl: string;
    // Partitioned: every program uses the servers' address (the namespaces cannot reach the host's 127.0.0.1).
    const natsHost = partitions?.serversAddress ?? '127.0.0.1';
    if (topology.nats === 'cluster') {
      natsCluster = await startNatsCluster({ size: 3, name: 'faults', logDir: options.logDir });
      const cluster = natsCluster;
      cleanups.push(() => cluster.stop());
      natsUrl = cluster.url;
      log(`NATS cluster: ${natsUrl}`);
    } else {
      natsPort = await freePort();
      nats = await startNats(natsPort, { host: natsHost, configFile: natsServerConfig(options.logDir) });
      cleanups.push(() => nats!.stop());
      natsUrl = nats.url;
      log(`nats-server on ${natsUrl}`);
    }

    const specs: Partial<Record<ProgramName, ProgramSpec>> = {};
    for (const name of PROGRAM_ORDER) {
      const edge = (EDGES as readonly string[]).includes(name);
      // Behind the balancer an edge drains (unready, still serving) after SIGTERM until HAProxy has taken it out;
      // without one nothing would notice, and the programs stop at once (the product's default is 11 s for edges).
      specs[name] = {
        replicas: topology.replicas,
        env: { SHUTDOWN_DRAIN_MS: String(topology.balancer && edge ? EDGE_DRAIN_MS : 0) },
      };
    }
    if (partitions) {
      const made = partitions;
      const pgPort = postgres!.port;
      const placements: ReplicaPlacement[] = [];
      for (const ns of made.namespaces) {
        let database = `postgres://postgres@${made.serversAddress}:${pgPort}/${databaseName}`;
        let nats = `nats://${made.serversAddress}:${natsPort}`;
        if (topology.delayProxy) {
          const proxy = await startDelayProxy(ns, [
            `${PROXY_POSTGRES_PORT}=${made.serversAddress}:${pgPort}`,
            `${PROXY_NATS_PORT}=${made.serversAddress}:${natsPort}`,
          ]);
          delayProxies.push(proxy);
          cleanups.push(() => proxy.stop());
          database = `postgres://postgres@127.0.0.1:${PROXY_POSTGRES_PORT}/${databaseName}`;
          nats = `nats://127.0.0.1:${PROXY_NATS_PORT}`;
        }
        placements.push({ namespace: ns.name, host: ns.address, env: { DATABASE_URL: database, NATS_URL: nats } });
      }
      specs.ledger = { ...specs.ledger, replicas: made.namespaces.length, placements };
    }
    programs = await startPrograms({
      programs: specs,
      // A ledger with DATABASE_URL needs WEBHOOK_SECRET_KEY: one key for the run, the same for every replica and restart.
      env: {
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
        ...options.env,
        DATABASE_URL: databaseUrl,
        NATS_URL: natsUrl,
      },
      logDir: options.logDir,
      host: '127.0.0.1',
      startTimeoutMs: options.startTimeoutMs ?? 120_000,
      ...(previousRelease ? { root: previousRelease.root, wait: 'none' as const } : {}),
    });
    const startFailures: string[] = [];
    if (previousRelease) {
      const started = programs;
      for (const failures of await Promise.all(started.replicas.map((r) => waitReadyRestarting(r, log)))) {
        startFailures.push(...failures);
      }
    }
    const surgePorts: Partial<Record<ProgramName, number[]>> = {};
    if (previousRelease) {
      for (const name of PROGRAM_ORDER) {
        surgePorts[name] = [];
        for (let i = 0; i < topology.replicas; i++) surgePorts[name].push(await freePort());
      }
    }
    /** Server names of the surge ports: after the replicas' (`<program>-<n>`). */
    const surgeName = (name: ProgramName, i: number) => `${name}-${topology.replicas + i + 1}`;
    const started = programs;
    log(`${started.replicas.length} processes ready (${describeTopology(topology)})`);
    const urls = Object.fromEntries(PROGRAM_ORDER.map((name) => [name, started.get(name).url])) as Record<
      ProgramName,
      string
    >;
    if (topology.balancer) {
      balancer = await startHaproxy({
        backends: Object.fromEntries(
          EDGES.map((edge) => [
            edge,
            [
              ...started.of(edge).map((r) => ({ name: r.name, port: r.port })),
              ...(surgePorts[edge] ?? []).map((port, i) => ({ name: surgeName(edge, i), port })),
            ],
          ]),
        ),
        checkIntervalMs: BALANCER_CHECK_INTERVAL_MS,
        logDir: options.logDir,
      });
      const proxy = balancer;
      for (const edge of EDGES) {
        for (const replica of started.of(edge)) await proxy.waitStatus(edge, replica.name, 'UP');
        // Nothing listens on the surge ports yet: out of the rotation before any load.
        for (const [i] of (surgePorts[edge] ?? []).entries()) await proxy.waitStatus(edge, surgeName(edge, i), 'DOWN');
        urls[edge] = proxy.urls[edge]!;
      }
      log(`HAProxy: ${EDGES.map((edge) => `${edge} ${proxy.urls[edge]}`).join(', ')}; stats ${proxy.statsUrl}`);
    }
    const program = (name: ProgramName) => started.get(name);

    return {
      topology,
      databaseUrl,
      natsUrl,
      urls,
      programs: started,
      postgres,
      ...(bouncer ? { bouncer } : {}),
      ...(formation ? { formation } : {}),
      ...(natsCluster ? { natsCluster } : {}),
      ...(balancer ? { balancer } : {}),
      program,
      async kill(name) {
        await program(name).kill('SIGKILL');
      },
      async restart(name) {
        const replica = program(name);
        if (replica.running()) await replica.stop();
        replica.start();
        await replica.waitReady();
      },
      async startExtra(name, port, label, timeoutMs) {
        const extra = started.launch(name, { port, label });
        const timer = setTimeout(() => extra.child.kill('SIGKILL'), timeoutMs);
        const code = await extra.exited;
        clearTimeout(timer);
        return extra.child.signalCode === 'SIGKILL' ? null : code;
      },
      async killNats() {
        if (!nats) throw new Error('no single nats-server in this topology');
        const child = nats.process;
        await new Promise<void>((r) => {
          if (child.exitCode !== null || child.signalCode !== null) r();
          else {
            child.once('exit', () => r());
            child.kill('SIGKILL');
          }
        });
      },
      async startNatsAgain() {
        if (!nats) throw new Error('no single nats-server in this topology');
        nats = await startNats(natsPort, { host: natsHost, configFile: natsServerConfig(options.logDir) });
      },
      checkDatabaseUrl: () => directUrl(),
      async rollingRestart(stepLog) {
        const steps = await rollingRestart(started, {
          afterReady: async (replica) => {
            // A Service sends to a new pod once its readiness probe passed: here, once HAProxy has seen it up.
            if (balancer && (EDGES as readonly string[]).includes(replica.program)) {
              await balancer.waitStatus(replica.program, replica.name, 'UP', 10_000);
            }
          },
          log: stepLog,
        });
        const slowest = steps.reduce((a, b) => (b.stopMs > a.stopMs ? b : a), steps[0]!);
        return (
          `${steps.length} replicas restarted one at a time; exits ${[...new Set(steps.map((s) => s.code))].join(', ')}; ` +
          `slowest stop ${slowest.name} ${(slowest.stopMs / 1000).toFixed(2)} s; ` +
          `starts ${(Math.min(...steps.map((s) => s.startMs)) / 1000).toFixed(1)} to ${(Math.max(...steps.map((s) => s.startMs)) / 1000).toFixed(1)} s`
        );
      },
      bouncerPid: () => (bouncer ? findProcessIn(dirname(bouncer.logPath), 'pgbouncer') : undefined),
      ...(partitions ? { partitions } : {}),
      ...(backups ? { backups } : {}),
      natsPort,
      delayProxies,
      ...(previousRelease ? { previousRelease } : {}),
      surgePorts,
      startFailures,
      logDir: options.logDir,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The nats-server settings the deployment guide recommends (docs/deploy.md, "Dead connections"): the server pings a
 * client it has heard nothing from for 1 s and drops it after 3 unanswered, so that a state owner cut from NATS stops
 * getting its queue group's share within about 4 s instead of the default 2 min x 2, while a program whose event loop
 * stalls for a second or two (starting on a busy machine) is not dropped.
 */
function natsServerConfig(dir: string): string | undefined {
  // FAULTS_NATS_SERVER_DEFAULTS=true: nats-server on its own defaults (pings every 2 min, 2 missed), as an existing
  // installation often is; the availability the partitions print is then the service's own doing.
  if (process.env.FAULTS_NATS_SERVER_DEFAULTS === 'true') return undefined;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'nats-server.conf');
  writeFileSync(file, 'ping_interval: "1s"\nping_max: 3\n');
  return file;
}
