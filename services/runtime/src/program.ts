// A program is one of the five: edges contribute HTTP routes, state owners serve operations over the transport.
// `runStandalone` runs one program alone (Kubernetes, `npm run start:<program>`); the all-in-one process
// composes all five with the same pieces.
import { createServer, type Server } from 'node:http';
import { flushCompileCache } from 'node:module';
import type Router from '@koa/router';
import type Koa from 'koa';
import { type Clock, databaseClock } from './clock.ts';
import { WARM_COMPILE_CACHE_FLAG, warmCompileCache } from './compile-cache.ts';
import { EnvReader, readCommonConfig } from './config.ts';
import type { Database } from './db/database.ts';
import type { MigrationSet } from './db/migrations.ts';
import { readDatabaseUrl } from './db/url.ts';
import { AppError } from './errors.ts';
import { createHttpApp } from './http/app.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { PlatformSwitch } from './platform-switch.ts';
import { shutdownTracing } from './tracing/settings.ts';
import { NatsTransport } from './transport/nats.ts';
import type { ServedService, ServiceDefinition, Transport } from './transport/operation.ts';

export type ProgramName = 'gateway' | 'ingest' | 'links' | 'ledger' | 'identity-admission';

export interface ProgramDeps {
  logger: Logger;
  metrics: Metrics;
  transport: Transport;
  platform: PlatformSwitch;
  /** The composer hands the database to state owners only; they receive it as `StateOwnerDeps.database`. */
  database?: Database;
  /** The state owners' clock (tests set one); the database's `now()` (databaseClock) when not given. */
  clock?: Clock;
  /**
   * Where the local development identity provider keeps its keys (DATA_DIR), handed over only where that provider may
   * be trusted: the local development default (the all-in-one process on its embedded database), or a process started
   * with UNSAFE_DEV_IDENTITY_PROVIDER=true. Undefined everywhere else, so that no deployment falls back to it
   * (docs/identity.md, "The local development identity provider").
   */
  devIdentityDataDir?: string;
}

export interface Program {
  name: ProgramName;
  routes?: (router: Router) => void;
  services?: ServiceDefinition[];
  /**
   * Long-lived connections on the HTTP server (the gateway's WebSockets): `attach` once the server exists, before it
   * listens; `close` first at shutdown, before the server closes (open sockets would keep it from closing).
   */
  upgrades?: { attach(server: Server): void; close(): Promise<void> };
  close?: () => Promise<void>;
}

export interface ProgramModule<C> {
  name: ProgramName;
  /** State owners: their schema's migrations (repositories talk SQL; no ORM entities are mapped). */
  database?: {
    migrations: MigrationSet;
  };
  readConfig(reader: EnvReader): C;
  create(deps: ProgramDeps, config: C): Promise<Program>;
}

/** What a state owner is given: its database and its clock are required dependencies. */
export interface StateOwnerDeps extends ProgramDeps {
  database: Database;
  clock: Clock;
}

/** A state owner as written: `create` receives its database, never undefined. */
export interface StateOwnerModule<C> {
  name: ProgramName;
  database: { migrations: MigrationSet };
  readConfig(reader: EnvReader): C;
  create(deps: StateOwnerDeps, config: C): Promise<Program>;
}

/**
 * A state owner as the composers (runStandalone, the all-in-one process, tests) start it: the one place that checks
 * that a database was handed over, so that the owner's code takes `database` as given; the clock is the database's
 * unless one was handed over.
 */
export function stateOwner<C>(module: StateOwnerModule<C>): ProgramModule<C> {
  return {
    name: module.name,
    database: module.database,
    readConfig: (reader) => module.readConfig(reader),
    create(deps, config) {
      const { database } = deps;
      if (!database) throw new Error(`${module.name} is a state owner: it needs its database`);
      return module.create({ ...deps, database, clock: deps.clock ?? databaseClock }, config);
    },
  };
}

