import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import {
  isWithinWindow,
  OCCURRED_AT_PATTERN,
  OCCURRED_AT_WINDOW_MS,
  parseOccurredAt,
  patternCheckedEpochMs,
} from './occurred-at.ts';

function norm(text: string): string | null {
  return parseOccurredAt(text)?.normalized ?? null;
}

describe('parseOccurredAt: examples', () => {
  test.each([
    ['2024-02-29T12:00Z', '2024-02-29T12:00:00.000Z'], // leap year
    ['2000-02-29T12:00Z', '2000-02-29T12:00:00.000Z'], // divisible by 400
    ['2026-02-03T04:05Z', '2026-02-03T04:05:00.000Z'], // seconds omitted
    ['2026-02-03T04:05:06Z', '2026-02-03T04:05:06.000Z'],
    ['2026-02-03T04:05:06.1Z', '2026-02-03T04:05:06.100Z'],
    ['2026-02-03T04:05:06.12Z', '2026-02-03T04:05:06.120Z'],
    ['2026-02-03T04:05:06.123Z', '2026-02-03T04:05:06.123Z'],
    ['2026-02-03T04:05:06.1239Z', '2026-02-03T04:05:06.123Z'], // truncated, not rounded
    ['2026-02-03T04:05:06.999999999Z', '2026-02-03T04:05:06.999Z'],
    ['2026-02-03T04:05:06.000000000000000000001Z', '2026-02-03T04:05:06.000Z'],
    ['2026-02-03T04:05:06+01:00', '2026-02-03T03:05:06.000Z'],
    ['2026-02-03T04:05:06-01:30', '2026-02-03T05:35:06.000Z'],
    ['2026-02-03T04:05:06+00:00', '2026-02-03T04:05:06.000Z'],
    ['2026-02-03T04:05:06-00:00', '2026-02-03T04:05:06.000Z'], // -00:00 accepted as UTC
    ['2026-01-01T00:30+01:00', '2025-12-31T23:30:00.000Z'], // back across a year boundary
    ['2025-12-31T23:30-01:00', '2026-01-01T00:30:00.000Z'], // forward across a year boundary
    ['2024-03-01T00:00+00:01', '2024-02-29T23:59:00.000Z'], // back onto a leap day
    ['2024-02-29T23:59-23:59', '2024-03-01T23:58:00.000Z'],
    ['2026-02-03T00:00:00+23:59', '2026-02-02T00:01:00.000Z'], // max positive offset
    ['2026-02-03T23:59:59.999-23:59', '2026-02-04T23:58:59.999Z'], // max negative offset
    ['2026-04-30T00:00Z', '2026-04-30T00:00:00.000Z'],
    ['2026-12-31T23:59:59Z', '2026-12-31T23:59:59.000Z'],
    ['0000-01-01T00:00Z', '0000-01-01T00:00:00.000Z'], // year 0 is a (proleptic) leap year
    ['0000-02-29T00:00Z', '0000-02-29T00:00:00.000Z'],
    ['0050-06-01T00:00Z', '0050-06-01T00:00:00.000Z'], // not mapped to 1950
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0000-01-01T00:00-23:59', '0000-01-01T23:59:00.000Z'], // the first day: negative offsets only
    ['0000-01-01T00:00+00:00', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59+23:59', '9999-12-31T00:00:00.000Z'], // the last day: positive offsets only
    ['9999-12-31T23:59-00:00', '9999-12-31T23:59:00.000Z'],
  ])('%s -> %s', (text, expected) => {
    expect(norm(text)).toBe(expected);
    expect(parseOccurredAt(text)!.epochMs).toBe(Date.parse(expected));
  });

  test.each([
    ['2023-02-29T12:00Z', 'not a leap year'],
    ['1900-02-29T12:00Z', 'century, not divisible by 400'],
    ['2024-02-30T12:00Z', 'February 30'],
    ['2026-04-31T00:00Z', 'April 31'],
    ['2026-06-31T00:00Z', 'June 31'],
    ['2026-13-01T00:00Z', 'month 13'],
    ['2026-00-01T00:00Z', 'month 0'],
    ['2026-01-00T00:00Z', 'day 0'],
    ['2026-01-32T00:00Z', 'day 32'],
    ['2026-01-01T24:00Z', 'hour 24'],
    ['2026-01-01T00:60Z', 'minute 60'],
    ['2026-01-01T23:59:60Z', 'leap second'],
    ['2026-02-03T04:05:06', 'missing offset'],
    ['2026-02-03T04:05', 'missing offset, no seconds'],
    ['2026-02-03', 'missing time'],
    ['2026-02-03Z', 'missing time with Z'],
    ['2026-02-03T04Z', 'hours only'],
    ['2026-02-03T04:05.123Z', 'fraction without seconds'],
    ['2026-02-03T04:05:06.Z', 'empty fraction'],
    ['2026-02-03T04:05:06,123Z', 'comma fraction'],
    ['2026-02-03T04:05:06+24:00', 'offset hour 24'],
    ['2026-02-03T04:05:06+01:60', 'offset minute 60'],
    ['2026-02-03T04:05:06+0100', 'offset without colon'],
    ['2026-02-03T04:05:06+01', 'offset hours only'],
    ['2026-02-03t04:05:06Z', 'lower-case t'],
    ['2026-02-03T04:05:06z', 'lower-case z'],
    ['2026-02-03 04:05:06Z', 'space separator'],
    ['2026-2-03T04:05:06Z', 'one-digit month'],
    ['+002026-02-03T04:05:06Z', 'expanded year'],
    ['20260203T040506Z', 'basic format'],
    [' 2026-02-03T04:05:06Z', 'leading space'],
    ['2026-02-03T04:05:06Z\n', 'trailing newline'],
    ['２０２６-02-03T04:05:06Z', 'non-ASCII digits'],
    ['0000-01-01T00:00+00:01', 'UTC instant before year 0000'],
    ['9999-12-31T23:59:59-00:01', 'UTC instant after year 9999'],
    ['0000-01-01T12:00+01:00', 'a positive offset on the first day'],
    ['9999-12-31T00:00-01:00', 'a negative offset on the last day'],
    ['0000-00-00T00:00Z', 'month and day 0'],
    ['', 'empty'],
  ])('%s rejected (%s)', (text) => {
    expect(parseOccurredAt(text)).toBeNull();
  });

  test('non-string input is rejected', () => {
    expect(parseOccurredAt(12345 as unknown as string)).toBeNull();
  });
});

describe('isWithinWindow', () => {
  const now = Date.parse('2026-02-03T04:05:06.789Z');
  test('inclusive at exactly 5 minutes, either direction', () => {
    expect(OCCURRED_AT_WINDOW_MS).toBe(300_000);
    expect(isWithinWindow(now, now)).toBe(true);
    expect(isWithinWindow(now - 300_000, now)).toBe(true);
    expect(isWithinWindow(now + 300_000, now)).toBe(true);
    expect(isWithinWindow(now - 300_001, now)).toBe(false);
    expect(isWithinWindow(now + 300_001, now)).toBe(false);
  });
  test('custom window and NaN', () => {
    expect(isWithinWindow(now + 1000, now, 1000)).toBe(true);
    expect(isWithinWindow(now + 1001, now, 1000)).toBe(false);
    expect(isWithinWindow(Number.NaN, now)).toBe(false);
  });
  test('truncated fraction decides at the boundary', () => {
    const received = Date.parse('2026-02-03T04:05:00.000Z');
    expect(isWithinWindow(parseOccurredAt('2026-02-03T04:10:00.0009Z')!.epochMs, received)).toBe(true);
    expect(isWithinWindow(parseOccurredAt('2026-02-03T04:10:00.001Z')!.epochMs, received)).toBe(false);
    expect(isWithinWindow(parseOccurredAt('2026-02-03T05:00:00+00:55')!.epochMs, received)).toBe(true);
  });
});

describe('parseOccurredAt: properties', () => {
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  const daysIn = (y: number, m: number) => new Date(Date.UTC(2000 + (y % 400), m, 0)).getUTCDate();

  const timestamp = fc
    .record({
      year: fc.integer({ min: 1, max: 9998 }),
      month: fc.integer({ min: 1, max: 12 }),
      dayPick: fc.nat(),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.option(fc.integer({ min: 0, max: 59 })),
      fraction: fc.option(fc.stringMatching(/^\d{1,9}$/)),
      offset: fc.option(
        fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })),
      ),
    })
    .map((r) => {
      const day = (r.dayPick % daysIn(r.year, r.month)) + 1;
      let text = `${pad(r.year, 4)}-${pad(r.month, 2)}-${pad(day, 2)}T${pad(r.hour, 2)}:${pad(r.minute, 2)}`;
      if (r.second !== null) {
        text += `:${pad(r.second, 2)}`;
        if (r.fraction !== null) text += `.${r.fraction}`;
      }
      text += r.offset === null ? 'Z' : `${r.offset[0]}${pad(r.offset[1], 2)}:${pad(r.offset[2], 2)}`;
      return text;
    });

  test('valid timestamps parse to the same instant as Date.parse and normalize like toISOString', () => {
    fc.assert(
      fc.property(timestamp, (text) => {
        const parsed = parseOccurredAt(text);
        expect(parsed).not.toBeNull();
        const expected = Date.parse(text);
        expect(parsed!.epochMs).toBe(expected);
        expect(parsed!.normalized).toBe(new Date(expected).toISOString());
        // The normalized form is itself valid input and denotes the same instant.
        expect(parseOccurredAt(parsed!.normalized)).toEqual(parsed);
        // Ingest's path (the schema tested the pattern): the same instant.
        expect(patternCheckedEpochMs(text)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  test('a day past the end of the month is always rejected', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), (year, month) => {
        const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(daysIn(year, month) + 1, 2)}T00:00Z`;
        expect(parseOccurredAt(text)).toBeNull();
      }),
    );
  });
});

describe('OCCURRED_AT_PATTERN: exactly the grammar the parser accepts', () => {
  // Ajv (JSON Schema, `u` flag) and a plain RegExp read the pattern alike.
  const schema = new Ajv2020({ strict: true }).compile({ type: 'string', pattern: OCCURRED_AT_PATTERN });
  const plain = new RegExp(OCCURRED_AT_PATTERN);
  const agree = (text: string) => {
    const parsed = parseOccurredAt(text) !== null;
    expect({ text, schema: schema(text), plain: plain.test(text) }).toEqual({ text, schema: parsed, plain: parsed });
  };
  const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
  // Dates and times near every boundary (month and day 0, 28 to 32, hour 23/24, leap years, the first and last
  // day), offsets of both signs, and a few characters that must not pass.
  const year = fc.oneof(
    digits(4),
    fc.constantFrom('0000', '0001', '1900', '2000', '2024', '2100', '9998', '9999', '0400', '0004'),
  );
  const two = (values: string[]) => fc.oneof(digits(2), fc.constantFrom(...values));
  const candidate = fc
    .tuple(
      year,
      two(['00', '01', '02', '04', '12', '13']),
      two(['00', '01', '28', '29', '30', '31', '32']),
      two(['00', '23', '24']),
      two(['00', '59', '60']),
      fc.option(fc.tuple(two(['00', '59', '60']), fc.option(digits(3)))),
      fc.constantFrom('Z', '+', '-', 'z', ''),
      two(['00', '01', '23', '24']),
      two(['00', '01', '59', '60']),
      fc.constantFrom('', '', '', '\n', ' ', 'T', '٠'),
    )
    .map(([y, mo, d, h, mi, sec, zone, oh, om, tail]) => {
      const seconds = sec ? `:${sec[0]}${sec[1] !== null ? `.${sec[1]}` : ''}` : '';
      const offset = zone === '+' || zone === '-' ? `${zone}${oh}:${om}` : zone;
      return `${y}-${mo}-${d}T${h}:${mi}${seconds}${offset}${tail}`;
    });

  test('the examples of the issue and of the range rule', () => {
    for (const text of ['0000-00-00T00:00Z', '2026-11-23T13:20Z', '0000-01-01T00:00Z', '0000-01-01T01:00+01:00']) {
      agree(text);
    }
    expect(plain.test('0000-00-00T00:00Z')).toBe(false);
  });

  test('property: pattern and parser agree', () => {
    fc.assert(fc.property(candidate, agree), { numRuns: 20_000 });
  });

  // The grammar without its calendar, as the fields of a match, then the calendar and the range: what
  // patternCheckedEpochMs reads by position, written the obvious way.
  const GRAMMAR =
    /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?(?:Z|([+-])([0-9]{2}):([0-9]{2}))$/;
  const byMatch = (text: string): number | null => {
    const m = GRAMMAR.exec(text);
    if (m === null) return null;
    const [year, month, day, hour, minute] = [1, 2, 3, 4, 5].map((i) => Number(m[i])) as number[];
    const second = Number(m[6] ?? 0);
    const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
    const [oh, om] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
    const leap = year! % 4 === 0 && (year! % 100 !== 0 || year! % 400 === 0);
    const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month! - 1];
    if (days === undefined || day! < 1 || day! > days || hour! > 23 || minute! > 59 || second > 59) return null;
    if (oh > 23 || om > 59) return null;
    const offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
    const utc = new Date(0);
    utc.setUTCFullYear(year!, month! - 1, day);
    utc.setUTCHours(hour!, minute, second, millis);
    const epochMs = utc.getTime() - offsetMinutes * 60_000;
    const utcYear = new Date(epochMs).getUTCFullYear();
    return utcYear >= 0 && utcYear <= 9999 ? epochMs : null;
  };

  test('property: patternCheckedEpochMs reads any text as the grammar’s match does', () => {
    fc.assert(
      fc.property(candidate, (text) => {
        expect({ text, epochMs: patternCheckedEpochMs(text) }).toEqual({ text, epochMs: byMatch(text) });
      }),
      { numRuns: 20_000 },
    );
    for (const text of ['2026-11-23T13:20:00.Z', '2026-11-23T13:20.5Z', '2026-11-23T13:20:00.1234567890+01:00', '']) {
      expect({ text, epochMs: patternCheckedEpochMs(text) }).toEqual({ text, epochMs: byMatch(text) });
    }
  });

  test('property: every day of every month of a 400-year cycle and of the first and last years', () => {
    for (const y of [0, 1, 4, 100, 1900, 2000, 2024, 2026, 2100, 9996, 9999]) {
      for (let month = 1; month <= 12; month++) {
        for (let day = 0; day <= 32; day++) {
          const date = `${String(y).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          for (const rest of ['T00:00Z', 'T23:59:59.9+23:59', 'T00:00-23:59', 'T12:00+00:00', 'T12:00-00:00']) {
            agree(`${date}${rest}`);
          }
        }
      }
    }
  });
});
