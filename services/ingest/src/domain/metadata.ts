/**
 * Event metadata limits (spec "Limits", CONTRACT §7): a JSON object whose canonical (RFC 8785) UTF-8
 * form is at most 4,096 bytes, nesting depth at most 6 (the metadata object is level 1, every
 * nested array or object adds one), at most 100 items per array and 100 entries per object, no NUL
 * in strings or keys, no unpaired surrogate in strings or keys, finite numbers only. The last two do reach this
 * check from a request: the body reader leaves a lone surrogate or an out-of-range number (`1e400`, ±Infinity once
 * parsed) inside `metadata` to it (CONTRACT section 10: a metadata fault, `invalid_metadata`, not a not-JSON one).
 *
 * One recursive walk (depth is capped at 6, so recursion is bounded) that also adds up the exact
 * canonical byte size, so the canonical text is never built and the walk stops at the first
 * violation. Size rule: bytes of canonicalJson(metadata) itself, not of the whole body nor of the
 * `"metadata":` member. Strings and keys are measured with JSON.stringify, which escapes exactly like
 * RFC 8785 once lone surrogates are excluded; numbers with String(n), which is the JCS number form.
 */
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';

export const METADATA_CANONICAL_BYTES_MAX: number = EVENT_LIMITS.metadataBytesMax;
export const METADATA_DEPTH_MAX = 6;
export const METADATA_ARRAY_ITEMS_MAX = 100;
export const METADATA_OBJECT_ENTRIES_MAX = 100;

export type MetadataCheck = { ok: true } | { ok: false; reason: string };

/** Thrown internally to unwind the walk at the first violation. */
class Violation {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Canonical UTF-8 size of a string literal (with quotes), after the NUL and surrogate checks. */
function stringSize(s: string, what: string): number {
  if (s.includes('\u0000')) throw new Violation(`${what} contains NUL (U+0000)`);
  if (!s.isWellFormed()) throw new Violation(`${what} contains an unpaired surrogate`);
  return Buffer.byteLength(JSON.stringify(s), 'utf8');
}

/** Mutable running total shared by the walk; checked after every addition. */
interface Budget {
  size: number;
}

function add(budget: Budget, n: number): void {
  budget.size += n;
  if (budget.size > METADATA_CANONICAL_BYTES_MAX) {
    throw new Violation(`metadata exceeds ${METADATA_CANONICAL_BYTES_MAX} canonical UTF-8 bytes`);
  }
}

function walk(value: unknown, depth: number, budget: Budget): void {
  switch (typeof value) {
    case 'string':
      add(budget, stringSize(value, 'a metadata string'));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new Violation('metadata numbers must be finite');
      add(budget, String(value).length); // ASCII; String(-0) is "0" like JCS
      return;
    case 'boolean':
      add(budget, value ? 4 : 5);
      return;
    case 'object':
      break;
    default:
      throw new Violation(`metadata cannot contain a value of type ${typeof value}`);
  }
  if (value === null) {
    add(budget, 4);
    return;
  }
  if (depth > METADATA_DEPTH_MAX) throw new Violation(`metadata nesting exceeds depth ${METADATA_DEPTH_MAX}`);
  if (Array.isArray(value)) {
    const n = value.length;
    if (n > METADATA_ARRAY_ITEMS_MAX) throw new Violation(`a metadata array exceeds ${METADATA_ARRAY_ITEMS_MAX} items`);
    add(budget, n === 0 ? 2 : n + 1); // brackets + commas
    for (let i = 0; i < n; i++) walk(value[i], depth + 1, budget);
    return;
  }
  if (!isPlainObject(value)) throw new Violation('metadata cannot contain non-JSON objects');
  const keys = Object.keys(value);
  const n = keys.length;
  if (n > METADATA_OBJECT_ENTRIES_MAX) {
    throw new Violation(`a metadata object exceeds ${METADATA_OBJECT_ENTRIES_MAX} entries`);
  }
  add(budget, n === 0 ? 2 : 2 * n + 1); // braces + colons + commas
  for (const key of keys) {
    add(budget, stringSize(key, 'a metadata key'));
    walk(value[key], depth + 1, budget);
  }
}

export function checkMetadata(value: unknown): MetadataCheck {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !isPlainObject(value)) {
    return { ok: false, reason: 'metadata must be a JSON object' };
  }
  try {
    walk(value, 1, { size: 0 });
    return { ok: true };
  } catch (e) {
    if (e instanceof Violation) return { ok: false, reason: e.reason };
    throw e;
  }
}
