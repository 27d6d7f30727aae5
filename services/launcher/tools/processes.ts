// One launcher for the programs as separate processes, the way Kubernetes runs them: each replica is
// `node <the flags of services/runtime/node-flags> <entry file>` (Node 24 itself, never through npm, which would not
// pass signals on), on its own HTTP port, with its own log file, and can be signalled, stopped (SIGTERM, then its exit awaited),
// started again on the same port and waited for (/readyz 200). Used by the benchmarks (load/lib/system.ts), the
// fault suite (test/faults/system.ts) and the program tests (test/support/processes.ts). The launcher's other mode,
// the programs in one process, is in-process.ts. A tool for development and CI machines, never part of a program.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { WARM_COMPILE_CACHE_FLAG } from '#runtime/compile-cache.ts';
import { type LaunchedProgram, PROGRAM_ENTRIES, PROGRAMS } from '../src/programs.ts';
import { freePort } from './servers.ts';

export { EDGES, type LaunchedProgram, PROGRAM_ENTRIES, PROGRAMS, type ProgramName } from '../src/programs.ts';

/**
 * Node's flags and start environment for every program, read from services/runtime/node-flags (where they are written
 * once, with why each), the file services/runtime/start.sh reads for the npm start scripts and the image.
 */
function readProgramStart(): { flags: string[]; environment: Record<string, string> } {
  const flags: string[] = [];
  const environment: Record<string, string> = {};
  for (const line of readFileSync(resolve(import.meta.dirname, '../../runtime/node-flags'), 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('--')) flags.push(line);
    else if (line.includes('=')) environment[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    else throw new Error(`services/runtime/node-flags: unreadable line ${line}`);
  }
  return { flags, environment };
}
const programStart = readProgramStart();

/**
 * Node's options for every program as start.sh gives them: the flags of services/runtime/node-flags, then the tracing
 * register file (it does nothing unless an OTLP endpoint is set), relative to the repository's root.
 */
export const PROGRAM_NODE_OPTIONS: readonly string[] = [
  ...programStart.flags,
  '--import',
  './services/runtime/src/tracing/register.ts',
];

/** The environment every program starts with, from services/runtime/node-flags (`MALLOC_ARENA_MAX=1`). */
export const PROGRAM_ENVIRONMENT: Readonly<Record<string, string>> = programStart.environment;

/**
 * More node flags for the programs the benchmarks start, from NODE_OPTIONS_EXTRA (space-separated; after
 * PROGRAM_NODE_OPTIONS, so a V8 flag given again wins): to compare V8 settings without editing code.
 */
export function extraNodeOptions(): string[] {
  return (process.env.NODE_OPTIONS_EXTRA ?? '').split(/\s+/).filter(Boolean);
}

/**
 * The OTEL_* variables of this process, for the programs the benchmarks start (a program's environment is otherwise
 * only what its caller gives): `OTEL_EXPORTER_OTLP_ENDPOINT=... npm run bench:ledger` traces (docs/benchmarks.md,
 * "Tracing on and off").
 */
export function otelEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('OTEL_')),
  );
}

/**
 * Node's compile cache for the programs the launcher starts (NODE_COMPILE_CACHE): the caller's NODE_COMPILE_CACHE if
 * set, else node_modules/.cache/sandbox-rewards/node-compile-cache in the working directory (the repository's root).
 * A program writes every module it loaded there once it is ready (runStandalone); a replica started later from the
 * same files loads them from it without Node's type stripper, about 13 MiB less for its whole life
 * (docs/benchmarks.md, "Memory"). Node keys the entries by file content and its own version: stale ones are ignored.
 */
export function programCompileCache(): string {
  return process.env.NODE_COMPILE_CACHE || resolve('node_modules/.cache/sandbox-rewards/node-compile-cache');
}

/**
 * Fills programCompileCache() for the programs given, as the image does at build time: each entry run with
 * `--warm-compile-cache` (WARM_COMPILE_CACHE_FLAG: loads what a start loads, writes the cache, exits), all at once.
 * The all-in-one entry has no such mode and is skipped. Throws when one does not exit 0. It runs with the flags the
 * programs will start with, NODE_OPTIONS_EXTRA's after PROGRAM_NODE_OPTIONS: Node keys the cache by V8's flag hash,
 * which some V8 flags change (`--trace-gc` does; the GC's thread flags do not), so a bench comparing V8 settings warms
 * with them too (else its programs would compile everything again, type stripper included, and hold about 13 MiB
 * more).
 */
