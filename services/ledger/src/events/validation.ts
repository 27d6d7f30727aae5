// What the event operations accept: a RecordEvent request checked field by field (the edge checked the event already;
// the ledger refuses anything a caller of its own could send outside the contract).
import { randomUUID } from 'node:crypto';
import type { Clock } from '#runtime/clock.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import type { RecordEventRequest, RecordEventsRequest } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { EVENT_TYPE_REGEX } from '#runtime/contracts/vocabulary.ts';
import { AppError } from '#runtime/errors.ts';
import { isUuid, uuidText } from '#runtime/validation/uuid.ts';
import { invalidKey } from './errors.ts';
import type { RecordEventParams } from './repository.ts';

// occurredAt is bounded to years 0000..9999 by the edge's grammar; the ledger refuses anything outside as well.
const occurredAtMinMs = BigInt(EVENT_LIMITS.occurredAtMinMs);
const occurredAtMaxMs = BigInt(EVENT_LIMITS.occurredAtMaxMs);

/** Whether a key or payload hash has the length of one (SHA-256). */
export const isHash = (bytes: Uint8Array): boolean => bytes.length === EVENT_LIMITS.hashBytes;

/**
 * A RecordEvent request as the decision's parameters, received now (the clock: null, the decision's transaction's
 * now()); throws the AppError RecordEvent answers for a malformed one
 * (401 invalid_key for a key hash of the wrong length, 400 invalid_event otherwise).
 */
export function recordEventParams(
  request: RecordEventRequest,
  clock: Clock,
  rateLimitPerMinute: number,
): RecordEventParams {
  if (!isHash(request.keyHash)) throw invalidKey();
  if (
    !isUuid(request.eventId) ||
    !isUuid(request.playerId) ||
    !EVENT_TYPE_REGEX.test(request.eventType) ||
    !isHash(request.payloadHash) ||
    request.occurredAtMs < occurredAtMinMs ||
    request.occurredAtMs > occurredAtMaxMs
  ) {
    throw new AppError('invalid_event', 'The event does not match GameEventInput.');
  }
  const metadataJson = request.metadataJson;
  if (metadataJson !== undefined && !isMetadataText(metadataJson)) {
    throw new AppError('invalid_metadata', 'The metadata is not a canonical JSON object within its limits.');
  }
  return {
    keyHash: request.keyHash,
    eventId: request.eventId,
    playerId: request.playerId,
    eventType: request.eventType,
    occurredAtMs: request.occurredAtMs,
    payloadHash: request.payloadHash,
    receivedAt: clock.now(),
    rateLimitPerMinute,
    metadataJson,
    ...decisionIdOf(request.proposedDecisionId),
  };
}

/**
 * The decision id the caller proposed (16 bytes: a UUID's), as UUID text; undefined when it proposed none (an edge of
 * a release before it did, or another caller) or something that is not a UUID by the document's rule (version 1 to
 * 8, variant 10xx; not the nil or max UUID: ignored, the ledger proposes one), since the id is shown as the decision's.
 */
function decisionIdOf(proposed: Uint8Array): { decisionId: string; proposedByCaller: boolean } {
  const id = proposedId(proposed);
  return id === undefined
    ? { decisionId: randomUUID(), proposedByCaller: false }
    : { decisionId: id, proposedByCaller: true };
}

function proposedId(bytes: Uint8Array): string | undefined {
  if (bytes.length !== 16) return undefined;
  const version = (bytes[6] as number) >> 4;
  const variant = (bytes[8] as number) >> 6;
  return version >= 1 && version <= 8 && variant === 2 ? uuidText(bytes) : undefined;
}

/**
 * The shape ledger.events' CHECK constraint holds the metadata to (an object's text, 2..4,096 UTF-8 bytes). The edge
 * checked every metadata rule and made the canonical text; this is the cheap guard against another caller, not a
 * JSON parse on the hot path.
 */
function isMetadataText(text: string): boolean {
  return (
    text.length >= 2 &&
    text.startsWith('{') &&
    text.endsWith('}') &&
    Buffer.byteLength(text, 'utf8') <= EVENT_LIMITS.metadataBytesMax
  );
}

/** A RecordEvents request holds at most EVENT_LIMITS.eventsPerRequestMax events (400 invalid_event otherwise). */
export function checkRecordEventsSize(request: RecordEventsRequest): void {
  if (request.events.length > EVENT_LIMITS.eventsPerRequestMax) {
    throw new AppError('invalid_event', `At most ${EVENT_LIMITS.eventsPerRequestMax} events per request.`);
  }
}
