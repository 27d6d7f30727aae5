// NATS handlers of the event operations: they translate messages to repository calls and outcomes to errors.
// RecordEvent and RecordEvents go through the DecisionBatcher (batcher.ts): the events that arrive while a key's
// batch is in the database go together as one call of ledger.record_events (one round trip, one transaction).
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Gauge, Histogram } from 'prom-client';
import type { Clock } from '#runtime/clock.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { DeveloperEventSchema } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import type {
  RecordEventOutcomeSchema,
  RecordEventRequest,
  RecordEventResponseSchema,
} from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { decisionsSubject, decisionsTopic } from '#runtime/contracts/subjects.ts';
import { EVENT_TYPE_REGEX } from '#runtime/contracts/vocabulary.ts';
import type { Database } from '#runtime/db/database.ts';
import { sqlStateOf } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { bind, type EndpointBinding, type Transport } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { type DecideBatch, DecisionBatcher, QueueFullError } from './batcher.ts';
import {
  DatabaseUnavailableError,
  EventRepository,
  isUniqueViolation,
  type RecordEventParams,
  type RecordResult,
  type StoredDecision,
} from './repository.ts';

export interface EventEndpointDeps {
  database: Database;
  /** The receipt time of events (null: the decision's transaction's `now()`). */
  clock: Clock;
  logger: Logger;
  metrics?: Metrics | undefined;
  /** Publishes each fresh decision after commit (the live decisions subscription of the gateway). */
  transport?: Transport | undefined;
}

export interface EventEndpointConfig {
  eventRateLimitPerMinute: number;
  /** Most events in one call of ledger.record_events (EVENT_BATCH_MAX; 1 turns batching off). */
  eventBatchMax?: number | undefined;
  /** Most keys' waiting batches in one call of ledger.record_events (EVENT_GROUP_KEYS_MAX; 1: one key per call). */
  eventGroupKeysMax?: number | undefined;
}

/** Default EVENT_BATCH_MAX: large enough that a hot game's queue goes in one transaction, small enough to bound it. */
export const EVENT_BATCH_MAX_DEFAULT: number = EVENT_LIMITS.ledgerBatchDefault;
/** Default EVENT_GROUP_KEYS_MAX (batcher.ts, "Several keys in one call"): as the edge's INGEST_EVENT_KEYS_MAX. */
export const EVENT_GROUP_KEYS_MAX_DEFAULT = 8;
/** Most events in one RecordEvents request (the edge sends at most this many). */
/** Most events waiting for the database in one ledger process; beyond it RecordEvent answers 503 at once. */
const EVENTS_QUEUED_MAX = 10_000;

const EVENT_TYPE = EVENT_TYPE_REGEX;
// occurredAt is bounded to years 0000..9999 by the edge's grammar; the ledger refuses anything outside as well.
const occurredAtMinMs = BigInt(EVENT_LIMITS.occurredAtMinMs);
const occurredAtMaxMs = BigInt(EVENT_LIMITS.occurredAtMaxMs);

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

const invalidKey = () => new AppError(401, 'invalid_key', 'The key is unknown, revoked or not a secret key.');
const invalidPublicKey = () =>
  new AppError(401, 'INVALID_PUBLIC_KEY', 'The publicKey is missing, malformed, unknown or revoked.');

/**
 * The decision as the API's event record: one protobuf message, made once per answer and shared by the reply and,
 * for a fresh decision, the live notice (protobuf-es takes a message as it is where a field expects one, instead of
 * copying it).
 */
function toDecisionMessage(eventId: string, d: StoredDecision) {
  return create(DeveloperEventSchema, {
    id: d.id,
    eventId,
    gameId: d.gameId,
    organizationId: d.organizationId,
    playerId: d.playerId,
    eventType: d.eventType,
    occurredAt: new Date(d.occurredAtMs).toISOString(),
    status: d.status,
    reason: d.reason ?? undefined,
    rewardCredits: d.rewardCredits,
    createdAt: new Date(d.createdAtMs).toISOString(),
  });
}

/**
 * What becomes of the events of a batch whose call of ledger.record_events failed; nothing of the batch was
 * committed (one transaction). The one place that classifies such failures:
 * - the database is unavailable (DatabaseUnavailableError: connection or transient failure): every event of the
 *   batch gets that error, the same answer each would have got alone (503 retry_later);
 * - anything else is unexpected (a unique violation from a writer that did not take the game lock, a bad value
 *   that only one event carries, ...): each event is decided again alone, in order, so that one bad event fails only
 *   itself; an event alone that meets a unique violation is tried once more (the stored decision then answers as a
 *   replay), as single decisions always were.
 */
