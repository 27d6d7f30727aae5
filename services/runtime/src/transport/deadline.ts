// Request deadlines end to end (docs/decisions.md, "Request deadlines"). The caller gives every request a budget: its
// timeout less a reply margin, sent as the `Rewards-Budget-Ms` header (milliseconds left when the message leaves, not
// an absolute time, so that the machines' clocks need not agree). The state owner turns it into a deadline on its own
// monotonic clock (performance.now()) when the message arrives, and drops work whose deadline has passed before it
// starts: before the handler (runEndpoint), before a transaction (Database.transaction), when its batch queue takes an
// event (the ledger's batcher). Inside a transaction, statement_timeout and lock_timeout follow what is left of it.
// The handler runs in an async context holding its deadline, so that the database code finds it without every
// repository passing it on.
import { AsyncLocalStorage } from 'node:async_hooks';
import { identityOps, ledgerOps } from '../contracts/operations.ts';

/** The header of a request's budget: milliseconds left until the caller gives up, less the reply margin. */
export const BUDGET_HEADER = 'Rewards-Budget-Ms';

/**
 * The ledger's event writes on the subjects only ledgers that take the proposed decision ids serve: the edge's, and
 * the only event writes copied (REPEATABLE_SUBJECTS).
 */
const PROPOSED_ID_EVENT_SUBJECTS = [
  ledgerOps.recordEventWithProposedId.subject,
  ledgerOps.recordEventsWithProposedIds.subject,
];

/** The ledger's event operations: the hot path, whose requests get the shorter event timeout. */
const EVENT_SUBJECTS = new Set([
  ledgerOps.recordEvent.subject,
  ledgerOps.recordEvents.subject,
  ...PROPOSED_ID_EVENT_SUBJECTS,
]);

export interface RequestTimeouts {
  requestTimeoutMs: number;
  /** The timeout of the ledger's event operations (NATS_EVENT_REQUEST_TIMEOUT_MS); default requestTimeoutMs. */
  eventRequestTimeoutMs?: number | undefined;
}

/**
 * Operations safe to send again while an earlier copy may still be running: reads, and the event writes on the
 * proposed-id subjects. A decision is made once per (game, eventId), and each event of such a request carries the
 * decision id the edge proposed for it: a copy that finds the decision its first copy made answers it as the request's
 * own (replayed false), not as an earlier request's (the ledger's events/endpoints.ts). Only ledgers that take the
 * proposed ids serve those subjects, so no copy meets one that decides under an id of its own (whose decision another
 * copy would answer as a replay); RecordEvent(s) on their first subjects are never copied (docs/decisions.md, "Copies
 * of reads and event writes"). Other writes are never sent twice: not the console actions, link intents or
 * invitations (not keyed). The heavy reads (rule dry-runs, exports) are not copied either.
 */
const REPEATABLE_SUBJECTS = new Set(
  [
    ledgerOps.authenticateGameKey,
    ledgerOps.getPublicConfig,
    ledgerOps.getPlayer,
    ledgerOps.inspectLinkIntent,
    ledgerOps.getSnapshot,
    ledgerOps.listRecords,
    ledgerOps.decisionStats,
    ledgerOps.listLinkIntents,
    ledgerOps.listDecisions,
    ledgerOps.searchConsole,
    ledgerOps.listWebhookEndpoints,
    ledgerOps.listWebhookDeliveries,
    identityOps.getPlatformState,
    identityOps.developerEmails,
    identityOps.listInvitations,
    identityOps.listOperatorAudit,
  ]
    .map((operation) => operation.subject)
    .concat(PROPOSED_ID_EVENT_SUBJECTS),
);

/** NATS_TRY_TIMEOUT_PERCENT's default: a repeatable request is copied after 15 % of its timeout. */
export const DEFAULT_TRY_TIMEOUT_PERCENT = 15;

/** Whether a request of `subject` may be sent again while an earlier copy is unanswered (REPEATABLE_SUBJECTS). */
export function isRepeatable(subject: string): boolean {
  return REPEATABLE_SUBJECTS.has(subject);
}

/** Whether `subject` is an event write (RecordEvent, RecordEvents): copies of it may each have stored. */
export function isEventWrite(subject: string): boolean {
  return EVENT_SUBJECTS.has(subject);
}

/** How long a caller waits for the reply to a request of `subject`. */
export function timeoutFor(subject: string, timeouts: RequestTimeouts): number {
  return EVENT_SUBJECTS.has(subject)
    ? (timeouts.eventRequestTimeoutMs ?? timeouts.requestTimeoutMs)
    : timeouts.requestTimeoutMs;
}

/**
 * The budget a request of timeout `timeoutMs` carries: the timeout less a tenth of it, at most 100 ms. The state owner
 * ends its work (a lock wait, a statement) by then, so that its own answer (a 503 that knows nothing was stored) is
 * back before the caller gives up and answers "may have been stored".
 */
export function budgetFor(timeoutMs: number): number {
  return Math.max(1, timeoutMs - Math.min(100, Math.floor(timeoutMs / 10)));
}

/**
 * The budget (whole ms, at least 0) of a request of timeout `timeoutMs` that leaves now: budgetFor(timeoutMs), or less
 * when the caller's own deadline (a state owner calling on) ends sooner.
 */
export function requestBudget(timeoutMs: number, callerDeadline: number | undefined): number {
  const budget = budgetFor(timeoutMs);
  return Math.max(0, Math.floor(callerDeadline === undefined ? budget : Math.min(budget, remainingMs(callerDeadline))));
}

/** The local deadline (performance.now() time) of a request that arrived now with this header's value, if any. */
export function deadlineFromBudget(header: string | undefined | null): number | undefined {
  if (!header) return undefined;
  const budgetMs = Number(header);
  return Number.isFinite(budgetMs) && budgetMs >= 0 ? performance.now() + budgetMs : undefined;
}

/** Milliseconds left until `deadline` (performance.now() time); 0 or less once it has passed. */
export function remainingMs(deadline: number): number {
  return deadline - performance.now();
}

/**
 * The work of a request whose deadline passed before it started: not done (nothing was stored, nothing changed).
 * Its caller has given up already; the answer (a 503 that says nothing was stored or changed) is true.
 */
export class DeadlinePassedError extends Error {
  /**
   * For the database failure classifier (db/failures.ts): work not sent to the database, as when no connection could
   * be made, so that each owner answers it with its own "unavailable, nothing stored" 503.
   */
  readonly databaseFailure = 'unavailable';

  constructor(what: string) {
    super(`the request's deadline passed before ${what}`);
    this.name = 'DeadlinePassedError';
  }
}

const storage = new AsyncLocalStorage<number>();

/** Runs `work` with `deadline` as the current request's deadline (none: runs it as it is). */
export function withDeadline<T>(deadline: number | undefined, work: () => T): T {
  return deadline === undefined ? work() : storage.run(deadline, work);
}

/** The deadline of the request being handled (performance.now() time), if it has one. */
export function currentDeadline(): number | undefined {
  return storage.getStore();
}
