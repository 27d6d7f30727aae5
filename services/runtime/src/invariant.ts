// Invariants asserted in shipped code: a state that must hold where it changes (a counter never negative, a bound
// kept). In tests (NODE_ENV=test or JEST_WORKER_ID set) a broken one throws, so the test fails where it broke; in
// production it is logged as an error and counted (`invariant_violations_total{name}`), and the process goes on.
// Decision: not node:assert, which throws everywhere: a broken invariant of one batch or one claim must not end a
// process that serves everybody else's requests, but it must not go unseen either.
import type { Counter } from 'prom-client';
import type { Logger } from './logger.ts';

/** Where production reports violations: set once a program has its logger and metrics (reportInvariantsTo). */
let reporting: { logger: Logger; violations: Counter<'name'> } | undefined;
let throws = process.env.NODE_ENV === 'test' || process.env.JEST_WORKER_ID !== undefined;

/** A broken invariant (what `invariant` throws in tests). */
export class InvariantError extends Error {
  readonly invariant: string;

  constructor(name: string, details: Record<string, unknown> | undefined) {
    super(`invariant ${name} broken${details === undefined ? '' : `: ${JSON.stringify(details, bigintText)}`}`);
    this.name = 'InvariantError';
    this.invariant = name;
  }
}

function bigintText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** The program's logger and its `invariant_violations_total` counter (metrics.ts) receive production's violations. */
export function reportInvariantsTo(logger: Logger, violations: Counter<'name'>): void {
  reporting = { logger, violations };
}

/** Whether a broken invariant throws (tests) or is reported (production); returns the previous setting. */
export function invariantsThrow(on: boolean): boolean {
  const before = throws;
  throws = on;
  return before;
}

/**
 * Asserts `condition`. `name` is the invariant's label (a fixed identifier: it is a metric label); `details`, called
 * only when it is broken, what the log line and the error say about the state. Never narrows types: in production a
 * broken invariant returns.
 */
export function invariant(condition: boolean, name: string, details?: () => Record<string, unknown>): void {
  if (condition) return;
  const state = details?.();
  if (throws) throw new InvariantError(name, state);
  report(name, state);
}

/**
 * A fault caught where throwing would do more harm than the fault (a caller's observer throwing inside the path that
 * answers events): reported as `invariant` reports a broken one in production, in tests too, and never thrown.
 */
export function reportBroken(name: string, details?: () => Record<string, unknown>): void {
  report(name, details?.());
}

function report(name: string, state: Record<string, unknown> | undefined): void {
  if (reporting === undefined) {
    console.error(new InvariantError(name, state).message);
    return;
  }
  reporting.violations.inc({ name });
  reporting.logger.error({ invariant: name, ...state }, `invariant ${name} broken`);
}
