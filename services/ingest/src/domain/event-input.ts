/**
 * GameEventInput (spec "Event input"): schema and the ingest validation order of CONTRACT §7:
 * schema violation or unknown field -> `invalid_event`, then metadata limits -> `invalid_metadata`.
 * The schema is compiled once at module load.
 */
import { eventTypeSchema, uuidSchema } from '#runtime/contracts/json-schema.ts';
import { createAjv, describeAjvError } from '#runtime/validation/ajv.ts';
import { checkMetadata } from './metadata.ts';
import { OCCURRED_AT_PATTERN, parseOccurredAt } from './occurred-at.ts';

/**
 * JSON Schema 2020-12 of the request body, reusable as-is in the OpenAPI 3.1 document. UUIDs carry
 * both `format: uuid` and the spec's exact `pattern`, so external validators see the same rule.
 * `occurredAt` carries the whole grammar as a `pattern` (standard `date-time` requires seconds, the
 * spec does not), calendar validity and range included: exactly what parseOccurredAt accepts.
 */
export { OCCURRED_AT_PATTERN };

const OCCURRED_AT_INVALID = 'body.occurredAt must be a valid date-time';

export const gameEventInputSchema = {
  title: 'GameEventInput',
  type: 'object',
  additionalProperties: false,
  required: ['eventId', 'playerId', 'eventType', 'occurredAt'],
  properties: {
    eventId: { ...uuidSchema, description: 'Idempotency id.' },
    playerId: uuidSchema,
    eventType: eventTypeSchema,
    occurredAt: {
      type: 'string',
      pattern: OCCURRED_AT_PATTERN,
      description:
        'YYYY-MM-DDTHH:MM[:SS[.fraction]] followed by Z, +hh:mm or -hh:mm; calendar-valid; within 5 minutes of receipt.',
    },
    metadata: {
      type: 'object',
      // An open object: its keys are the caller's data. Limits are checked after the schema (metadata.ts).
      additionalProperties: true,
      description:
        'Canonical (RFC 8785) UTF-8 size at most 4096 bytes, depth at most 6, at most 100 items per array and ' +
        '100 entries per object, no NUL, no unpaired surrogate, finite numbers. Part of the replay identity.',
    },
  },
} as const;

export interface GameEventInput {
  eventId: string;
  playerId: string;
  eventType: string;
  /** The caller's exact text (part of the payload identity). */
  occurredAt: string;
  /** Parsed instant, fraction truncated to milliseconds. */
  occurredAtMs: number;
}

export type EventInputResult =
  | { ok: true; input: GameEventInput }
  | { ok: false; code: 'invalid_event' | 'invalid_metadata'; message: string };

const ajv = createAjv();
const validateSchema = ajv.compile(gameEventInputSchema);

interface SchemaValidBody {
  eventId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  metadata?: Record<string, unknown>;
}

export function validateEventInput(body: unknown): EventInputResult {
  // A non-object body (array, string, number, null) fails `type: object` -> invalid_event.
  if (!validateSchema(body)) {
    const first = validateSchema.errors?.[0];
    const message =
      first?.instancePath === '/occurredAt' && first.keyword === 'pattern'
        ? OCCURRED_AT_INVALID
        : describeAjvError(validateSchema.errors);
    return { ok: false, code: 'invalid_event', message };
  }
  const b = body as SchemaValidBody;
  const at = parseOccurredAt(b.occurredAt);
  if (at === null) return { ok: false, code: 'invalid_event', message: OCCURRED_AT_INVALID };
  const input: GameEventInput = {
    eventId: b.eventId,
    playerId: b.playerId,
    eventType: b.eventType,
    occurredAt: b.occurredAt,
    occurredAtMs: at.epochMs,
  };
  // Metadata is only checked: it counts through the payload hash (the whole body), not as a field of its own.
  if (b.metadata !== undefined) {
    const check = checkMetadata(b.metadata);
    if (!check.ok) return { ok: false, code: 'invalid_metadata', message: check.reason };
  }
  return { ok: true, input };
}
