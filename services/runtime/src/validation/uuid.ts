/**
 * The spec's UUID rule (General rules): versions 1 to 8 with variant nibble 8, 9, a or b, plus the
 * all-zero (nil) and the all-f (max) UUID. Hex digits are case-insensitive.
 *
 * The pattern is spelled without the `i` flag so that the same string works as a JSON Schema
 * `pattern` (ECMA-262 syntax, no flags) in Ajv and in the published OpenAPI document.
 */
export const UUID_PATTERN =
  '^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}' +
  '|00000000-0000-0000-0000-000000000000' +
  '|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-[fF]{12})$';

/** Compiled once; JS `$` without the `m` flag only matches at the very end (no trailing newline). */
export const UUID_REGEX: RegExp = new RegExp(UUID_PATTERN);

export function isUuid(s: unknown): s is string {
  // Length check first: cheap rejection of long inputs before the regex runs.
  return typeof s === 'string' && s.length === 36 && UUID_REGEX.test(s);
}

const HEX_DIGITS = '0123456789abcdef';

/** A UUID's 16 bytes as its text (lower case, as PostgreSQL spells it). */
export function uuidText(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new Error(`a UUID has 16 bytes, not ${bytes.length}`);
  let hex = '';
  for (const byte of bytes) hex += HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 15]!;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
