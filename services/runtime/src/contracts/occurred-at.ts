/**
 * `occurredAt` input grammar (spec, General rules):
 *
 *   YYYY-MM-DD "T" HH:MM [":" SS ["." 1*DIGIT]] ("Z" | ("+" / "-") hh:mm)
 *
 * Decisions where the spec is silent:
 * - Separators: only upper-case `T` and `Z`. RFC 3339 allows lower case (and notes a space), but the
 *   spec's grammar names `T`/`Z`; being strict keeps one spelling per instant family.
 * - Seconds: 00-59. A leap second (`:60`) is rejected: JavaScript Date and the 5-minute window
 *   cannot represent it faithfully, and PostgreSQL would silently roll it over.
 * - Fraction: only after seconds; 1 or more digits, no upper bound (the 16 KiB body limit bounds
 *   it); digits beyond milliseconds are truncated (floored), never rounded, so an instant never
 *   moves to the next millisecond/second.
 * - Offsets: hours 00-23, minutes 00-59; `-00:00` is accepted and means UTC, like `Z`.
 * - Range: years 0000-9999, and the instant in UTC within them too, so that `normalized` is a valid
 *   4-digit RFC 3339 text: on the first day, 0000-01-01, the offset may not be positive (`Z`,
 *   `+00:00` or negative), on the last, 9999-12-31, not negative. (A rule on the written date and
 *   offset alone, rather than "the UTC instant must fall in 0000-9999", so that a regular expression
 *   can state it exactly: OCCURRED_AT_PATTERN below is the whole grammar, calendar included.)
 * The exact input text is what the payload hash covers; `normalized` is for storage/responses.
 */

import { EVENT_LIMITS } from './event-limits.ts';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// ---- OCCURRED_AT_PATTERN: the grammar above as one regular expression (CONTRACT section 10: the
// document must describe exactly what the server accepts). Plain syntax that ECMA-262 (JSON Schema, Ajv) and
// Python's `re` (schemathesis) read alike: `[0-9]`, never `\d` (Unicode digits in Python), no lookaround.

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Two-digit numbers lo..hi (lo <= hi, both 0..99) as an alternation. */
function twoDigits(lo: number, hi: number): string {
  const parts: string[] = [];
  for (let tens = Math.floor(lo / 10); tens <= Math.floor(hi / 10); tens++) {
    const from = tens === Math.floor(lo / 10) ? lo % 10 : 0;
    const to = tens === Math.floor(hi / 10) ? hi % 10 : 9;
    parts.push(`${tens}${from === to ? from : from === 0 && to === 9 ? '[0-9]' : `[${from}-${to}]`}`);
  }
  return parts.join('|');
}

/** MM-DD of a common year; without 01-01 and/or 12-31 when asked. */
function monthDays(options: { withoutFirst?: boolean; withoutLast?: boolean } = {}): string {
  const months = DAYS_IN_MONTH.map((days, index) => {
    const first = options.withoutFirst && index === 0 ? 2 : 1;
    const last = options.withoutLast && index === 11 ? days - 1 : days;
    return `${pad2(index + 1)}-(?:${twoDigits(first, last)})`;
  });
  return `(?:${months.join('|')})`;
}

const YEARS_0001_9998 = '(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])';
// Divisible by 4 and not by 100, or by 400 (0000 included).
const LEAP_YEARS = '(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)';
const TIME = '(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]+)?)?';
const OFFSET_HH_MM = '(?:[01][0-9]|2[0-3]):[0-5][0-9]';
const DATES =
  `(?:${YEARS_0001_9998}-${monthDays()}|0000-${monthDays({ withoutFirst: true })}` +
  `|9999-${monthDays({ withoutLast: true })}|${LEAP_YEARS}-02-29)`;

/** The whole `occurredAt` grammar, calendar and range included, as a JSON Schema `pattern`. */
export const OCCURRED_AT_PATTERN =
  `^(?:${DATES}T${TIME}(?:Z|[+-]${OFFSET_HH_MM})` +
  `|0000-01-01T${TIME}(?:Z|\\+00:00|-${OFFSET_HH_MM})` +
  `|9999-12-31T${TIME}(?:Z|-00:00|\\+${OFFSET_HH_MM}))$`;
