// A program is one of the five: edges contribute HTTP routes, state owners serve operations over the transport.
// `startPrograms` composes programs on one Lifecycle (lifecycle.ts): `runStandalone` runs one program alone
// (Kubernetes, `npm run start:<program>`), the launcher's in-process mode several (the all-in-one process, tests).
import { createServer, type Server } from 'node:http';
import { flushCompileCache } from 'node:module';
import { resolve } from 'node:path';
import type Router from '@koa/router';
import type Koa from 'koa';
import { type Clock, databaseClock } from './clock.ts';
import { WARM_COMPILE_CACHE_FLAG, warmCompileCache } from './compile-cache.ts';
import { EnvReader, readCommonConfig, readDatabaseTimeouts } from './config.ts';
import type { Database } from './db/database.ts';
import type { MigrationSet } from './db/migrations.ts';
import { readDatabaseUrl } from './db/url.ts';
import { AppError } from './errors.ts';
import { admitted, type RequestAdmission, type RequestHandler } from './http/admission.ts';
import { createHttpApp, type Readiness } from './http/app.ts';
import { reportInvariantsTo } from './invariant.ts';
import { Lifecycle, stopOnSignals } from './lifecycle.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { PlatformSwitch } from './platform-switch.ts';
import { QueueGroups } from './queue-groups.ts';
import { NatsTransport } from './transport/nats.ts';
import type { ServiceDefinition, Transport } from './transport/operation.ts';

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
   * (docs/identity.md, "The development identity provider").
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
  /** In front of the HTTP app: may hold a request back before the app reads it (ingest's per-key admission). */
  admission?: RequestAdmission;
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
 * once every connection is gone. The admissions in front of the app are released first: a connection one holds looks
 * idle to Node but carries a request its client sent, so it is read before idle connections are closed.
 */
