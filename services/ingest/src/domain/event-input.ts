/**
 * GameEventInput (spec "Event input"): schema and the ingest validation order of CONTRACT §7:
 * schema violation or unknown field -> `invalid_event`, then metadata limits -> `invalid_metadata`.
 * The schema is compiled once at module load.
 *
 * A lone surrogate or a number outside a double's range inside `metadata` is a metadata fault (CONTRACT section 10),
 * not a not-JSON one: the body reader lets it through (readJsonBodyDeferring) and it is refused here, after the
 * schema, by the metadata check (which refuses both: metadata.ts) or, as a second line, by the reader's report.
 */
import { gameEventInputSchema } from '#runtime/contracts/ingest-shapes.ts';
import { patternCheckedEpochMs } from '#runtime/contracts/occurred-at.ts';
import { compiledOnFirstUse, createAjv, describeAjvError } from '#runtime/validation/ajv.ts';
import { checkMetadata } from './metadata.ts';

const OCCURRED_AT_INVALID = 'body.occurredAt must be a valid date-time';

export interface GameEventInput {
  eventId: string;
  playerId: string;
  eventType: string;
  /** The caller's exact text (part of the payload identity). */
  occurredAt: string;
  /** Parsed instant, fraction truncated to milliseconds. */
  occurredAtMs: number;
  /** Checked against the metadata limits; part of the payload identity and stored with the decision. */
  metadata?: Record<string, unknown> | undefined;
  /** The metadata's canonical (RFC 8785) text, which the metadata check wrote; absent without metadata. */
  metadataJson?: string | undefined;
}

export type EventInputResult =
  | { ok: true; input: GameEventInput }
  | { ok: false; code: 'invalid_event' | 'invalid_metadata'; message: string };

const validateSchema = compiledOnFirstUse(() => createAjv().compile(gameEventInputSchema));

interface SchemaValidBody {
  eventId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  metadata?: Record<string, unknown>;
}

/**
 * `metadataFault`: the body reader's report of a lone surrogate or an out-of-range number inside `metadata`
 * (readJsonBodyDeferring's `memberFault`); such a body is never valid.
 */
export function validateEventInput(body: unknown, metadataFault?: string): EventInputResult {
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
  // The schema's pattern is OCCURRED_AT_PATTERN, the whole grammar: parsed here without testing it again.
  const occurredAtMs = patternCheckedEpochMs(b.occurredAt);
  if (occurredAtMs === null) return { ok: false, code: 'invalid_event', message: OCCURRED_AT_INVALID };
  let metadataJson: string | undefined;
  if (b.metadata !== undefined) {
    const check = checkMetadata(b.metadata);
    if (!check.ok) return { ok: false, code: 'invalid_metadata', message: check.reason };
    metadataJson = check.canonical;
  }
  if (metadataFault !== undefined) return { ok: false, code: 'invalid_metadata', message: metadataFault };
  const input: GameEventInput = {
    eventId: b.eventId,
    playerId: b.playerId,
    eventType: b.eventType,
    occurredAt: b.occurredAt,
    occurredAtMs,
    metadata: b.metadata,
    metadataJson,
  };
  return { ok: true, input };
}
