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
