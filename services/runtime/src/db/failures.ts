// The one classifier of database failures, used by every state owner's handlers (docs/errors.md, "Database
// failures"). It answers two questions about an error thrown by the driver or the ORM:
//   - is it the database failing (503 with the route's code), or a bug (500)?
//   - may a write that was in flight have committed anyway (the outcome is unknown), or is it known to be rolled back?
// Serialization failures and deadlocks are retried here, inside the owner, a bounded number of times before they
// become a 503 like any other unavailability.

/**
 * - `contention`: 40001 serialization failure, 40P01 deadlock. The transaction was rolled back; safe to retry at once.
 * - `unavailable`: the server refused the work or no connection could be made: nothing was sent, or the server
 *   rolled the transaction back and said so (53 insufficient resources, 57014 canceled, 57P03 cannot connect now,
 *   55P03 lock not available, 25006 a write on a read-only server: a standby after a failover, a refused connection:
 *   28, 3D000, 55000, ECONNREFUSED; the pool's connect timeout; no host of a multi-host DATABASE_URL suits its
 *   target_session_attrs, failover.ts).
 * - `connection_lost`: the connection broke while a statement was in flight (08 connection exception, 57P01/57P02
 *   shutdown or terminate, 58 system error, 40003 completion unknown, a socket error, the driver's "Connection
 *   terminated", a client-side query timeout). A commit may have happened before the break: the outcome of a write is unknown.
 */
export type DatabaseFailureKind = 'contention' | 'unavailable' | 'connection_lost';

/** Attempts of one unit of work under contention (the first try included) before it answers 503. */
export const CONTENTION_ATTEMPTS = 3;

const SQLSTATE = /^[0-9A-Z]{5}$/;
const CONTENTION = new Set(['40001', '40P01']);
// The server said the work was not done, or refused the connection (28 authorization, 3D000 no such database,
// 55000 "not currently accepting connections"). 25006 read_only_sql_transaction: the transaction tried to write on a
// read-only server (a demoted primary, default_transaction_read_only) and was rolled back; failover.ts then drops the
// connection and finds the primary again.
const REFUSED = /^(53|57014|57P03|55P03|55000|40000|40002|28|3D000|25006)/;
// The server went away, or cannot say whether the work was done.
const LOST = /^(08|57P0[1245]|58|40003|XX)/;
// Socket errors of the driver: refused before anything was sent ...
const CONNECT_ERRNO = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// ... or broken while something may have been in flight.
const BROKEN_ERRNO = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);
// Errors of node-postgres (and its pool) that carry no code at all.
// "Query read timeout": the client stopped waiting for a statement it had sent (a query_timeout).
const DRIVER_LOST =
  /Connection terminated|connection error|not queryable|Connection ended|socket hang up|Query read timeout/i;
const DRIVER_REFUSED = /timeout exceeded when trying to connect|Cannot use a pool after calling end/i;

/** The kind of database failure `error` is, or undefined when it is not one (a bug, a constraint, an API error). */
/** An error and the causes it wraps, at most four deep: the ORM wraps driver errors, pg errors may carry a cause. */
function* errorChain(error: unknown): Generator<object> {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    yield current as object;
    current = (current as { cause?: unknown }).cause;
  }
}

export function classifyDatabaseFailure(error: unknown): DatabaseFailureKind | undefined {
  for (const current of errorChain(error)) {
    // Errors of this service's own connection code say what they are (failover.ts: no server suits).
    const tagged = (current as { databaseFailure?: unknown }).databaseFailure;
    if (tagged === 'unavailable' || tagged === 'connection_lost') return tagged;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') {
      // Errno codes first: EPIPE has the shape of a SQLSTATE.
      if (CONNECT_ERRNO.has(code)) return 'unavailable';
      if (BROKEN_ERRNO.has(code)) return 'connection_lost';
      if (SQLSTATE.test(code)) {
        if (CONTENTION.has(code)) return 'contention';
        if (REFUSED.test(code)) return 'unavailable';
        if (LOST.test(code)) return 'connection_lost';
        // Another SQLSTATE (constraint, syntax, ...) is an answer of a healthy database.
        return undefined;
      }
    }
    const message = current instanceof Error ? current.message : '';
    if (DRIVER_REFUSED.test(message)) return 'unavailable';
    if (DRIVER_LOST.test(message)) return 'connection_lost';
  }
  return undefined;
}

/**
 * The SQLSTATE the server answered with, also when the ORM or a caller wrapped the driver's error; undefined when
 * there is none (a socket error, a bug of the code around the statement). A SQLSTATE means the server refused the
 * statement: a statement outside a transaction block was then rolled back. The one reader of an error's SQLSTATE
 * (failover.ts and the repositories use it too).
 */
export function sqlStateOf(error: unknown): string | undefined {
  for (const current of errorChain(error)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && SQLSTATE.test(code) && !CONNECT_ERRNO.has(code) && !BROKEN_ERRNO.has(code)) {
      return code;
    }
  }
  return undefined;
}

/** True when the database failed (any kind): the handler answers its 503. */
export function isDatabaseFailure(error: unknown): boolean {
  return classifyDatabaseFailure(error) !== undefined;
}

/** What retryOnContention tells its observer: a retry, or the bound reached (the failure is thrown). */
export type ContentionOutcome = 'retried' | 'gave_up';

/** Sees each contention failure retryOnContention met: its SQLSTATE, the attempt it ended, and what came of it. */
export type ContentionObserver = (sqlstate: string, attempt: number, outcome: ContentionOutcome) => void;

/** The SQLSTATE of a contention failure (40001 or 40P01), also when the ORM wrapped the driver's error. */
function contentionState(error: unknown): string {
  for (const current of errorChain(error)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONTENTION.has(code)) return code;
  }
  return 'unknown';
}

/**
 * Runs one unit of work (a statement or a whole transaction; it must start from scratch on each call) and runs it
 * again when the database rolled it back for contention, up to `attempts` times in all, with a short random pause
 * that grows with each attempt (so that the two sides of a deadlock do not collide again). Anything else, and the
 * last contention failure, is thrown as it came. `observe` sees every contention failure (Database counts and logs
 * them: a deadlock that is retried is otherwise invisible, only slower).
 */
export async function retryOnContention<T>(
  work: () => Promise<T>,
  attempts = CONTENTION_ATTEMPTS,
  observe?: ContentionObserver,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (classifyDatabaseFailure(error) !== 'contention') throw error;
      const last = attempt >= attempts;
      observe?.(contentionState(error), attempt, last ? 'gave_up' : 'retried');
      if (last) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
