// The one lifecycle of every program and composition (runStandalone, the launcher's in-process mode, the all-in-one
// process): each start step registers its own undo as it succeeds; stopping runs the undos in reverse order under one
// deadline; a start that fails undoes what was started before it; SIGTERM and SIGINT are handled here and nowhere else.
import type { Logger } from './logger.ts';
import { shutdownTracing } from './tracing/settings.ts';

/**
 * How long stopping may take once it begins (after an edge's SHUTDOWN_DRAIN_MS): closing HTTP (the requests in
 * flight are answered), leaving the queue groups (the operations in flight finish), the programs, NATS and the
 * database. A process whose undos have not finished by then exits with status 1. The chart's
 * terminationGracePeriodSeconds counts this on top of the drain (docs/deploy.md).
 */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/** What stopping did: the steps whose undo failed, and, if the deadline passed, the undo still running then. */
export interface StopReport {
  failed: string[];
  /** Set when the deadline passed: the undo being waited for; the ones after it were not run. */
  unfinished?: string;
  /** The undos not run because the deadline passed first. */
  skipped: string[];
}

interface Undo {
  name: string;
  run: () => Promise<void> | void;
}

export class Lifecycle {
  private readonly logger: Logger;
  private readonly undos: Undo[] = [];
  private stopped: Promise<StopReport> | undefined;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** True once stop() began: a program answers /readyz 503 from then on. */
  get stopping(): boolean {
    return this.stopped !== undefined;
  }

  /**
   * Runs one start step and, once it succeeded, registers `undo` (given the step's result) to be run at stop. A step
   * that throws registers nothing: it undoes its own partial work.
   */
  async step<T>(name: string, start: () => Promise<T> | T, undo?: (value: T) => Promise<void> | void): Promise<T> {
    if (this.stopping) throw new Error(`${name}: the lifecycle is stopping`);
    const value = await start();
    if (undo) this.undos.push({ name, run: () => undo(value) });
    return value;
  }

  /** Registers the undo of something already started (or of a state that stop must leave, like a drain flag). */
  onStop(name: string, undo: () => Promise<void> | void): void {
    this.undos.push({ name, run: undo });
  }

  /**
   * Runs `start` (its steps); if it throws, undoes every step that succeeded (in reverse, under `deadlineMs`) and
   * rethrows.
   */
  async start<T>(start: () => Promise<T>, deadlineMs = SHUTDOWN_DEADLINE_MS): Promise<T> {
    try {
      return await start();
    } catch (error) {
      this.logger.error({ err: error }, 'start failed: undoing what was started');
      await this.stop(deadlineMs);
      throw error;
    }
  }

  /**
   * Runs the undos in reverse order of registration, each after the one before has finished; a failing undo is
   * logged and the next runs. Resolves when all have run or when `deadlineMs` has passed, whichever comes first.
   * Called again, it returns the first call's report.
   */
  stop(deadlineMs = SHUTDOWN_DEADLINE_MS): Promise<StopReport> {
    this.stopped ??= this.runUndos(deadlineMs);
    return this.stopped;
  }

  private async runUndos(deadlineMs: number): Promise<StopReport> {
    const report: StopReport = { failed: [], skipped: [] };
    const undos = this.undos.splice(0).reverse();
    let current: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), deadlineMs);
      timer.unref();
    });
    const runAll = async () => {
      for (const [index, undo] of undos.entries()) {
        if (report.unfinished !== undefined) {
          report.skipped = undos.slice(index).map((u) => u.name);
          return;
        }
        current = undo.name;
        try {
          await undo.run();
        } catch (error) {
          report.failed.push(undo.name);
          this.logger.error({ err: error, step: undo.name }, 'stop step failed');
        }
      }
      current = undefined;
    };
    const outcome = await Promise.race([runAll().then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    if (outcome === 'deadline') {
      report.unfinished = current;
      const at = undos.findIndex((u) => u.name === current);
      report.skipped = undos.slice(at + 1).map((u) => u.name);
      this.logger.error({ deadlineMs, step: current, skipped: report.skipped }, 'stop deadline passed');
    }
    return report;
  }
}

export interface SignalOptions {
  logger: Logger;
  lifecycle: Lifecycle;
  /**
   * SHUTDOWN_DRAIN_MS: after the signal, how long the program goes on serving with /readyz 503 (`beginDrain` is
   * called first) before its lifecycle stops. 0: none.
   */
  drainMs?: number;
  beginDrain?: () => void;
  /** Written to stdout when a signal arrives (the all-in-one process tells the person at the terminal). */
  announce?: (signal: string) => void;
}

/**
 * The one handler of SIGTERM and SIGINT: drain, stop the lifecycle under SHUTDOWN_DEADLINE_MS, export the last
 * traces, exit (0, or 1 if an undo failed or the deadline passed). A second signal exits at once.
 */
export function stopOnSignals(options: SignalOptions): void {
  const { logger, lifecycle } = options;
  let signalled = false;
  const shutdown = async (signal: string) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    logger.info({ signal }, 'shutting down');
    options.announce?.(signal);
    const drainMs = options.drainMs ?? 0;
    if (drainMs > 0) {
      options.beginDrain?.();
      logger.info({ drainMs }, 'draining: /readyz answers 503, still serving');
      await new Promise((resolve) => setTimeout(resolve, drainMs));
    }
    const report = await lifecycle.stop(SHUTDOWN_DEADLINE_MS);
    try {
      await shutdownTracing();
    } catch (error) {
      logger.warn({ err: error }, 'trace export at shutdown failed');
    }
    logger.info('stopped');
    process.exit(report.failed.length > 0 || report.unfinished !== undefined ? 1 : 0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  stopWhenNpmParentExits();
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