/** Closes things in order on SIGTERM/SIGINT; a second signal or a stuck step past the deadline exits at once. */
export function onShutdown(
  logger: Logger,
  steps: Array<[string, () => Promise<void>]>,
  deadlineMs = 10_000,
): () => boolean {
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline passed: exiting');
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    let code = 0;
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (error) {
        code = 1;
        logger.error({ err: error, step: name }, 'shutdown step failed');
      }
    }
    try {
      await shutdownTracing();
    } catch (error) {
      logger.warn({ err: error }, 'trace export at shutdown failed');
    }
    logger.info('stopped');
    process.exit(code);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return () => shuttingDown;
}

export function listen(server: Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * Stops accepting connections, closes the idle keep-alive ones at once and each busy one as soon as its request is
 * answered (responses during shutdown say `Connection: close`, http/app.ts; the sweep catches any other), and resolves
 * once every connection is gone.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * `npm run start:<program>` and `npm start` put npm between a signal and the program: npm exits on SIGTERM without
 * passing it on, and the program would be orphaned, never stopping gracefully. Started by npm (npm_lifecycle_event
 * set), the program watches its parent and, once that is gone, stops as if it had received SIGTERM itself.
 */
export function stopWhenNpmParentExits(env: NodeJS.ProcessEnv = process.env): void {
  if (!env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 200);
  watch.unref();
}

/** Runs one program alone against real NATS (and PostgreSQL for state owners). */
export async function runStandalone<C>(module: ProgramModule<C>): Promise<void> {
  if (process.argv.includes(WARM_COMPILE_CACHE_FLAG))
    return warmCompileCache(module.name, module.database !== undefined);
  const reader = new EnvReader();
  const common = readCommonConfig(reader);
  const httpPort = reader.int('HTTP_PORT', 8080, { min: 0, max: 65535 });
  reader.check(common.natsUrl !== undefined, 'NATS_URL is required when a program runs alone');
  // libpq's multi-host form is allowed (db/url.ts): reader.url would split its host list at the commas.
  const databaseUrl = module.database ? readDatabaseUrl(reader) : undefined;
  if (module.database) reader.check(databaseUrl !== undefined, 'DATABASE_URL is required for a state owner');
  const databasePoolMax = reader.int('DATABASE_POOL_MAX', 10, { min: 1, max: 200 });
  const databaseNamedStatements = reader.bool('DATABASE_NAMED_STATEMENTS', false);
  // SHUTDOWN_DRAIN_MS: after SIGTERM an edge answers /readyz 503 and goes on serving this long, so that a balancer
  // or a Service whose readiness probe runs every 5 s and fails after 2 (the chart's defaults) has taken it out
  // before it stops accepting. State owners need none: leaving their queue groups is immediate.
  const drainMsAsked = reader.int('SHUTDOWN_DRAIN_MS', -1, { min: -1, max: 120_000 });
  const config = module.readConfig(reader);
  const logger = createLogger(module.name, common.logLevel);
  try {
    reader.done();
  } catch (error) {
    logger.fatal((error as Error).message);
    process.exit(2);
  }

  const metrics = createMetrics();
  // Start-up order: HTTP (probes only: /healthz 200, /readyz 503), NATS, the database, the program, its routes, and
  // only then the queue groups. A program that joined its queue group is sent requests at once; if it then failed
  // and exited, the requests routed to it would be lost until their callers' timeouts. A taken HTTP port fails first,
  // before anything joined. NATS unreachable at start-up is no failure: the program stays up, not ready, and keeps
  // trying (every 0.5 s) until a server answers. Any start-up failure drains what was started before exiting.
  let transport: NatsTransport | undefined;
  let database: Database | undefined;
  let program: Program | undefined;
  let server: Server | undefined;
  const served: ServedService[] = [];
  let serving = false;
  let isShuttingDown = () => false;
  let handle: ReturnType<Koa['callback']> = createHttpApp({
    program: module.name,
    logger,
    metrics,
    // Until the program is ready, every route but the probes answers 503 (Retry-After), never a misleading 404.
    routes: [
      (router) =>
        router.all('/{*path}', () => {
          throw new AppError('PLATFORM_UNAVAILABLE', `${module.name} is starting; retry later.`);
        }),
    ],
    readiness: async () => ({ nats: transport?.isReady() ?? false, ...(module.database ? { database: false } : {}) }),
    isShuttingDown: () => isShuttingDown(),
    trustProxy: common.trustProxy,
  }).callback();
  try {
    server = createServer((request, response) => handle(request, response));
    const port = await listen(server, httpPort, common.host);
    logger.info({ port }, `${module.name} listening (not ready until NATS${module.database ? ' and PostgreSQL' : ''})`);
    const unreachable = setTimeout(
      () => logger.warn({ url: common.natsUrl }, 'NATS unreachable: not ready, still trying'),
      2000,
    );
    transport = await NatsTransport.connect({
      url: common.natsUrl as string,
      connectionName: module.name,
      requestTimeoutMs: common.natsRequestTimeoutMs,
      eventRequestTimeoutMs: common.natsEventRequestTimeoutMs,
      undeliveredWaitMs: common.natsUndeliveredWaitMs,
      security: common.natsSecurity,
      logger,
      metrics,
      waitForFirstConnection: true,
    }).finally(() => clearTimeout(unreachable));
    const nats = transport;
    if (module.database && databaseUrl) {
      // Loaded here, not at the top: the programs without a database (gateway, ingest, links) never load MikroORM,
      // its migrator and the driver (about 30 MiB of code and heap each; docs/benchmarks.md, "Memory").
      const { Database, migrate } = await import('./db/database.ts');
      await migrate(databaseUrl, [module.database.migrations], logger);
      database = await Database.open({
        url: databaseUrl,
        poolMax: databasePoolMax,
        namedStatements: databaseNamedStatements,
        logger,
        metrics,
      });
    }
    const db = database;
    const platform = new PlatformSwitch(nats);
    program = await module.create({ logger, metrics, transport: nats, platform, database: db }, config);
    const services = program.services ?? [];
    const app = createHttpApp({
      program: module.name,
      logger,
      metrics,
      routes: program.routes ? [program.routes] : [],
      readiness: async () => ({
        nats: nats.isReady(),
        ...(db ? { database: await db.ping() } : {}),
        ...(services.length > 0 ? { serving } : {}),
      }),
      isShuttingDown: () => isShuttingDown(),
      trustProxy: common.trustProxy,
    });
    program.upgrades?.attach(server);
    handle = app.callback();
    for (const definition of services) served.push(await nats.serve(definition));
    serving = true;
    logger.info(`${module.name} ready`);
    // Every module a start loads is loaded now: their compiled forms go to Node's compile cache (NODE_COMPILE_CACHE;
    // nothing without it), so that the next replica started from the same files needs no type stripping.
    flushCompileCache();
  } catch (error) {
    logger.fatal({ err: error }, `${module.name} failed to start: draining before exit`);
    const started = program;
    const steps: Array<[string, () => Promise<void>]> = [
      ['upgrades', async () => started?.upgrades?.close()],
      ['http', async () => (server?.listening ? closeServer(server) : undefined)],
      ['services', async () => void (await Promise.all(served.map((s) => s.stop())))],
      ['program', async () => started?.close?.()],
      ['transport', async () => transport?.close()],
      ['database', async () => database?.close()],
    ];
    for (const [step, run] of steps) {
      try {
        await run();
      } catch (stepError) {
        logger.error({ err: stepError, step }, 'start-up cleanup step failed');
      }
    }
    process.exit(1);
  }
  const started = { server, transport, program, database };
  const drainMs = drainMsAsked >= 0 ? drainMsAsked : program?.routes ? 11_000 : 0;
  isShuttingDown = onShutdown(
    logger,
    [
      [
        'drain',
        async () => {
          if (drainMs === 0) return;
          logger.info({ drainMs }, 'draining: /readyz answers 503, still serving');
          await new Promise((resolve) => setTimeout(resolve, drainMs));
        },
      ],
      ['upgrades', async () => started.program?.upgrades?.close()],
      ['http', () => closeServer(started.server as Server)],
      ['services', async () => void (await Promise.all(served.map((s) => s.stop())))],
      ['program', async () => started.program?.close?.()],
      ['transport', async () => started.transport?.close()],
      ['database', async () => started.database?.close()],
    ],
    drainMs + 10_000,
  );
  stopWhenNpmParentExits();
}
