// An event as it travels: serialized once when it is recorded, and that text is the body of every send of it, first
// or retry, alone or in a batch. The service's payload identity is the canonical JSON of the body with the exact
// text of each value (`occurredAt`'s offset included), so rebuilding the body at retry time could turn a retry into
// a 409 `event_conflict`; keeping the bytes cannot. The checks here are the ones that would fail a whole batch
// request (a malformed field outside `metadata`) or cannot be right on any send; the service checks the rest.

/** One event's body at most (the single endpoint's 413 above). */
export const EVENT_BODY_BYTES_MAX = 16_384;
/** Events in one batch request at most. */
export const BATCH_EVENTS_MAX = 100;
/** A batch request's body at most (the batch endpoint's 413 above). */
export const BATCH_BODY_BYTES_MAX = 1_048_576;

/** The API document's UUID rule: versions 1 to 8, variant 8, 9, a or b; the nil and the max UUID. */
const UUID =
  /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|0{8}-0{4}-0{4}-0{4}-0{12}|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-[fF]{12})$/;
const EVENT_TYPE = /^[a-z][a-z0-9_.-]{0,63}$/;
/** RFC 3339 with a mandatory offset, seconds and fraction optional (the service checks the calendar). */
const OCCURRED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** What a game server records. `eventId` and `occurredAt` are filled in when absent (a new UUID, now). */
export interface GameEventInput {
  /** The event's idempotency id: make it once, when the event happens, and keep it with the event. */
  eventId?: string;
  playerId: string;
  eventType: string;
  /** An RFC 3339 text with its offset, sent as written; a Date is written once, as `toISOString()` does. */
  occurredAt?: string | Date;
  metadata?: Record<string, unknown>;
}

/** An event serialized once: `body` is the exact text every send of it carries. Keep it to resend after a restart. */
export interface SerializedEvent {
  readonly eventId: string;
  readonly body: string;
  /** `body`'s UTF-8 length. */
  readonly bytes: number;
}

/** A recorded event that cannot be sent as it is (the request would be refused whatever the service's state). */
export class InvalidEventError extends TypeError {
  override readonly name = 'InvalidEventError';
}

const encoder = new TextEncoder();

/** Checks the event and writes its body, once. Throws InvalidEventError. */
export function serializeEvent(event: GameEventInput): SerializedEvent {
  if (event === null || typeof event !== 'object') throw new InvalidEventError('an event is an object');
  const known = new Set(['eventId', 'playerId', 'eventType', 'occurredAt', 'metadata']);
  for (const field of Object.keys(event)) {
    if (!known.has(field)) throw new InvalidEventError(`unknown field ${field} (the service refuses unknown fields)`);
  }
  const eventId = event.eventId ?? crypto.randomUUID();
  const occurredAt =
    event.occurredAt === undefined
      ? new Date().toISOString()
      : event.occurredAt instanceof Date
        ? event.occurredAt.toISOString()
        : event.occurredAt;
  const body: Record<string, unknown> = { eventId, playerId: event.playerId, eventType: event.eventType, occurredAt };
  if (event.metadata !== undefined) body.metadata = event.metadata;
  return checked(JSON.stringify(body), body);
}

/** A body kept from an earlier serializeEvent (say, across a restart), checked again and sent as it is. */
export function parseSerializedEvent(body: string): SerializedEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new InvalidEventError('the body is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidEventError('the body is not a JSON object');
  }
  return checked(body, parsed as Record<string, unknown>);
}

function checked(body: string, fields: Record<string, unknown>): SerializedEvent {
  const { eventId, playerId, eventType, occurredAt, metadata } = fields;
  if (typeof eventId !== 'string' || !UUID.test(eventId)) throw new InvalidEventError('eventId must be a UUID');
  if (typeof playerId !== 'string' || !UUID.test(playerId)) throw new InvalidEventError('playerId must be a UUID');
  if (typeof eventType !== 'string' || !EVENT_TYPE.test(eventType)) {
    throw new InvalidEventError('eventType must match ^[a-z][a-z0-9_.-]{0,63}$');
  }
  if (typeof occurredAt !== 'string' || !OCCURRED_AT.test(occurredAt)) {
    throw new InvalidEventError('occurredAt must be an RFC 3339 date-time with an offset');
  }
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw new InvalidEventError('metadata must be a JSON object');
  }
  const bytes = encoder.encode(body).length;
  if (bytes > EVENT_BODY_BYTES_MAX) {
    throw new InvalidEventError(`the event's body is ${bytes} bytes, over ${EVENT_BODY_BYTES_MAX}`);
  }
  return { eventId, body, bytes };
}

/** The batch endpoint's body around events' texts: `{"events":[` + bodies joined by commas + `]}`. */
export function batchBody(events: readonly SerializedEvent[]): string {
  return `{"events":[${events.map((event) => event.body).join(',')}]}`;
}

/** The UTF-8 length of batchBody(events) given the events' lengths. */
export function batchBodyBytes(eventBytes: number, count: number): number {
  return BATCH_OVERHEAD_BYTES + eventBytes + Math.max(0, count - 1);
}

const BATCH_OVERHEAD_BYTES = '{"events":[]}'.length;
