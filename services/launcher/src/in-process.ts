// The launcher's in-process mode: programs composed in one process, each with the dependencies a process of its own
// would get (its transport, its database, its configuration), the edges' routes on one HTTP server. Used by the
// all-in-one process (`npm start`, services/all-in-one/src/system.ts: all five on one transport and one database)
// and by the tests that need a subset on split NATS connections (test/support/compose.ts). The other mode, programs
// as separate processes with replicas, is processes.ts; the table of programs is programs.ts.
import type { Clock } from '#runtime/clock.ts';
import { EnvReader } from '#runtime/config.ts';
import type { Database } from '#runtime/db/database.ts';
import type { Readiness } from '#runtime/http/app.ts';
import { Lifecycle, SHUTDOWN_DEADLINE_MS, type StopReport } from '#runtime/lifecycle.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { type ProgramModule, type ProgramName, type StartedPrograms, startPrograms } from '#runtime/program.ts';
import type { Transport } from '#runtime/transport/operation.ts';
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
  /** Probe each state owner's database for its queue-group health (default true; not on PGlite). */
  probeDatabases?: boolean;
  logger: Logger;
  metrics: Metrics;
  /** The state owners' clock (tests set it); the database's `now()` when not given. */
  clock?: Clock;
  /** Given only where the development identity provider may be trusted (ProgramDeps.devIdentityDataDir). */
  devIdentityDataDir?: string;
  /**
   * The process's lifecycle, when the caller registered steps of its own (the all-in-one process: its database and
   * transport, undone after the programs); a lifecycle of the programs' own otherwise.
   */
  lifecycle?: Lifecycle;
  /** The HTTP server of the programs' routes and probes. */
  http: {
    /** The `program` label of the HTTP metrics and logs. */
    name: string;
    port: number;
    host?: string;
    trustProxy?: boolean;
    /** GET /metrics on this server (default true); false where it has a port of its own. */
    metricsRoute?: boolean;
    /** The checks behind /readyz (the state owners' queue-group membership is added). */
    readiness: Readiness;
  };
}

export interface InProcessPrograms extends StartedPrograms {
  lifecycle: Lifecycle;
  /**
   * Stops the lifecycle under SHUTDOWN_DEADLINE_MS: WebSockets, then HTTP (in-flight requests finish), the programs'
   * queue groups, the programs, then whatever the caller registered before (with a lifecycle of the programs' own,
   * the transports and databases stay the caller's to close).
   */
  stop(): Promise<StopReport>;
}

/**
 * Creates the programs, attaches their routes and upgrades to one HTTP server, listens, and only then joins their
 * queue groups (startPrograms, as runStandalone does: a process that cannot listen never takes a request it would
 * lose). On a failure, what was started is undone before the error is thrown.
 */
export async function startInProcess(options: InProcessOptions): Promise<InProcessPrograms> {
  const names = options.programs ?? PROGRAMS;
  const lifecycle = options.lifecycle ?? new Lifecycle(options.logger);
  const started = await lifecycle.start(() =>
    startPrograms({
      programs: names.map((name) => ({
        module: PROGRAM_MODULES[name],
        config: options.configs.get(name) ?? PROGRAM_MODULES[name].readConfig(new EnvReader({})),
      })),
      transportOf: (name) => pick(options.transport, name),
      databaseOf: (name) => pick(options.database, name),
      probeDatabases: options.probeDatabases,
      logger: options.logger,
      metrics: options.metrics,
      clock: options.clock,
      devIdentityDataDir: options.devIdentityDataDir,
      lifecycle,
      http: options.http,
    }),
  );
  return { ...started, lifecycle, stop: () => lifecycle.stop(SHUTDOWN_DEADLINE_MS) };
}
