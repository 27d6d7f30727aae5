// The event operations' error mapping: outcomes and store failures to the AppError each operation answers, and the
// answer to a decision whose outcome is unknown (the stored decision, looked up: another request's is a replay, the
// request's own a 503 that says so).
import { QueueFullError } from '#runtime/batching/keyed-batcher.ts';
import { EVENT_ANSWER_LOST } from '#runtime/contracts/event-answer-lost.ts';
import { sqlStateOf } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import { LATE_MESSAGE } from '#runtime/transport/codec.ts';
import { DeadlinePassedError } from '#runtime/transport/deadline.ts';
import {
  DatabaseUnavailableError,
  type EventRepository,
  type RecordEventParams,
  type RecordOutcome,
  type RecordResult,
  type StoredDecision,
} from './repository.ts';

/**
 * A 503 of RecordEvent after the ledger lost its database connection during the decision and found no stored decision
 * on a new connection (or could not look): the decision may still have been made (a commit racing the break), so
 * nothing is claimed. A retry with the same eventId answers the stored decision if there is one, and decides once
 * otherwise.
 */
export const OUTCOME_UNKNOWN =
  'The ledger lost its database connection during the decision; whether the event was decided is unknown. ' +
  'Retry with the same eventId: it answers the stored decision if one was made.';

/**
 * A 503 of RecordEvent after its decision failed in a way that is neither a database answer nor a lost connection (a
 * bug around the statement, an answer that does not parse) and no stored decision was found: the statement may have
 * committed, so nothing is claimed.
 */
export const OUTCOME_UNKNOWN_FAILURE =
  'The ledger failed during the decision; whether the event was decided is unknown. ' +
  'Retry with the same eventId: it answers the stored decision if one was made.';

/** A 503 whose failure is known to have stored nothing. */
const NOT_STORED = 'The ledger is temporarily unavailable; retry later. Nothing was stored.';

export const invalidKey = () => new AppError('invalid_key', 'The key is unknown, revoked or not a secret key.');
export const invalidPublicKey = () =>
  new AppError('INVALID_PUBLIC_KEY', 'The publicKey is missing, malformed, unknown or revoked.');

/** The error of an outcome without a decision. */
export function outcomeError(outcome: Exclude<RecordOutcome, 'decided' | 'replayed'>): AppError {
  switch (outcome) {
    case 'invalid_key':
      return invalidKey();
    case 'invalid_player':
      return new AppError('invalid_player', 'playerId is not a player of this game.');
    case 'event_conflict':
      return new AppError('event_conflict', 'This eventId was already used with a different payload.');
  }
}

export interface EventFailures {
  /** The answer to a failure whose outcome is known (nothing was stored): throws the AppError, or the error itself. */
  notStored(error: unknown): never;
  /**
   * RecordEvent's answer to its failed decision: a known outcome as notStored; an unknown one (the connection broke,
   * or the decision failed without an answer of the database) is the stored decision if there is one.
   */
  decision(params: RecordEventParams, error: unknown): Promise<RecordResult>;
}

/**
 * @param ownDecisionFound told of a decision this request made itself but whose answer was lost (EVENT_ANSWER_LOST):
 *   fresh and committed, so its live notice is still owed.
 */
export function eventFailures(
  events: Pick<EventRepository, 'storedDecision'>,
  logger: Logger,
  ownDecisionFound?: (params: RecordEventParams, decision: StoredDecision) => void,
): EventFailures {
  const notStored = (error: unknown): never => {
    if (error instanceof QueueFullError) {
      logger.warn({ err: error }, 'ledger event queue full');
      throw new AppError('retry_later', 'The ledger is overloaded; retry later. Nothing was stored.');
    }
    if (error instanceof DeadlinePassedError) {
      // Not decided: the caller has given up already (and answered that the event may have been stored).
      throw new AppError('retry_later', LATE_MESSAGE);
    }
    if (error instanceof DatabaseUnavailableError) {
      logger.warn({ err: error, sqlstate: sqlStateOf(error) }, 'ledger database unavailable');
      throw new AppError('retry_later', NOT_STORED);
    }
    const sqlstate = sqlStateOf(error);
    if (sqlstate === undefined) throw error;
    // The server refused the statement with a SQLSTATE nobody expected (a bug, a schema out of step with the code, a
    // pooler that lost a prepared statement, contention that outlasted its retries): a statement outside a
    // transaction block was rolled back, so nothing was stored. An error for the operators, with its code; for the
    // client the outage it is (CONTRACT section 7: a dependency down is 503 retry_later), not a bare 500.
    logger.error({ err: error, sqlstate }, 'ledger statement failed with an unexpected SQLSTATE; nothing was stored');
    throw new AppError('retry_later', NOT_STORED);
  };
  const decision = async (params: RecordEventParams, error: unknown): Promise<RecordResult> => {
    const lost = error instanceof DatabaseUnavailableError && error.outcome === 'unknown';
    const known =
      error instanceof QueueFullError ||
      error instanceof DeadlinePassedError ||
      (error instanceof DatabaseUnavailableError && !lost) ||
      (!(error instanceof DatabaseUnavailableError) && sqlStateOf(error) !== undefined);
    if (known) return notStored(error);
    // The connection broke during the decision, or the decision failed without an answer of the database (a bug
    // around the statement, an answer that does not parse): it may have committed. What is stored answers
    // (CONTRACT section 7).
    if (!lost) logger.error({ err: error }, 'ledger decision failed unexpectedly; its outcome is unknown');
    const stored = await events
      .storedDecision(params.keyHash, params.eventId, params.payloadHash)
      .catch((lookupError: unknown) => {
        logger.warn({ err: lookupError }, 'stored decision lookup failed');
        return undefined;
      });
    logger.warn(
      { err: error, sqlstate: sqlStateOf(error), found: stored !== undefined },
      lost ? 'ledger connection lost during a decision' : 'stored decision looked up after a failed decision',
    );
    if (!stored) throw new AppError('retry_later', lost ? OUTCOME_UNKNOWN : OUTCOME_UNKNOWN_FAILURE);
    // This request's own decision (the id the ledger proposed for it): committed, but its answer (with the quota
    // figures of a fresh decision) is lost; not a replay, which would say that an earlier request decided it.
    if (stored.outcome === 'replayed' && params.decisionId !== undefined && stored.decision.id === params.decisionId) {
      ownDecisionFound?.(params, stored.decision);
      throw new AppError('retry_later', EVENT_ANSWER_LOST);
    }
    return stored;
  };
  return { notStored, decision };
}

/**
 * One event's error in a RecordEvents reply: its AppError as RecordEvent would answer it; anything else is a 500
 * internal_error. Logged when it is a 5xx or not an AppError.
 */
export function outcomeOfError(error: unknown, logger: Logger, requestId: string): AppError {
  const appError =
    error instanceof AppError ? error : new AppError('internal_error', 'The service failed to handle the request.');
  if (!(error instanceof AppError) || appError.status >= 500) {
    logger.error({ err: error, requestId }, 'event of a RecordEvents request failed');
  }
  return appError;
}
