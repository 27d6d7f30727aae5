// I-JSON (RFC 7493) on top of the platform's JSON.parse (CONTRACT section 10): every request body must be I-JSON,
// which the RFC 8785 payload hash assumes. JSON.parse accepts three things I-JSON does not:
//   - a duplicated member name in an object (the last one silently wins);
//   - a lone surrogate in a string or a member name (`"\ud800"`), which later turns into U+FFFD in UTF-8;
//   - a number outside the range of an IEEE 754 double (`1e309` parses to Infinity).
// Numbers that merely lose precision or underflow to 0 (`1e-400`) are inside the range and accepted, rounded as
// JSON.parse rounds them: that rounded value is what the payload hash covers.
//
// Decision (docs/decisions.md, "I-JSON bodies"): the value stays JSON.parse's own (iterative, any depth, exact
// numbers; a valid body hashes exactly as before) and two cheap passes check it:
//   1. the text: the number of member separators (a `:` outside strings: the grammar has exactly one per member
//      and none elsewhere outside strings), i.e. the members as written;
//   2. the value: the members JSON.parse kept (one per distinct name), every string and name well-formed UTF-16,
//      every number finite.
// An object has a duplicated member name exactly when (1) exceeds (2).
//
// Escaped member names take a slower path. V8's JSON.parse (Node 24 and 26; https://github.com/nodejs/node/issues/
// 63785, open) can decode an escaped member name wrongly: after any earlier parse, even another request's, saw a
// name that equals the escaped name's raw text prefix (e.g. `{"\\":0}`), `{"\u00e9":1}` comes back as `{"\\":1}`.
// That would change the payload hash of a client that escapes non-ASCII names (Python's json.dumps does) and let
// one request poison another's. So when a member name holds a backslash, every name in the text is replaced by a
// placeholder without escapes (its index: integer keys bypass V8's name cache), the name itself is decoded as a
// string value (not affected), and the placeholders are renamed in the parsed value.

export type IJsonResult =
  | { ok: true; value: unknown }
  /** Not I-JSON. */
  | { ok: false; reason: string; member?: undefined }
  /**
   * Only with `deferMember`: I-JSON but for a lone surrogate or an out-of-range number inside the root object's member
   * of that name (in a value or a member name, at any depth); `reason` is the first such fault. The value is JSON.parse's
   * (an out-of-range number is ±Infinity), for the caller to check in its own order (CONTRACT section 10: an event's
   * `metadata`). A duplicated member name is never deferred, wherever it is.
   */
  | { ok: false; reason: string; member: string; value: unknown };

const NOT_JSON = 'The body is not valid JSON.';
const DUPLICATE = 'The body is not I-JSON: an object has a duplicated member name.';
const LONE_SURROGATE = 'The body is not I-JSON: a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape).';
const OUT_OF_RANGE = 'The body is not I-JSON: a number is outside the range of an IEEE 754 double.';

/**
 * Parses `text` as I-JSON; `reason` says why it is not (for the 400's message). With `deferMember`, a lone surrogate
 * or an out-of-range number found only inside that member of the root object is reported with `member` and the value
 * instead (see IJsonResult); faults elsewhere and duplicates anywhere are reported as usual.
 */
export function parseIJson(text: string, deferMember?: string): IJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: NOT_JSON };
  }
  const written = scanMembers(text);
  if (written.escapedNames === 0) {
    const checked = checkValue(value, undefined, deferMember);
    if (checked.reason !== undefined) return { ok: false, reason: checked.reason };
    if (checked.members !== written.members) return { ok: false, reason: DUPLICATE };
    return verdict(value, checked, deferMember);
  }
  const nameSpans: Array<[number, number]> = [];
  scanMembers(text, nameSpans);
  return parseWithPlaceholders(text, nameSpans, deferMember);
}

function verdict(value: unknown, checked: Checked, deferMember: string | undefined): IJsonResult {
  if (checked.deferred === undefined || deferMember === undefined) return { ok: true, value };
  return { ok: false, reason: checked.deferred, member: deferMember, value };
}

export interface WrittenMembers {
  /** Members as written: the `:` outside strings. */
  members: number;
  /** Member names that hold a backslash (an escape). */
  escapedNames: number;
}

/**
 * One pass over a text that JSON.parse accepted: its members as written; with `nameSpans`, also where each member
 * name is ([opening quote, closing quote], in text order).
 */