export async function recoverFailedBatch(
  batch: RecordEventParams[],
  error: unknown,
  decide: DecideBatch,
  logger?: Logger,
): Promise<Array<RecordResult | { error: unknown }>> {
  if (error instanceof DatabaseUnavailableError) return batch.map(() => ({ error }));
  if (batch.length > 1)
    logger?.warn({ err: error, events: batch.length }, 'event batch failed; deciding its events one by one');
  else if (!isUniqueViolation(error)) return [{ error }];
  const results: Array<RecordResult | { error: unknown }> = [];
  for (const params of batch) {
    let result: RecordResult | { error: unknown };
    try {
      result = (await decide([params]))[0] as RecordResult;
    } catch (first) {
      result = { error: first };
      if (isUniqueViolation(first)) {
        try {
          result = (await decide([params]))[0] as RecordResult;
        } catch (second) {
          result = { error: second };
        }
      }
    }
    results.push(result);
  }
  return results;
}

type RecordEventReply = MessageInitShape<typeof RecordEventResponseSchema>;
type RecordEventOutcomeInit = MessageInitShape<typeof RecordEventOutcomeSchema>;

export function eventEndpoints(deps: EventEndpointDeps, config: EventEndpointConfig): EndpointBinding[] {
  const events = new EventRepository(deps.database);
  const logger = deps.logger;
  // The answers of a statement that failed with nothing stored (its outcome is known).
  const storeFailure = (error: unknown): never => {
    if (error instanceof QueueFullError) {
      logger.warn({ err: error }, 'ledger event queue full');
      throw new AppError(503, 'retry_later', 'The ledger is overloaded; retry later. Nothing was stored.');
    }
    if (error instanceof DatabaseUnavailableError) {
      logger.warn({ err: error, sqlstate: sqlStateOf(error) }, 'ledger database unavailable');
      throw new AppError(503, 'retry_later', NOT_STORED);
    }
    const sqlstate = sqlStateOf(error);
    if (sqlstate === undefined) throw error;
    // The server refused the statement with a SQLSTATE nobody expected (a bug, a schema out of step with the code, a
    // pooler that lost a prepared statement, contention that outlasted its retries): a statement outside a
    // transaction block was rolled back, so nothing was stored. An error for the operators, with its code; for the
    // client the outage it is (CONTRACT section 7: a dependency down is 503 retry_later), not a bare 500.
    logger.error({ err: error, sqlstate }, 'ledger statement failed with an unexpected SQLSTATE; nothing was stored');
    throw new AppError(503, 'retry_later', NOT_STORED);
  };
  const recordFailure =
    (params: RecordEventParams) =>
    async (error: unknown): Promise<RecordResult> => {
      const lost = error instanceof DatabaseUnavailableError && error.outcome === 'unknown';
      const known =
        error instanceof QueueFullError ||
        (error instanceof DatabaseUnavailableError && !lost) ||
        (!(error instanceof DatabaseUnavailableError) && sqlStateOf(error) !== undefined);
      if (known) return storeFailure(error);
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
      if (stored) return stored;
      throw new AppError(503, 'retry_later', lost ? OUTCOME_UNKNOWN : OUTCOME_UNKNOWN_FAILURE);
    };

  const batchSizes = deps.metrics
    ? new Histogram({
        name: 'ledger_event_batch_size',
        help: 'Events of one key decided together (its batch, in a call of ledger.record_events)',
        buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000],
        registers: [deps.metrics.registry],
      })
    : undefined;
  const groupSizes = deps.metrics
    ? new Histogram({
        name: 'ledger_event_transaction_keys',
        help: 'Keys whose batches went to the database in one call (one transaction), when more than one',
        buckets: [2, 3, 4, 5, 6, 7, 8, 16, 32, 64],
        registers: [deps.metrics.registry],
      })
    : undefined;
  const queueDepth = deps.metrics
    ? new Gauge({
        name: 'ledger_event_queue_depth',
        help: 'Events waiting for a batch (not yet in the database)',
        registers: [deps.metrics.registry],
      })
    : undefined;
  const decide: DecideBatch = (batch) => events.recordEvents(batch);
  const batcher = new DecisionBatcher(
    decide,
    (batch, error, again) => recoverFailedBatch(batch, error, again, logger),
    {
      batchMax: Math.min(config.eventBatchMax ?? EVENT_BATCH_MAX_DEFAULT, EVENT_LIMITS.eventsPerCallMax),
      concurrencyMax: events.poolMax,
      queuedMax: EVENTS_QUEUED_MAX,
      groupKeysMax: Math.min(config.eventGroupKeysMax ?? EVENT_GROUP_KEYS_MAX_DEFAULT, EVENT_LIMITS.keysPerCallMax),
    },
    {
      batch: (size) => batchSizes?.observe(size),
      group: (keys) => groupSizes?.observe(keys),
      queued: (depth) => queueDepth?.set(depth),
    },
    (batches) => events.recordEventGroups(batches),
  );

  /** One event, validated and decided (through its key's batch); throws the AppError RecordEvent answers. */
  const recordOne = async (request: RecordEventRequest): Promise<RecordEventReply> => {
    if (request.keyHash.length !== EVENT_LIMITS.hashBytes) throw invalidKey();
    if (
      !isUuid(request.eventId) ||
      !isUuid(request.playerId) ||
      !EVENT_TYPE.test(request.eventType) ||
      request.payloadHash.length !== EVENT_LIMITS.hashBytes ||
      request.occurredAtMs < occurredAtMinMs ||
      request.occurredAtMs > occurredAtMaxMs
    ) {
      throw new AppError(400, 'invalid_event', 'The event does not match GameEventInput.');
    }
    const params: RecordEventParams = {
      keyHash: request.keyHash,
      eventId: request.eventId,
      playerId: request.playerId,
      eventType: request.eventType,
      occurredAtMs: request.occurredAtMs,
      payloadHash: request.payloadHash,
      receivedAt: deps.clock.now(),
      rateLimitPerMinute: config.eventRateLimitPerMinute,
    };
    const result = await batcher.submit(params).catch(recordFailure(params));
    switch (result.outcome) {
      case 'invalid_key':
        throw invalidKey();
      case 'invalid_player':
        throw new AppError(404, 'invalid_player', 'playerId is not a player of this game.');
      case 'event_conflict':
        throw new AppError(409, 'event_conflict', 'This eventId was already used with a different payload.');
      default: {
        // PostgreSQL's spelling of the UUID (lower case), as the records list it.
        const decision = toDecisionMessage(request.eventId.toLowerCase(), result.decision);
        // A fresh decision, committed: its live notice, fire-and-forget (publish never throws nor waits; a lost
        // notice loses nothing but a live view). Published before the reply is encoded, in the same flush.
        if (result.outcome === 'decided') {
          deps.transport?.publish(decisionsTopic, decisionsSubject(decision.gameId), { decision });
        }
        return {
          decision,
          replayed: result.outcome === 'replayed',
          // A fresh decision's quota figures; a replay (or a decision found after a lost connection) has none.
          quota: result.outcome === 'decided' ? result.quota : undefined,
        };
      }
    }
  };

  return [
    bind(ledgerOps.recordEvent, recordOne),
    bind(ledgerOps.recordEvents, async (request, ctx) => {
      if (request.events.length > EVENT_LIMITS.eventsPerRequestMax) {
        throw new AppError(400, 'invalid_event', `At most ${EVENT_LIMITS.eventsPerRequestMax} events per request.`);
      }
      const outcomes = await Promise.all(
        request.events.map(
          (event): Promise<RecordEventOutcomeInit> =>
            recordOne(event).then(
              (value) => ({ outcome: { case: 'result', value } }),
              (error: unknown) => {
                const appError =
                  error instanceof AppError
                    ? error
                    : new AppError(500, 'internal_error', 'The service failed to handle the request.');
                if (!(error instanceof AppError) || appError.status >= 500) {
                  logger.error({ err: error, requestId: ctx.requestId }, 'event of a RecordEvents request failed');
                }
                return {
                  outcome: {
                    case: 'error',
                    value: { status: appError.status, code: appError.code, message: appError.message },
                  },
                };
              },
            ),
        ),
      );
      return { outcomes };
    }),
    bind(ledgerOps.authenticateGameKey, async (request) => {
      if (request.keyHash.length !== EVENT_LIMITS.hashBytes) return { valid: false, kind: '' };
      const kind = await events.keyKind(request.keyHash).catch(storeFailure);
      return kind ? { valid: true, kind } : { valid: false, kind: '' };
    }),
    bind(ledgerOps.getPublicConfig, async (request) => {
      if (request.keyHash.length !== EVENT_LIMITS.hashBytes) throw invalidPublicKey();
      const config = await events.publicConfig(request.keyHash).catch(storeFailure);
      if (!config) throw invalidPublicKey();
      return { config };
    }),
  ];
}
