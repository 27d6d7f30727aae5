/**
 * Event metadata limits (spec "Limits", CONTRACT §7): a JSON object whose canonical (RFC 8785) UTF-8
 * form is at most 4,096 bytes, nesting depth at most 6 (the metadata object is level 1, every
 * nested array or object adds one), at most 100 items per array and 100 entries per object, no NUL
 * in strings or keys, no unpaired surrogate in strings or keys, finite numbers only. The last two do reach this
 * check from a request: the body reader leaves a lone surrogate or an out-of-range number (`1e400`, ±Infinity once
 * parsed) inside `metadata` to it (CONTRACT section 10: a metadata fault, `invalid_metadata`, not a not-JSON one).
 *
 * One recursive walk (depth is capped at 6, so recursion is bounded) that adds up the exact canonical byte size and
 * stops at the first violation, in the value's own member order, and builds the canonical text on the way (an
 * accepted metadata's `canonical`: what canonicalJson(metadata) answers, without a second walk). Size rule: bytes of
 * canonicalJson(metadata) itself, not of the whole body nor of the `"metadata":` member. Strings and keys are written
 * with JSON.stringify, which escapes exactly like RFC 8785 once lone surrogates are excluded; numbers with String(n),
 * which is the JCS number form; an object's members in the order of their names' UTF-16 code units (RFC 8785 section
 * 3.2.3), sorted once its members are written.
 */
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';

export const METADATA_CANONICAL_BYTES_MAX: number = EVENT_LIMITS.metadataBytesMax;
export const METADATA_DEPTH_MAX = 6;
export const METADATA_ARRAY_ITEMS_MAX = 100;
export const METADATA_OBJECT_ENTRIES_MAX = 100;

/** `canonical`: the accepted metadata's RFC 8785 text (canonicalJson's). */
export type MetadataCheck = { ok: true; canonical: string } | { ok: false; reason: string };

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

/** A string literal's canonical text (with quotes), after the NUL and surrogate checks; its UTF-8 size added. */
function stringText(s: string, what: string, budget: Budget): string {
  if (s.includes('\u0000')) throw new Violation(`${what} contains NUL (U+0000)`);
  if (!s.isWellFormed()) throw new Violation(`${what} contains an unpaired surrogate`);
  const text = JSON.stringify(s);
  add(budget, Buffer.byteLength(text, 'utf8'));
  return text;
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

/** A value's canonical text; its size added to the budget, its limits checked, in the value's own order. */
function walk(value: unknown, depth: number, budget: Budget): string {
  switch (typeof value) {
    case 'string':
      return stringText(value, 'a metadata string', budget);
    case 'number': {
      if (!Number.isFinite(value)) throw new Violation('metadata numbers must be finite');
      const text = String(value); // ASCII; String(-0) is "0" like JCS
      add(budget, text.length);
      return text;
    }
    case 'boolean':
      add(budget, value ? 4 : 5);
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new Violation(`metadata cannot contain a value of type ${typeof value}`);
  }
  if (value === null) {
    add(budget, 4);
    return 'null';
  }
  if (depth > METADATA_DEPTH_MAX) throw new Violation(`metadata nesting exceeds depth ${METADATA_DEPTH_MAX}`);
  if (Array.isArray(value)) {
    const n = value.length;
    if (n > METADATA_ARRAY_ITEMS_MAX) throw new Violation(`a metadata array exceeds ${METADATA_ARRAY_ITEMS_MAX} items`);
    add(budget, n === 0 ? 2 : n + 1); // brackets + commas
    let text = '[';
    for (let i = 0; i < n; i++) text += (i === 0 ? '' : ',') + walk(value[i], depth + 1, budget);
    return `${text}]`;
  }
  if (!isPlainObject(value)) throw new Violation('metadata cannot contain non-JSON objects');
  const keys = Object.keys(value);
  const n = keys.length;
  if (n > METADATA_OBJECT_ENTRIES_MAX) {
    throw new Violation(`a metadata object exceeds ${METADATA_OBJECT_ENTRIES_MAX} entries`);
  }
  add(budget, n === 0 ? 2 : 2 * n + 1); // braces + colons + commas
  const members: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const key = keys[i] as string;
    members[i] = `${stringText(key, 'a metadata key', budget)}:${walk(value[key], depth + 1, budget)}`;
  }
  // RFC 8785's member order: the names' UTF-16 code units (`<` on strings), an insertion sort of the names and their
  // members together (at most 100, distinct).
  for (let i = 1; i < n; i++) {
    const key = keys[i] as string;
    const member = members[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      members[j + 1] = members[j] as string;
      j--;
    }
    keys[j + 1] = key;
    members[j + 1] = member;
  }
  let text = '{';
  for (let i = 0; i < n; i++) text += (i === 0 ? '' : ',') + members[i];
  return `${text}}`;
}

export function checkMetadata(value: unknown): MetadataCheck {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !isPlainObject(value)) {
    return { ok: false, reason: 'metadata must be a JSON object' };
  }
  try {
    return { ok: true, canonical: walk(value, 1, { size: 0 }) };
  } catch (e) {
    if (e instanceof Violation) return { ok: false, reason: e.reason };
    throw e;
  }
}