export async function warmCompileCache(programs: Iterable<LaunchedProgram>): Promise<void> {
  const extraFlags = extraNodeOptions();
  const runs = [...new Set(programs)]
    .filter((program) => program !== 'all-in-one')
    .map(
      (program) =>
        new Promise<void>((done, fail) => {
          const child = spawn(
            process.execPath,
            [...PROGRAM_NODE_OPTIONS, ...extraFlags, resolve(PROGRAM_ENTRIES[program]), WARM_COMPILE_CACHE_FLAG],
            { env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: programCompileCache() }, stdio: 'pipe' },
          );
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
          child.on('error', fail);
          child.on('exit', (code) =>
            code === 0 ? done() : fail(new Error(`${program} ${WARM_COMPILE_CACHE_FLAG} exited ${code}: ${output}`)),
          );
        }),
    );
  await Promise.all(runs);
}

/** How much of a replica's output output() keeps (the end; the log file has all of it). */
const OUTPUT_KEPT_CHARS = 1 << 20;

/** How long a replica may take to answer /readyz 200 by default (slow, shared 2-core machines). */
export const START_TIMEOUT_DEFAULT_MS = 120_000;
/** How long `stop()` waits after SIGTERM before SIGKILL by default (the programs' own deadline is 10 s). */
export const STOP_TIMEOUT_DEFAULT_MS = 15_000;

export interface ProgramSpec {
  /** Processes of this program, each on its own port; default 1. */
  replicas?: number;
  /** Environment of this program's replicas, over the common one. */
  env?: Record<string, string>;
  /** Ports of the replicas (index by index); free ports where not given. */
  ports?: number[];
  /**
   * Where replicas run (index by index; the host where not given): inside a network namespace (`ip netns exec`, as
   * root), listening on an address of it (HOST, and the replica's URL), with more environment of its own (e.g. its
   * own DATABASE_URL). The fault suite's partitions (test/faults/netns.ts).
   */
  placements?: Array<ReplicaPlacement | undefined>;
}

export interface ReplicaPlacement {
  /** The network namespace's name (`ip netns add`). */
  namespace: string;
  /** The namespace's address the replica listens on. */
  host: string;
  env?: Record<string, string>;
}

export interface StartProgramsOptions {
  /** The programs to start, in this order (stopped in the reverse order). */
  programs: Partial<Record<LaunchedProgram, ProgramSpec>>;
  /** Environment of every replica (PATH and LOG_LEVEL=warn are added unless given). */
  env: Record<string, string>;
  /** Folder of the log files: `<name>.log` per replica (appended, with a line per start). */
  logDir: string;
  /** The address the programs listen on (HOST) and the URLs use; default 127.0.0.1. */
  host?: string;
  /**
   * The folder of the programs' code (a checkout of the repository with its node_modules): each replica runs that
   * folder's entry file with it as its working directory (the tracing register file is read from there too).
   * Default: this process's working directory. The fault suite's `upgrade` phase runs the previous release's
   * programs from its unpacked tree (test/faults/previous-release.ts).
   */
  root?: string;
  /** More node flags for one start of one replica (after PROGRAM_NODE_OPTIONS), e.g. a CPU profile. */
  nodeOptions?: (replica: { program: LaunchedProgram; name: string }) => string[];
  /** How long each replica may take to answer /readyz 200. */
  startTimeoutMs?: number;
  /**
   * What to wait for before resolving: `ready` (default) every replica's /readyz 200, `alive` its /healthz 200 (a
   * program answers it as soon as it listens, before NATS and its database), `none` nothing.
   */
  wait?: 'ready' | 'alive' | 'none';
  /**
   * Fill Node's compile cache for these programs before starting them (warmCompileCache), so that even their first
   * processes load no type stripper, as in the image: what the benchmarks measure. Off by default (a program's first
   * start writes the cache for the next ones anyway).
   */
  warmCompileCache?: boolean;
}

export interface ProgramReplica {
  readonly program: LaunchedProgram;
  /** 0-based, in the program's list. */
  readonly index: number;
  /** The program's name, with `-<index + 1>` when the program has more than one replica (or a label for extras). */
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly logPath: string;
  /** The current process (the last one started). */
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  /** The current process's exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  running(): boolean;
  /** Sends a signal (default SIGKILL) to the current process and waits until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then waits for the exit (SIGKILL after timeoutMs); resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Starts a new process on the same port with the same environment (the current one must be gone). */
  start(): void;
  /** stop() if running, start(), waitReady(). */
  restart(): Promise<void>;
  /** Resolves once /readyz (or `probe`) answers 200; throws when the process exits first or after timeoutMs. */
  waitReady(timeoutMs?: number, probe?: 'readyz' | 'healthz'): Promise<void>;
  /** What the replica's processes wrote so far (its last MiB; the log file keeps all). */
  output(): string;
}