const OCCURRED_AT = new RegExp(OCCURRED_AT_PATTERN);
const MINUTE_MS = 60_000;
// 400 Gregorian years are exactly 146,097 days. Shifting the year by 400 before Date.UTC avoids
// its mapping of years 0-99 to 1900-1999 without changing the weekday/leap pattern.
const SHIFT_400Y_MS = 146_097 * 86_400_000;
const EARLIEST_MS = Date.UTC(2000, 0, 1) - 5 * SHIFT_400Y_MS; // 0000-01-01T00:00:00.000Z
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999); // 9999-12-31T23:59:59.999Z

/** Default window: CONTRACT §7, `occurredAt` at most 5 minutes from receipt, either way. */
export const OCCURRED_AT_WINDOW_MS: number = EVENT_LIMITS.occurredAtWindowMs;

function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

export interface ParsedOccurredAt {
  /** Milliseconds since the Unix epoch (fraction truncated to milliseconds). */
  epochMs: number;
  /** UTC RFC 3339 with milliseconds, e.g. `2026-02-03T04:05:06.000Z`. */
  normalized: string;
}

export function parseOccurredAt(text: string): ParsedOccurredAt | null {
  if (typeof text !== 'string' || !OCCURRED_AT.test(text)) return null;
  const epochMs = patternCheckedEpochMs(text);
  return epochMs === null ? null : { epochMs, normalized: new Date(epochMs).toISOString() };
}

/** The number of `count` ASCII digits at `from` of `text`, or -1 when one of them is not a digit (or is missing). */
function digitsAt(text: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48; // NaN past the end
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * The instant of a text that already matched OCCURRED_AT_PATTERN (a JSON Schema validated it: ingest's event schema),
 * as parseOccurredAt's epochMs, without testing the pattern a second time nor building `normalized`. The text is read
 * by position (the grammar's fields at their places; no match array nor substrings): null where the grammar above
 * (without its calendar) does not hold.
 */
export function patternCheckedEpochMs(text: string): number | null {
  // The text is valid: the checks below restate the pattern's rules and can only fail on a bug.
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0) return null;
  if (text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':') return null;
  let at = 16;
  let second = 0;
  let millis = 0;
  if (text[at] === ':') {
    second = digitsAt(text, at + 1, 2);
    if (second < 0) return null;
    at += 3;
    if (text[at] === '.') {
      // 1 or more digits, truncated to milliseconds (the first three, padded with zeros).
      let end = at + 1;
      while (digitsAt(text, end, 1) >= 0) end++;
      if (end === at + 1) return null;
      for (let i = at + 1; i < at + 4; i++) millis = millis * 10 + (i < end ? text.charCodeAt(i) - 48 : 0);
      at = end;
    }
  }
  let offsetMinutes = 0;
  const zone = text[at];
  if (zone === 'Z') {
    if (text.length !== at + 1) return null;
  } else if (zone === '+' || zone === '-') {
    const oh = digitsAt(text, at + 1, 2);
    const om = digitsAt(text, at + 4, 2);
    if (oh < 0 || om < 0 || text[at + 3] !== ':' || text.length !== at + 6) return null;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone === '-' ? -1 : 1) * (oh * 60 + om);
  } else return null;
  if (month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const local = Date.UTC(year + 400, month - 1, day, hour, minute, second, millis) - SHIFT_400Y_MS;
  const epochMs = local - offsetMinutes * MINUTE_MS;
  if (epochMs < EARLIEST_MS || epochMs > LATEST_MS) return null;
  return epochMs;
}

/** True when `epochMs` is at most `windowMs` away from receipt, either direction (inclusive). */
export function isWithinWindow(epochMs: number, receivedAtMs: number, windowMs = OCCURRED_AT_WINDOW_MS): boolean {
  return Math.abs(epochMs - receivedAtMs) <= windowMs;
}