export function scanMembers(text: string, nameSpans?: Array<[number, number]>): WrittenMembers {
  const result: WrittenMembers = { members: 0, escapedNames: 0 };
  const end = text.length;
  // The last string token: in valid JSON the token before a `:` is always the member's name.
  let stringStart = -1;
  let stringEnd = -1;
  let stringEscaped = false;
  let i = 0;
  while (i < end) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      stringStart = i;
      stringEscaped = false;
      i++;
      // Skip to the closing quote; a backslash escapes the next code unit (`\"`, `\\`, `\u....`). `i < end` only
      // guards against a text JSON.parse did not accept: every string it accepted is closed.
      while (i < end) {
        const inner = text.charCodeAt(i);
        if (inner === 0x22) break;
        if (inner === 0x5c) {
          stringEscaped = true;
          i += 2;
        } else {
          i++;
        }
      }
      stringEnd = i;
    } else if (code === 0x3a) {
      result.members++;
      if (stringEscaped) result.escapedNames++;
      nameSpans?.push([stringStart, stringEnd]);
    }
    i++;
  }
  return result;
}

interface Checked {
  /** Members kept (counted up to the first violation that is not deferred). */
  members: number;
  /** The first violation outside the deferred member: the text is not I-JSON. */
  reason?: string;
  /** The first lone surrogate or out-of-range number inside the deferred member. */
  deferred?: string;
}

/**
 * The members kept in a JSON.parse value and its first I-JSON violation. With `names`, the value's member names are
 * placeholders (indexes into `names`): each object is renamed in place, in the written order, and a name written
 * twice in one object is a violation. Iterative: nesting depth is bounded only by the body size.
 *
 * With `deferMember`, the value of the root object's member of that name is checked last, on a stack of its own:
 * there a lone surrogate or an out-of-range number is recorded (`deferred`) and the walk goes on, so that every
 * member is still counted (and renamed) and a duplicate is still found.
 */
function checkValue(root: unknown, names: string[] | undefined, deferMember: string | undefined): Checked {
  const result: Checked = { members: 0 };
  const outside: unknown[] = [root];
  const inside: unknown[] = [];
  let pending = outside;
  for (;;) {
    if (pending.length === 0) {
      if (pending === inside || inside.length === 0) return result;
      pending = inside;
    }
    const value = pending.pop();
    let fault: string | undefined;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) fault = LONE_SURROGATE;
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) fault = OUT_OF_RANGE;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      // Only the root's own members can be the deferred one.
      const split = value === root && deferMember !== undefined;
      if (names === undefined) {
        for (const name of Object.keys(record)) {
          if (!name.isWellFormed()) {
            if (pending === outside) {
              result.reason = LONE_SURROGATE;
              return result;
            }
            result.deferred ??= LONE_SURROGATE;
          }
          result.members++;
          (split && name === deferMember ? inside : pending).push(record[name]);
        }
        continue;
      }
      // Placeholders are integer keys: own-key order lists them ascending, which is the written order.
      const placeholders = Object.keys(record);
      const seen = new Set<string>();
      const renamed: Array<[string, unknown]> = [];
      for (const placeholder of placeholders) {
        const name = names[Number(placeholder)];
        if (name === undefined) throw new Error(`i-json: no member name for placeholder ${placeholder}`);
        if (!name.isWellFormed()) {
          if (pending === outside) {
            result.reason = LONE_SURROGATE;
            return result;
          }
          result.deferred ??= LONE_SURROGATE;
        }
        if (seen.has(name)) {
          result.reason = DUPLICATE;
          return result;
        }
        seen.add(name);
        result.members++;
        renamed.push([name, record[placeholder]]);
        delete record[placeholder];
      }
      for (const [name, member] of renamed) {
        // defineProperty, not assignment: a `__proto__` member is an own data property, as JSON.parse makes it.
        Object.defineProperty(record, name, { value: member, writable: true, enumerable: true, configurable: true });
        (split && name === deferMember ? inside : pending).push(member);
      }
    }
    if (fault !== undefined) {
      if (pending === outside) {
        result.reason = fault;
        return result;
      }
      result.deferred ??= fault;
    }
  }
}

function parseWithPlaceholders(
  text: string,
  nameSpans: Array<[number, number]>,
  deferMember: string | undefined,
): IJsonResult {
  const names: string[] = [];
  const pieces: string[] = [];
  let copied = 0;
  for (const [index, [open, close]] of nameSpans.entries()) {
    // A string value is decoded correctly; only member names go through the faulty cache.
    names.push(JSON.parse(text.slice(open, close + 1)) as string);
    pieces.push(text.slice(copied, open), `"${index}"`);
    copied = close + 1;
  }
  pieces.push(text.slice(copied));
  const value: unknown = JSON.parse(pieces.join(''));
  const checked = checkValue(value, names, deferMember);
  return checked.reason === undefined ? verdict(value, checked, deferMember) : { ok: false, reason: checked.reason };
}
