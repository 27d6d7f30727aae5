// NATS handlers of the event operations: they translate messages to repository calls and outcomes to errors.
// Each operation is one round trip to PostgreSQL.
import { ledgerOps } from '../../../runtime/src/contracts/operations.ts';
import type { Database } from '../../../runtime/src/db/database.ts';
import { AppError } from '../../../runtime/src/errors.ts';
import type { Logger } from '../../../runtime/src/logger.ts';
import { bind, type EndpointBinding } from '../../../runtime/src/transport/operation.ts';
import { isUuid } from '../../../runtime/src/validation/uuid.ts';
import { receiptClock } from './clock.ts';
import {
  DatabaseUnavailableError,
  EventRepository,
  type RecordEventParams,
  type RecordResult,
  type StoredDecision,
} from './repository.ts';

export interface EventEndpointDeps {
  database?: Database | undefined;
  logger: Logger;
}

export interface EventEndpointConfig {
  eventRateLimitPerMinute: number;
}

const EVENT_TYPE = /^[a-z][a-z0-9_.-]{0,63}$/;
const HASH_BYTES = 32;
// occurredAt is bounded to years 0000..9999 by the edge's grammar; the ledger refuses anything outside as well.
const OCCURRED_AT_MIN_MS = -62_167_219_200_000n;
const OCCURRED_AT_MAX_MS = 253_402_300_799_999n;

/**
 * A 503 of RecordEvent after the ledger lost its database connection during the decision and found no stored decision
 * on a new connection (or could not look): the decision may still have been made (a commit racing the break), so
 * nothing is claimed. A retry with the same eventId answers the stored decision if there is one, and decides once
 * otherwise.
 */
export const OUTCOME_UNKNOWN =
  'The ledger lost its database connection during the decision; whether the event was decided is unknown. ' +
  'Retry with the same eventId: it answers the stored decision if one was made.';

const invalidKey = () => new AppError(401, 'invalid_key', 'The key is unknown, revoked or not a secret key.');
const invalidPublicKey = () =>
  new AppError(401, 'INVALID_PUBLIC_KEY', 'The publicKey is missing, malformed, unknown or revoked.');

function toDecisionMessage(eventId: string, d: StoredDecision) {
  return {
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
  };
}

export function eventEndpoints(deps: EventEndpointDeps, config: EventEndpointConfig): EndpointBinding[] {
  if (!deps.database) throw new Error('the ledger needs its database');
  const events = new EventRepository(deps.database);
  const logger = deps.logger;
  const storeFailure = (error: unknown): never => {
    if (!(error instanceof DatabaseUnavailableError)) throw error;
    logger.warn({ err: error }, 'ledger database unavailable');
    throw new AppError(503, 'retry_later', 'The ledger is temporarily unavailable; retry later. Nothing was stored.');
  };
  const recordFailure =
    (params: RecordEventParams) =>
    async (error: unknown): Promise<RecordResult> => {
      if (!(error instanceof DatabaseUnavailableError) || error.outcome !== 'unknown') return storeFailure(error);
      // The connection broke during the decision: it may have committed. What is stored answers (CONTRACT section 7).
      const stored = await events
        .storedDecision(params.keyHash, params.eventId, params.payloadHash)
        .catch((lookupError: unknown) => {
          logger.warn({ err: lookupError }, 'stored decision lookup failed');
          return undefined;
        });
      logger.warn({ err: error, found: stored !== undefined }, 'ledger connection lost during a decision');
      if (stored) return stored;
      throw new AppError(503, 'retry_later', OUTCOME_UNKNOWN);
    };

  return [
    bind(ledgerOps.recordEvent, async (request) => {
      if (request.keyHash.length !== HASH_BYTES) throw invalidKey();
      if (
        !isUuid(request.eventId) ||
        !isUuid(request.playerId) ||
        !EVENT_TYPE.test(request.eventType) ||
        request.payloadHash.length !== HASH_BYTES ||
        request.occurredAtMs < OCCURRED_AT_MIN_MS ||
        request.occurredAtMs > OCCURRED_AT_MAX_MS
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
        receivedAt: receiptClock.now(),
        rateLimitPerMinute: config.eventRateLimitPerMinute,
      };
      const result = await events.recordEvent(params).catch(recordFailure(params));
      switch (result.outcome) {
        case 'invalid_key':
          throw invalidKey();
        case 'invalid_player':
          throw new AppError(404, 'invalid_player', 'playerId is not a player of this game.');
        case 'event_conflict':
          throw new AppError(409, 'event_conflict', 'This eventId was already used with a different payload.');
        default:
          return {
            // PostgreSQL's spelling of the UUID (lower case), as the records list it.
            decision: toDecisionMessage(request.eventId.toLowerCase(), result.decision),
            replayed: result.outcome === 'replayed',
          };
      }
    }),
    bind(ledgerOps.authenticateGameKey, async (request) => {
      if (request.keyHash.length !== HASH_BYTES) return { valid: false, kind: '' };
      const kind = await events.keyKind(request.keyHash).catch(storeFailure);
      return kind ? { valid: true, kind } : { valid: false, kind: '' };
    }),
    bind(ledgerOps.getPublicConfig, async (request) => {
      if (request.keyHash.length !== HASH_BYTES) throw invalidPublicKey();
      const config = await events.publicConfig(request.keyHash).catch(storeFailure);
      if (!config) throw invalidPublicKey();
      return { config };
    }),
  ];
}
