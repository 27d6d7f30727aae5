/**
 * RFC 8785 (JSON Canonicalization Scheme) and the event payload hash (CONTRACT §7: SHA-256 of the
 * JCS form of the parsed body).
 *
 * Decision: we delegate to `canonicalize` 5.1.0 after checking it against RFC 8785: numbers use
 * ECMAScript Number#toString (what JCS §3.2.2.3 mandates; -0 -> "0", 1e21 -> "1e+21"), strings use
 * JSON.stringify escaping (only `"`, `\`, and U+0000-U+001F, with \b \t \n \f \r short forms and
 * lower-case \u00xx, everything else raw), keys are sorted by UTF-16 code units (Array#sort default),
 * lone surrogates are rejected, and the walk is iterative (no stack overflow on deep input). The
 * RFC vectors in canonical-json.test.ts pin this behaviour, so a library change cannot silently
 * change stored payload hashes. On the event path the metadata's text comes from the metadata check
 * instead (metadata.ts writes it in its limits walk, held to canonicalJson by a property test).
 */
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * Canonical JSON text of a JSON value (meant for JSON.parse output). Throws on NaN, Infinity,
 * bigint, lone surrogates, cycles and a top-level value without JSON form (undefined, function);
 * nested non-JSON members follow JSON.stringify (dropped in objects, null in arrays).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (typeof text !== 'string') throw new TypeError('canonicalJson: value has no JSON representation');
  return text;
}

/** SHA-256 of the UTF-8 bytes of the canonical form (32 bytes). */
export function payloadHash(value: unknown): Buffer {
  return hash('sha256', canonicalJson(value), 'buffer');
}

/**
 * SHA-256 of a text's UTF-8 bytes (32 bytes). The digest travels as a 'binary' (latin1) string (one character per
 * byte, exact) into a pooled Buffer: less than half the time of crypto.hash's 'buffer' output for an event's body.
 */
function sha256Fast(text: string): Buffer {
  return Buffer.from(hash('sha256', text, 'binary'), 'latin1');
}

/** A valid GameEventInput's fields that make up its canonical body (event-input.ts's schema allows no others). */
export interface EventBodyFields {
  eventId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  metadata?: Record<string, unknown> | undefined;
  /** The metadata's canonical text when it is known already (the metadata check writes it); else it is made here. */
  metadataJson?: string | undefined;
}

/**
 * The canonical forms of a schema-valid event body: the metadata's canonical text (stored with the decision; absent
 * without metadata) and the payload hash, SHA-256 of the whole body's canonical text, which is assembled around the
 * metadata's instead of canonicalizing the body a second time. The members' order is RFC 8785's (UTF-16 code units:
 * eventId, eventType, metadata, occurredAt, playerId); the other members are strings that the schema's patterns keep
 * to ASCII letters, digits and `-_.:+` (no quote, backslash or control character), which RFC 8785 writes as they are
 * between quotes. A metadata text the metadata check wrote (`metadataJson`) is taken as it is. canonical-json.test.ts
 * checks it against canonicalJson(body).
 */
export function eventCanonicalForms(body: EventBodyFields): { metadataJson: string | undefined; payloadHash: Buffer } {
  const metadataJson = body.metadata === undefined ? undefined : (body.metadataJson ?? canonicalJson(body.metadata));
  const text =
    `{"eventId":"${body.eventId}","eventType":"${body.eventType}"` +
    (metadataJson === undefined ? '' : `,"metadata":${metadataJson}`) +
    `,"occurredAt":"${body.occurredAt}","playerId":"${body.playerId}"}`;
  return { metadataJson, payloadHash: sha256Fast(text) };
}