export async function closeServer(server: Server, admissions: readonly RequestAdmission[] = []): Promise<void> {
  if (admissions.some((admission) => admission.release)) {
    for (const admission of admissions) admission.release?.();
    // A resumed socket starts reading at the next poll phase of the event loop: the first immediate runs before it,
    // the second after it, when the requests those connections carried have been parsed (and are not idle).
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  }
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** What startPrograms composes: the programs and what each is given. */
export interface StartProgramsOptions {
  /** The programs' modules, started in this order, each with its configuration. */
  programs: ReadonlyArray<{ module: ProgramModule<unknown>; config: unknown }>;
  /** Each program's transport and, for a state owner, its database. */
  transportOf(program: ProgramName): Transport;
  databaseOf?(program: ProgramName): Database | undefined;
  /** Probe each state owner's database for its queue-group health (queue-groups.ts); off for PGlite in-process. */
  probeDatabases?: boolean;
  logger: Logger;
  metrics: Metrics;
  clock?: Clock;
  devIdentityDataDir?: string;
  /** The steps and undos of the whole process: startPrograms adds its own. */
  lifecycle: Lifecycle;
  http: {
    /** The `program` label of the HTTP metrics and logs. */
    name: string;
    trustProxy?: boolean;
    /** GET /metrics on this server (default true); false where it has a port of its own (METRICS_PORT). */
    metricsRoute?: boolean;
    /** The caller's checks behind /readyz; the queue groups' membership is added. */
    readiness: Readiness;
    /** A server listening already (runStandalone's probes while starting): it is handed the programs' app. */
    server?: ListeningServer;
    /** Otherwise, where to listen (after the programs are created, before they join their queue groups). */
    port?: number;
    host?: string;
  };
}

export interface StartedPrograms {
  programs: Map<ProgramName, Program>;
  /** The state owners' queue groups (their health and membership), by program. */
  queueGroups: Map<ProgramName, QueueGroups>;
  server: Server;
  port: number;
  isShuttingDown(): boolean;
  /** /readyz answers 503 from now on (the drain before stop). */
  markShuttingDown(): void;
}

/** An HTTP server that listens before the programs exist, answering with whatever app it was last handed. */
export interface ListeningServer {
  server: Server;
  port: number;
  /** Serves `app` from now on, behind the programs' admissions (none by default). */
  use(app: Koa, admissions?: readonly RequestAdmission[]): void;
  /** Closes the server (closeServer), its admissions released first. */
  close(): Promise<void>;
}

/** Listens with `app` as a lifecycle step (its undo closes the server once its requests are answered). */
export async function listenHttp(
  lifecycle: Lifecycle,
  app: Koa,
  port: number,
  host: string | undefined,
): Promise<ListeningServer> {
  let handle: RequestHandler = app.callback();
  let admissions: readonly RequestAdmission[] = [];
  const server = createServer((request, response) => handle(request, response));
  const close = () => closeServer(server, admissions);
  const boundPort = await lifecycle.step(
    'http',
    () => listen(server, port, host),
    () => (server.listening ? close() : undefined),
  );
  return {
    server,
    port: boundPort,
    use: (next, given = []) => {
      admissions = given;
      handle = admitted(given, next.callback());
    },
    close,
  };
}

/**
 * Creates the programs, serves their routes and upgrades over HTTP, listens (unless the server listens already), and
 * only then joins the state owners' queue groups: a process that cannot listen never takes a request it would lose.
 * Every step registers its undo on `lifecycle`; at stop the HTTP server closes first (an edge's requests in flight
 * are answered, by state owners that are still serving), then the queue groups are left (their operations in flight
 * answered), then the programs close. Used by runStandalone (one program) and the launcher's in-process mode.
 */
export async function startPrograms(options: StartProgramsOptions): Promise<StartedPrograms> {
  const { lifecycle, logger, metrics } = options;
  const platforms = new Map<Transport, PlatformSwitch>();
  const programs = new Map<ProgramName, Program>();
  let draining = false;
  const isShuttingDown = () => draining || lifecycle.stopping;
  for (const { module, config } of options.programs) {
    const name = module.name;
    const transport = options.transportOf(name);
    let platform = platforms.get(transport);
    if (!platform) {
      platform = new PlatformSwitch(transport);
      platforms.set(transport, platform);
    }
    const database = module.database ? options.databaseOf?.(name) : undefined;
    if (module.database && !database) throw new Error(`${name} owns a schema and was given no database`);
    const deps: ProgramDeps = {
      logger: programLogger(logger, name, options.programs.length),
      metrics,
      transport,
      platform,
      database,
      clock: options.clock,
      ...(options.devIdentityDataDir ? { devIdentityDataDir: options.devIdentityDataDir } : {}),
    };
    programs.set(
      name,
      await lifecycle.step(
        `program ${name}`,
        () => module.create(deps, config),
        async (program) => program.close?.(),
      ),
    );
  }
  const queueGroups = new Map<ProgramName, QueueGroups>();
  const app = createHttpApp({
    program: options.http.name,
    logger,
    metrics,
    routes: [...programs.values()].flatMap((p) => (p.routes ? [p.routes] : [])),
    readiness: async () => {
      const checks = await options.http.readiness();
      if (queueGroups.size === 0) return checks;
      return { ...checks, serving: [...queueGroups.values()].every((g) => g.status().member) };
    },
    readinessReason: () => {
      for (const [name, groups] of queueGroups) {
        const { member, reason } = groups.status();
        if (!member) return `${name} is not in its queue groups: ${reason}`;
      }
      return undefined;
    },
    isShuttingDown,
    trustProxy: options.http.trustProxy,
    metricsRoute: options.http.metricsRoute ?? true,
  });
  const http = options.http.server ?? (await listenHttp(lifecycle, app, options.http.port ?? 0, options.http.host));
  http.use(
    app,
    [...programs.values()].flatMap((p) => (p.admission ? [p.admission] : [])),
  );
  for (const program of programs.values()) program.upgrades?.attach(http.server);
  for (const [name, program] of programs) {
    const definitions = program.services ?? [];
    if (definitions.length === 0) continue;
    const database = options.databaseOf?.(name);
    const groups = await lifecycle.step(
      `queue groups of ${name}`,
      () =>
        QueueGroups.join({
          transport: options.transportOf(name),
          definitions,
          database: options.probeDatabases === false ? undefined : database,
          logger: programLogger(logger, name, options.programs.length),
          metrics,
        }),
      (joined) => joined.stop(),
    );
    queueGroups.set(name, groups);
  }
  lifecycle.onStop('http', async () => {
    for (const program of programs.values()) await program.upgrades?.close();
    if (http.server.listening) await http.close();
  });
  return {
    programs,
    queueGroups,
    server: http.server,
    port: http.port,
    isShuttingDown,
    markShuttingDown: () => {
      draining = true;
    },
  };
}

/** A program's logger: the process's, labelled with the program where several share the process. */
function programLogger(logger: Logger, name: ProgramName, count: number): Logger {
  return count > 1 ? logger.child({ program: name }) : logger;
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
  const databaseTimeouts = readDatabaseTimeouts(reader);
  // SHUTDOWN_DRAIN_MS: after SIGTERM an edge answers /readyz 503 and goes on serving this long, so that a balancer
  // or a Service whose readiness probe runs every 5 s and fails after 2 (the chart's defaults) has taken it out
  // before it stops accepting. State owners need none: leaving their queue groups is immediate.
  const drainMsAsked = reader.int('SHUTDOWN_DRAIN_MS', -1, { min: -1, max: 120_000 });
  // UNSAFE_DEV_IDENTITY_PROVIDER=true: the local development identity provider under DATA_DIR is trusted, as on the
  // all-in-one's embedded default (a JWKS, when configured, still wins). For the five programs run apart on one
  // machine (`npm run dev:split`) and tests; anyone on the machine can then sign in as anyone (docs/identity.md).
  const unsafeDevIdentity = reader.bool('UNSAFE_DEV_IDENTITY_PROVIDER', false);
  const devIdentityDataDir = unsafeDevIdentity ? resolve(reader.string('DATA_DIR', './.data')) : undefined;
  const config = module.readConfig(reader);
  const logger = createLogger(module.name, common.logLevel);
  try {
    reader.done();
  } catch (error) {
    logger.fatal((error as Error).message);
    process.exit(2);
  }

  if (devIdentityDataDir) {
    logger.warn(
      { dataDir: devIdentityDataDir },
      'UNSAFE_DEV_IDENTITY_PROVIDER=true: the local development identity provider is trusted; anyone on this machine ' +
        'can sign in as any developer',
    );
  }
  const metrics = createMetrics();
  reportInvariantsTo(logger, metrics.invariantViolations);
  const lifecycle = new Lifecycle(logger);
  // Start-up order: HTTP (probes only: /healthz 200, /readyz 503), NATS, the database, the program, its routes, and
  // only then the queue groups. A program that joined its queue group is sent requests at once; if it then failed
  // and exited, the requests routed to it would be lost until their callers' timeouts. A taken HTTP port fails first,
  // before anything joined. NATS unreachable at start-up is no failure: the program stays up, not ready, and keeps
  // trying (every 0.5 s) until a server answers. A start-up failure undoes what was started before exiting.
  let transport: NatsTransport | undefined;
  let database: Database | undefined;
  let started: StartedPrograms | undefined;
  const starting = createHttpApp({
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
    // Never ready: this app only holds the port until the program's own app is handed to the server (a program
    // without a database would otherwise say ready once NATS answers, while its routes still answered 503 above).
    readiness: async () => ({
      nats: transport?.isReady() ?? false,
      ...(module.database ? { database: false } : {}),
      started: false,
    }),
    isShuttingDown: () => lifecycle.stopping,
    trustProxy: common.trustProxy,
  });
  try {
    await lifecycle.start(async () => {
      const http = await listenHttp(lifecycle, starting, httpPort, common.host);
      logger.info(
        { port: http.port },
        `${module.name} listening (not ready until NATS${module.database ? ' and PostgreSQL' : ''})`,
      );
      const unreachable = setTimeout(
        () => logger.warn({ url: common.natsUrl }, 'NATS unreachable: not ready, still trying'),
        2000,
      );
      const nats = await lifecycle.step(
        'nats',
        () =>
          NatsTransport.connect({
            url: common.natsUrl as string,
            connectionName: module.name,
            requestTimeoutMs: common.natsRequestTimeoutMs,
            eventRequestTimeoutMs: common.natsEventRequestTimeoutMs,
            undeliveredWaitMs: common.natsUndeliveredWaitMs,
            tryTimeoutPercent: common.natsTryTimeoutPercent,
            security: common.natsSecurity,
            logger,
            metrics,
            waitForFirstConnection: true,
          }).finally(() => clearTimeout(unreachable)),
        (connected) => connected.close(),
      );
      transport = nats;
      if (module.database && databaseUrl) {
        const migrations = module.database.migrations;
        database = await lifecycle.step(
          'database',
          async () => {
            // Loaded here, not at the top: the programs without a database (gateway, ingest, links) never load
            // MikroORM, its migrator and the driver, tens of MiB of code and heap (docs/benchmarks.md, "Memory").
            const { Database, migrate } = await import('./db/database.ts');
            await migrate(databaseUrl, [migrations], logger);
            return Database.open({
              url: databaseUrl,
              poolMax: databasePoolMax,
              namedStatements: databaseNamedStatements,
              ...databaseTimeouts,
              logger,
              metrics,
            });
          },
          (opened) => opened.close(),
        );
      }
      const db = database;
      started = await startPrograms({
        programs: [{ module: module as ProgramModule<unknown>, config }],
        transportOf: () => nats,
        databaseOf: () => db,
        logger,
        metrics,
        lifecycle,
        ...(devIdentityDataDir ? { devIdentityDataDir } : {}),
        http: {
          name: module.name,
          server: http,
          trustProxy: common.trustProxy,
          readiness: async () => ({ nats: nats.isReady(), ...(db ? { database: await db.ping() } : {}) }),
        },
      });
    });
  } catch (error) {
    logger.fatal({ err: error }, `${module.name} failed to start`);
    process.exit(1);
  }
  logger.info(`${module.name} ready`);
  // Every module a start loads is loaded now: their compiled forms go to Node's compile cache (NODE_COMPILE_CACHE;
  // nothing without it), so that the next replica started from the same files needs no type stripping.
  flushCompileCache();
  const program = started?.programs.get(module.name);
  const drainMs = drainMsAsked >= 0 ? drainMsAsked : program?.routes ? 11_000 : 0;
  stopOnSignals({ logger, lifecycle, drainMs, beginDrain: () => started?.markShuttingDown() });
}
