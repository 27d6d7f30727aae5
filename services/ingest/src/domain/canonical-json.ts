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
 * change stored payload hashes.
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
