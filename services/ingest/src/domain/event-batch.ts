/**
 * The batch of events (CONTRACT section 11.1, "Batch events"): `{"events": [GameEventInput, ...]}`, 1 to 100 events,
 * each checked as the single endpoint checks its body (section 7): its size as a body of its own (413), then the
 * schema (invalid_event) and the metadata (invalid_metadata), by the single endpoint's own validateEventInput.
 *
 * Not JSON is a fault of the whole request, as for the single endpoint: a duplicated member name anywhere, and a lone
 * surrogate or an out-of-range number anywhere but inside an event's `metadata` (section 10). Inside an event's
 * `metadata` they are that event's metadata fault, which checkMetadata refuses (metadata.ts).
 */
import { JSON_BODY_LIMIT_BYTES } from '#runtime/http/body.ts';
import { type GameEventInput, validateEventInput } from './event-input.ts';
import { METADATA_CANONICAL_BYTES_MAX } from './metadata.ts';

export const BATCH_EVENTS_MAX = 100;
export const BATCH_BODY_LIMIT_BYTES = 1_048_576;

export type BatchShape = { ok: true; events: unknown[] } | { ok: false; message: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body's own shape: an object with exactly `events`, an array of 1 to 100 items (else invalid_event). */
export function checkBatchShape(body: unknown): BatchShape {
  if (!isObject(body)) return { ok: false, message: 'body must be an object with an events array' };
  const unknown = Object.keys(body).find((name) => name !== 'events');
  if (unknown !== undefined) return { ok: false, message: `body has an unknown field: ${unknown}` };
  const events = body.events;
  if (events === undefined) return { ok: false, message: 'body.events is required' };
  if (!Array.isArray(events)) return { ok: false, message: 'body.events must be an array' };
  if (events.length === 0) return { ok: false, message: 'body.events must hold at least 1 event' };
  if (events.length > BATCH_EVENTS_MAX) {
    return { ok: false, message: `body.events must hold at most ${BATCH_EVENTS_MAX} events` };
  }
  return { ok: true, events };
}

const LONE_SURROGATE = 'The body is not I-JSON: a string holds a lone surrogate.';
const OUT_OF_RANGE = 'The body is not I-JSON: a number is outside the range of a double.';

/** The first lone surrogate (in a value or a member name) or out-of-range number in a parsed value. */
function faultIn(value: unknown): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : LONE_SURROGATE;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : OUT_OF_RANGE;
  if (Array.isArray(value)) {
    for (const item of value) {
      const fault = faultIn(item);
      if (fault) return fault;
    }
    return undefined;
  }
  if (isObject(value)) {
    for (const [name, item] of Object.entries(value)) {
      const fault = name.isWellFormed() ? faultIn(item) : LONE_SURROGATE;
      if (fault) return fault;
    }
  }
  return undefined;
}

/**
 * Where the body reader deferred a lone surrogate or an out-of-range number inside `events`: the first such fault
 * outside every event's `metadata` (the whole body is then not JSON), or undefined when they are all inside one.
 */
export function faultOutsideMetadata(events: unknown): string | undefined {
  if (!Array.isArray(events)) return faultIn(events);
  for (const event of events) {
    const fault = isObject(event)
      ? faultIn(Object.fromEntries(Object.entries(event).filter(([name]) => name !== 'metadata')))
      : faultIn(event);
    if (fault) return fault;
  }
  return undefined;
}

export type BatchEventCheck =
  | { ok: true; input: GameEventInput }
  | { ok: false; code: 'PAYLOAD_TOO_LARGE' | 'invalid_event' | 'invalid_metadata'; message: string };

/**
 * Most UTF-8 bytes of a valid event's JSON text besides its metadata and its occurredAt: member names, quotes and
 * separators, two UUIDs and an event type of at most EVENT_TYPE_LENGTH_MAX (all ASCII by the schema's patterns), with
 * room to spare. The metadata's JSON text is at most METADATA_CANONICAL_BYTES_MAX bytes once checked (JSON.stringify
 * writes a checked metadata's bytes as RFC 8785 does, in another member order), occurredAt is ASCII.
 */
const VALID_EVENT_OTHER_BYTES_MAX = 512;

/**
 * One event of a batch, as the single endpoint would check it as its whole body (after JSON): the size first (413),
 * then validateEventInput. The size needs the event's JSON text only when the event is not valid or its occurredAt is
 * long: a valid event's text is bounded without it (VALID_EVENT_OTHER_BYTES_MAX), so the common event is not
 * serialized again. The result is the same as measuring first.
 */
export function checkBatchEvent(event: unknown): BatchEventCheck {
  const checked = validateEventInput(event);
  if (
    checked.ok &&
    VALID_EVENT_OTHER_BYTES_MAX + METADATA_CANONICAL_BYTES_MAX + checked.input.occurredAt.length <=
      JSON_BODY_LIMIT_BYTES
  ) {
    return checked;
  }
  const bytes = Buffer.byteLength(JSON.stringify(event) ?? '');
  if (bytes > JSON_BODY_LIMIT_BYTES) {
    return { ok: false, code: 'PAYLOAD_TOO_LARGE', message: `The event exceeds ${JSON_BODY_LIMIT_BYTES} bytes.` };
  }
  return checked;
}

/**
 * Whether a batch is answered as one 503 (CONTRACT section 11.1: only when every event met a 503 and none of them was
 * decided) and with which message: the events' own when they all met the same one, otherwise `mixed` (the unknown
 * outcome's, true of each: a message saying nothing was stored may not speak for an event whose outcome is unknown).
 * An event its own request decided but whose answer was lost (`answerLost`) counts as decided.
 */
export class BatchRetryVerdict {
  private readonly messages: { answerLost: string; mixed: string };
  private every503 = true;
  private first: string | undefined;
  private same = true;

  constructor(messages: { answerLost: string; mixed: string }) {
    this.messages = messages;
  }

  /** An event of the batch failed with this status and message. */
  failed(status: number, message: string): void {
    if (status !== 503 || message === this.messages.answerLost) this.every503 = false;
    else if (this.first === undefined) this.first = message;
    else if (message !== this.first) this.same = false;
  }

  /** An event of the batch has a decision (fresh or replayed). */
  decided(): void {
    this.every503 = false;
  }

  /** The whole request's 503 message; undefined when the request is a 200 with each event's result. */
  wholeRequestMessage(): string | undefined {
    if (!this.every503 || this.first === undefined) return undefined;
    return this.same ? this.first : this.messages.mixed;
  }
}
