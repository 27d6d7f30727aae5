// The launcher's in-process mode: programs composed in one process, each with the dependencies a process of its own
// would get (its transport, its database, its configuration), the edges' routes on one HTTP server. Used by the
// all-in-one process (`npm start`, services/all-in-one/src/system.ts: all five on one transport and one database)
// and by the tests that need a subset on split NATS connections (test/support/compose.ts). The other mode, programs
// as separate processes with replicas, is processes.ts; the table of programs is programs.ts.
import { createServer, type Server } from 'node:http';
import type { Clock } from '#runtime/clock.ts';
import { EnvReader } from '#runtime/config.ts';
import type { Database } from '#runtime/db/database.ts';
import { createHttpApp } from '#runtime/http/app.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { PlatformSwitch } from '#runtime/platform-switch.ts';
import { closeServer, listen, type Program, type ProgramModule, type ProgramName } from '#runtime/program.ts';
import type { ServedService, Transport } from '#runtime/transport/operation.ts';
import { gateway } from '../../../gateway/src/program.ts';
import { identityAdmission } from '../../identity-admission/src/program.ts';
import { ingest } from '../../ingest/src/program.ts';
import { ledger } from '../../ledger/src/program.ts';
import { links } from '../../links/src/program.ts';
import { PROGRAMS } from './programs.ts';

/** Each program's module (its configuration reader and its factory), by name. */
// biome-ignore lint/suspicious/noExplicitAny: each module has its own config type.
export const PROGRAM_MODULES: Record<ProgramName, ProgramModule<any>> = {
  'identity-admission': identityAdmission,
  ledger,
  gateway,
  ingest,
  links,
};

/** The programs that own a schema (and take a database), in start order. */
export const STATE_OWNERS = PROGRAMS.filter((name) => PROGRAM_MODULES[name].database);

/** The migrations of the given programs' schemas (all state owners by default), for `migrate()`. */
export function migrationsOf(programs: readonly ProgramName[] = STATE_OWNERS) {
  return programs.flatMap((name) => {
    const database = PROGRAM_MODULES[name].database;
    return database ? [database.migrations] : [];
  });
}

/**
 * Reads the configuration of each program from one reader (before `reader.done()`, which then reports every problem
 * at once, as a program started alone would).
 */
export function readProgramConfigs(reader: EnvReader, programs: readonly ProgramName[] = PROGRAMS) {
  return new Map<ProgramName, unknown>(programs.map((name) => [name, PROGRAM_MODULES[name].readConfig(reader)]));
}

type PerProgram<T> = T | ((program: ProgramName) => T);
const pick = <T>(value: PerProgram<T>, program: ProgramName): T =>
  typeof value === 'function' ? (value as (program: ProgramName) => T)(program) : value;

export interface InProcessOptions {
  /** The programs, started in this order (state owners first serve their operations before the edges take traffic). */
  programs?: readonly ProgramName[];
  /** Each program's configuration (readProgramConfigs); read from an empty environment where missing. */
  configs: Map<ProgramName, unknown>;
  /** The transport of every program, or of each (a function of the program's name). */
  transport: PerProgram<Transport>;
  /** The database of every state owner, or of each; a state owner without one is an error. */
  database?: PerProgram<Database | undefined>;
  logger: Logger;
  metrics: Metrics;
  /** The state owners' clock (tests set it); the database's `now()` when not given. */
  clock?: Clock;
  /** Given only where the development identity provider may be trusted (ProgramDeps.devIdentityDataDir). */
  devIdentityDataDir?: string;
  /** The HTTP server of the programs' routes and probes. */
  http: {
    /** The `program` label of the HTTP metrics and logs. */
    name: string;
    port: number;
    host?: string;
    trustProxy?: boolean;
    /** GET /metrics on this server (default true); false where it has a port of its own. */
    metricsRoute?: boolean;
    /** The checks behind /readyz. */
    readiness: () => Promise<Record<string, boolean>>;
  };
}

export interface InProcessPrograms {
  /** The created programs, by name. */
  programs: Map<ProgramName, Program>;
  server: Server;
  port: number;
  isShuttingDown(): boolean;
  /** /readyz answers 503 from now on (the drain before stop). */
  markShuttingDown(): void;
  /**
   * Stops serving: WebSockets, then HTTP (in-flight requests finish), the programs' queue groups, the programs. The
   * transports and databases are the caller's to close after.
   */
  stop(): Promise<void>;
}

/**
 * Creates the programs, attaches their routes and upgrades to one HTTP server, listens, and only then joins their
 * queue groups (as runStandalone does: a process that cannot listen never takes a request it would lose). On a
 * failure, what was started is stopped before the error is thrown.
 */
export async function startInProcess(options: InProcessOptions): Promise<InProcessPrograms> {
  const names = options.programs ?? PROGRAMS;
  const platforms = new Map<Transport, PlatformSwitch>();
  const programs = new Map<ProgramName, Program>();
  const served: ServedService[] = [];
  let shuttingDown = false;
  const create = async () => {
    for (const name of names) {
      const module = PROGRAM_MODULES[name];
      const transport = pick(options.transport, name);
      let platform = platforms.get(transport);
      if (!platform) {
        platform = new PlatformSwitch(transport);
        platforms.set(transport, platform);
      }
      const database = module.database ? pick(options.database, name) : undefined;
      if (module.database && !database) throw new Error(`${name} owns a schema and was given no database`);
      programs.set(
        name,
        await module.create(
          {
            logger: options.logger.child({ program: name }),
            metrics: options.metrics,
            transport,
            platform,
            database,
            clock: options.clock,
            ...(options.devIdentityDataDir ? { devIdentityDataDir: options.devIdentityDataDir } : {}),
          },
          options.configs.get(name) ?? module.readConfig(new EnvReader({})),
        ),
      );
    }
  };
  let server: Server | undefined;
  const stop = async () => {
    shuttingDown = true;
    for (const program of programs.values()) await program.upgrades?.close();
    if (server?.listening) await closeServer(server);
    // Every queue group is left even if one fails (a transport already gone): the programs still close after.
    for (const result of await Promise.allSettled(served.map((s) => s.stop()))) {
      if (result.status === 'rejected') options.logger.warn({ err: result.reason }, 'leaving a queue group failed');
    }
    for (const program of programs.values()) await program.close?.();
  };
  try {
    await create();
    const app = createHttpApp({
      program: options.http.name,
      logger: options.logger,
      metrics: options.metrics,
      routes: [...programs.values()].flatMap((p) => (p.routes ? [p.routes] : [])),
      readiness: options.http.readiness,
      isShuttingDown: () => shuttingDown,
      trustProxy: options.http.trustProxy,
      metricsRoute: options.http.metricsRoute ?? true,
    });
    server = createServer(app.callback());
    for (const program of programs.values()) program.upgrades?.attach(server);
    const port = await listen(server, options.http.port, options.http.host);
    for (const [name, program] of programs) {
      const transport = pick(options.transport, name);
      for (const definition of program.services ?? []) served.push(await transport.serve(definition));
    }
    return {
      programs,
      server,
      port,
      isShuttingDown: () => shuttingDown,
      markShuttingDown: () => {
        shuttingDown = true;
      },
      stop,
    };
  } catch (error) {
    await stop().catch((stopError) => options.logger.error({ err: stopError }, 'stop after a failed start failed'));
    throw error;
  }
}