export interface Programs {
  /** Every replica, in start order. */
  readonly replicas: ProgramReplica[];
  /** The replicas of one program (empty when not started). */
  of(program: LaunchedProgram): ProgramReplica[];
  /** One replica of a program; throws when there is none. */
  get(program: LaunchedProgram, index?: number): ProgramReplica;
  /**
   * Another process of a program, not among `replicas` and not waited for (e.g. one started on a port that is taken):
   * its log is `<label>.log`; stop() stops it too if it still runs.
   */
  launch(
    program: LaunchedProgram,
    options: { port: number; label: string; env?: Record<string, string>; root?: string },
  ): ProgramReplica;
  /** Stops every process (replicas in reverse start order, SIGTERM then SIGKILL after timeoutMs) and closes the logs. */
  stop(timeoutMs?: number): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the programs' replicas (each on a free port unless given) and, unless told not to, waits until all are ready. */
export async function startPrograms(options: StartProgramsOptions): Promise<Programs> {
  const host = options.host ?? '127.0.0.1';
  if (options.warmCompileCache) await warmCompileCache(Object.keys(options.programs) as LaunchedProgram[]);
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_DEFAULT_MS;
  mkdirSync(options.logDir, { recursive: true });
  const logs = new Map<string, WriteStream>();
  const logOf = (name: string) => {
    let stream = logs.get(name);
    if (!stream) {
      stream = createWriteStream(join(options.logDir, `${name}.log`), { flags: 'a' });
      logs.set(name, stream);
    }
    return stream;
  };
  const replicas: ProgramReplica[] = [];
  const extras = new Set<ProgramReplica>();

  const makeReplica = (
    program: LaunchedProgram,
    index: number,
    name: string,
    port: number,
    env: Record<string, string>,
    placement?: ReplicaPlacement,
    root = options.root,
  ): ProgramReplica => {
    const listenHost = placement?.host ?? host;
    const url = `http://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`;
    const portVariable = program === 'all-in-one' ? 'PORT' : 'HTTP_PORT';
    const logPath = join(options.logDir, `${name}.log`);
    let child!: ChildProcess;
    let exited!: Promise<number | null>;
    let output = '';
    const running = () => child.exitCode === null && child.signalCode === null;
    const spawnOnce = () => {
      const flags = [...PROGRAM_NODE_OPTIONS, ...(options.nodeOptions?.({ program, name }) ?? [])];
      const command = [process.execPath, ...flags, resolve(root ?? '.', PROGRAM_ENTRIES[program])];
      // `ip netns exec` enters the namespace and execs node: the child's pid is node's, signals reach it.
      const [file, ...args] = placement ? ['ip', 'netns', 'exec', placement.namespace, ...command] : command;
      child = spawn(file!, args, {
        env: {
          PATH: process.env.PATH ?? '',
          NODE_COMPILE_CACHE: programCompileCache(),
          ...PROGRAM_ENVIRONMENT,
          LOG_LEVEL: 'warn',
          ...(options.host === undefined && !placement ? {} : { HOST: listenHost }),
          ...options.env,
          ...env,
          ...placement?.env,
          [portVariable]: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(root === undefined ? {} : { cwd: root }),
      });
      const stream = logOf(name);
      stream.write(
        `--- ${new Date().toISOString()} start (pid ${child.pid}, port ${port}${root === undefined ? '' : `, code in ${root}`})\n`,
      );
      // A spawn that fails (node or ip missing) is logged; unhandled, it would end the caller without its cleanup.
      child.on('error', (error) => stream.write(`--- ${new Date().toISOString()} spawn failed: ${error.message}\n`));
      child.stdout?.pipe(stream, { end: false });
      child.stderr?.pipe(stream, { end: false });
      const keep = (chunk: Buffer) => {
        output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT_CHARS);
      };
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      const current = child;
      exited = new Promise<number | null>((r) => {
        // 'close', not 'exit': by then every byte the process wrote has been read (output() is complete).
        current.once('close', (code, signal) => {
          stream.write(`--- ${new Date().toISOString()} exit (pid ${current.pid}, ${code ?? signal})\n`);
          r(code);
        });
      });
    };
    spawnOnce();
    const replica: ProgramReplica = {
      program,
      index,
      name,
      port,
      url,
      logPath,
      get child() {
        return child;
      },
      get pid() {
        return child.pid;
      },
      get exited() {
        return exited;
      },
      running,
      async kill(signal = 'SIGKILL') {
        if (!running()) return;
        const done = exited;
        child.kill(signal);
        await done;
      },
      async stop(timeoutMs = STOP_TIMEOUT_DEFAULT_MS) {
        const done = exited;
        if (running()) {
          const current = child;
          current.kill('SIGTERM');
          const timer = setTimeout(() => current.kill('SIGKILL'), timeoutMs);
          await done;
          clearTimeout(timer);
        }
        return done;
      },
      start() {
        if (running()) throw new Error(`${name} (pid ${child.pid}) is still running`);
        spawnOnce();
      },
      async restart() {
        await replica.stop();
        replica.start();
        await replica.waitReady();
      },
      output: () => output,
      async waitReady(timeoutMs = startTimeoutMs, probe = 'readyz') {
        const deadline = Date.now() + timeoutMs;
        const current = child;
        while (Date.now() < deadline) {
          if (current.exitCode !== null || current.signalCode !== null) {
            throw new Error(
              `${name} exited (${current.exitCode ?? current.signalCode}) while starting; see ${logPath}`,
            );
          }
          try {
            const response = await fetch(`${url}/${probe}`, { signal: AbortSignal.timeout(1_000) });
            await response.arrayBuffer();
            if (response.status === 200) return;
          } catch {
            // not listening yet
          }
          await sleep(50);
        }
        throw new Error(`${name} did not answer /${probe} with 200 within ${timeoutMs} ms; see ${logPath}`);
      },
    };
    return replica;
  };

  const stop = async (timeoutMs = STOP_TIMEOUT_DEFAULT_MS) => {
    await Promise.all([...extras].map((extra) => extra.kill('SIGKILL')));
    for (const replica of [...replicas].reverse()) await replica.stop(timeoutMs);
    await Promise.all([...logs.values()].map((stream) => new Promise<void>((r) => stream.end(() => r()))));
    logs.clear();
  };

  const programs: Programs = {
    replicas,
    of: (program) => replicas.filter((r) => r.program === program),
    get(program, index = 0) {
      const found = replicas.find((r) => r.program === program && r.index === index);
      if (!found) throw new Error(`no replica ${index} of ${program}`);
      return found;
    },
    launch(program, { port, label, env = {}, root = options.root }) {
      const extra = makeReplica(
        program,
        -1,
        label,
        port,
        { ...(options.programs[program]?.env ?? {}), ...env },
        undefined,
        root,
      );
      extras.add(extra);
      void extra.exited.then(() => extras.delete(extra));
      return extra;
    },
    stop,
  };

  try {
    for (const [program, spec = {}] of Object.entries(options.programs) as Array<[LaunchedProgram, ProgramSpec]>) {
      const count = spec.replicas ?? 1;
      for (let index = 0; index < count; index++) {
        const port = spec.ports?.[index] ?? (await freePort());
        const name = count === 1 ? program : `${program}-${index + 1}`;
        replicas.push(makeReplica(program, index, name, port, spec.env ?? {}, spec.placements?.[index]));
      }
    }
    const wait = options.wait ?? 'ready';
    if (wait !== 'none') {
      await Promise.all(replicas.map((r) => r.waitReady(startTimeoutMs, wait === 'alive' ? 'healthz' : 'readyz')));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return programs;
}

export interface RollingRestartOptions {
  /** Programs in the order they are rolled; default PROGRAMS' order (state owners first). */
  order?: readonly LaunchedProgram[];
  /** After a replica is ready again, before the next one is stopped (e.g. until the balancer sees it up). */
  afterReady?: (replica: ProgramReplica) => Promise<void>;
  /** Told of each step. */
  log?: (line: string) => void;
}

/**
 * A rolling restart, one replica at a time, as a Deployment's rolling update with maxUnavailable 1 and maxSurge 0 does
 * it, without a preStop delay: SIGTERM, wait for the exit, start again (same port), wait for /readyz 200 (and
 * `afterReady`), next. Resolves with each replica's stop and start times.
 */
export async function rollingRestart(
  programs: Programs,
  options: RollingRestartOptions = {},
): Promise<Array<{ name: string; code: number | null; stopMs: number; startMs: number }>> {
  const order = options.order ?? PROGRAMS;
  const steps: Array<{ name: string; code: number | null; stopMs: number; startMs: number }> = [];
  for (const program of order) {
    for (const replica of programs.of(program)) {
      const stopping = Date.now();
      const code = await replica.stop();
      const starting = Date.now();
      replica.start();
      await replica.waitReady();
      await options.afterReady?.(replica);
      steps.push({ name: replica.name, code, stopMs: starting - stopping, startMs: Date.now() - starting });
      options.log?.(
        `${replica.name}: exited ${code} ${starting - stopping} ms after SIGTERM, ready ${Date.now() - starting} ms after start`,
      );
    }
  }
  return steps;
}
