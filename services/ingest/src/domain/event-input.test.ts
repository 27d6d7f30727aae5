import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { gameEventInputSchema } from '#runtime/contracts/ingest-shapes.ts';
import { OCCURRED_AT_PATTERN, parseOccurredAt } from '#runtime/contracts/occurred-at.ts';
import { parseIJson } from '#runtime/http/i-json.ts';
import { validateEventInput } from './event-input.ts';

const base = {
  eventId: '123e4567-e89b-42d3-a456-426614174000',
  playerId: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  eventType: 'level.complete',
  occurredAt: '2026-02-03T04:05+01:00',
};

function codeOf(body: unknown): string {
  const r = validateEventInput(body);
  return r.ok ? 'ok' : r.code;
}

describe('validateEventInput', () => {
  test('valid body without metadata', () => {
    expect(validateEventInput(base)).toEqual({
      ok: true,
      input: {
        ...base,
        occurredAtMs: Date.parse('2026-02-03T03:05:00Z'),
      },
    });
  });

  test('valid body with metadata: its canonical text comes with the input', () => {
    const checked = validateEventInput({ ...base, metadata: { z: 1, a: ['é', null] } });
    expect(checked.ok && checked.input.metadataJson).toBe('{"a":["é",null],"z":1}');
  });

  test('valid body with metadata, or empty metadata, is accepted (metadata counts through the payload hash)', () => {
    expect(validateEventInput({ ...base, metadata: { score: 10, tags: ['a'] } }).ok).toBe(true);
    expect(validateEventInput({ ...base, metadata: {} }).ok).toBe(true);
  });

  test.each([
    [null, 'body must be object'],
    [[], 'body must be object'],
    ['x', 'body must be object'],
    [42, 'body must be object'],
    [{}, 'body.eventId is required'],
    [{ ...base, extra: 1 }, "unknown field 'extra'"],
    [{ ...base, eventId: '123e4567-e89b-02d3-a456-426614174000' }, 'body.eventId must be a valid uuid'],
    [{ ...base, playerId: '123e4567-e89b-42d3-c456-426614174000' }, 'body.playerId must be a valid uuid'],
    [{ ...base, eventType: 'Level' }, 'body.eventType must match pattern ^[a-z][a-z0-9_.-]{0,63}$'],
    [{ ...base, eventType: '' }, 'body.eventType must NOT have fewer than 1 characters'],
    [{ ...base, eventType: `a${'b'.repeat(64)}` }, 'body.eventType must NOT have more than 64 characters'],
    [{ ...base, occurredAt: '2026-02-03T04:05:06' }, 'body.occurredAt must be a valid date-time'],
    [{ ...base, occurredAt: '2023-02-29T04:05Z' }, 'body.occurredAt must be a valid date-time'],
    [{ ...base, occurredAt: 1770091506000 }, 'body.occurredAt must be string'],
    [{ ...base, metadata: [] }, 'body.metadata must be object'],
    [{ ...base, metadata: null }, 'body.metadata must be object'],
    [{ ...base, metadata: 'x' }, 'body.metadata must be object'],
  ])('invalid_event: %j', (body, message) => {
    expect(validateEventInput(body)).toEqual({ ok: false, code: 'invalid_event', message });
  });

  test('eventType bounds: 64 characters accepted', () => {
    expect(codeOf({ ...base, eventType: `a${'b'.repeat(63)}` })).toBe('ok');
    expect(codeOf({ ...base, eventType: 'a0_.-z' })).toBe('ok');
    expect(codeOf({ ...base, eventType: '0a' })).toBe('invalid_event');
  });

  test('nil and max UUIDs accepted', () => {
    expect(codeOf({ ...base, eventId: '00000000-0000-0000-0000-000000000000' })).toBe('ok');
    expect(codeOf({ ...base, playerId: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' })).toBe('ok');
  });

  test('invalid_metadata after the schema passes', () => {
    expect(validateEventInput({ ...base, metadata: { a: 'x\u0000' } })).toEqual({
      ok: false,
      code: 'invalid_metadata',
      message: 'a metadata string contains NUL (U+0000)',
    });
    expect(codeOf({ ...base, metadata: { a: 'x'.repeat(4089) } })).toBe('invalid_metadata');
    expect(codeOf({ ...base, metadata: { a: 'x'.repeat(4088) } })).toBe('ok');
    expect(codeOf({ ...base, metadata: { a: [[[[[[]]]]]] } })).toBe('invalid_metadata');
    expect(codeOf({ ...base, metadata: JSON.parse('{"\\udc00":1}') })).toBe('invalid_metadata');
  });

  test('schema errors win over metadata errors', () => {
    expect(codeOf({ ...base, eventType: 'BAD', metadata: { a: '\u0000' } })).toBe('invalid_event');
    expect(codeOf({ ...base, extra: 1, metadata: { a: '\u0000' } })).toBe('invalid_event');
  });

  test('a lone surrogate or an out-of-range number in metadata (left by the body reader): invalid_metadata after the schema', () => {
    // What readJsonBodyDeferring hands over: JSON.parse's value (1e400 is Infinity) and its report of the fault.
    const read = (text: string) => {
      const parsed = parseIJson(text, 'metadata');
      if (parsed.ok || parsed.member === undefined) throw new Error(`not a deferred metadata fault: ${text}`);
      return validateEventInput(parsed.value, parsed.reason);
    };
    const event = JSON.stringify(base).slice(0, -1);
    expect(read(`${event},"metadata":{"s":"a\\ud800b"}}`)).toEqual({
      ok: false,
      code: 'invalid_metadata',
      message: 'a metadata string contains an unpaired surrogate',
    });
    expect(read(`${event},"metadata":{"\\udc00":1}}`)).toEqual({
      ok: false,
      code: 'invalid_metadata',
      message: 'a metadata key contains an unpaired surrogate',
    });
    for (const n of ['1e400', '-1e400']) {
      expect(read(`${event},"metadata":{"n":${n}}}`)).toEqual({
        ok: false,
        code: 'invalid_metadata',
        message: 'metadata numbers must be finite',
      });
    }
    // The schema first: an unknown field, a bad eventType, metadata that is not an object.
    expect(read(`${event},"extra":1,"metadata":{"n":1e400}}`)).toMatchObject({ code: 'invalid_event' });
    expect(read(`${event.replace('level.complete', 'BAD')},"metadata":{"s":"\\ud800"}}`)).toMatchObject({
      code: 'invalid_event',
    });
    expect(validateEventInput({ ...base, eventType: 'BAD', metadata: { s: '\ud800' } }, 'fault')).toMatchObject({
      code: 'invalid_event',
    });
    expect(validateEventInput({ ...base, metadata: '\ud800' }, 'fault')).toMatchObject({ code: 'invalid_event' });
    expect(read(`${event},"metadata":[1e400]}`)).toMatchObject({ code: 'invalid_event' });
    // The reader's report alone refuses the body (a second line behind the metadata check).
    expect(validateEventInput({ ...base, metadata: {} }, 'the reader saw a fault')).toEqual({
      ok: false,
      code: 'invalid_metadata',
      message: 'the reader saw a fault',
    });
  });

  test('the exported schema is a valid, standalone JSON Schema 2020-12 (no custom keywords)', () => {
    const plain = new Ajv2020({ strict: true, validateFormats: false });
    const v = plain.compile(gameEventInputSchema);
    expect(v(base)).toBe(true);
    expect(v({ ...base, eventId: '123e4567-e89b-92d3-a456-426614174000' })).toBe(false); // pattern alone enforces the rule
  });

  test('property: the documented occurredAt pattern admits exactly what the parser accepts', () => {
    const pattern = new RegExp(OCCURRED_AT_PATTERN);
    const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
    const text = fc
      .tuple(
        digits(4),
        digits(2),
        digits(2),
        digits(2),
        digits(2),
        fc.option(
          fc.tuple(
            digits(2),
            fc.option(fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 12 })),
          ),
        ),
        fc.constantFrom('Z', '+', '-', 'z', ''),
        digits(2),
        digits(2),
      )
      .map(([y, mo, d, h, mi, sec, zone, oh, om]) => {
        const seconds = sec ? `:${sec[0]}${sec[1] !== null ? `.${sec[1]}` : ''}` : '';
        const offset = zone === '+' || zone === '-' ? `${zone}${oh}:${om}` : zone;
        return `${y}-${mo}-${d}T${h}:${mi}${seconds}${offset}`;
      });
    fc.assert(
      fc.property(text, (s) => {
        expect({ s, documented: pattern.test(s) }).toEqual({ s, documented: parseOccurredAt(s) !== null });
        if (!pattern.test(s)) expect(codeOf({ ...base, occurredAt: s })).toBe('invalid_event');
      }),
      { numRuns: 3000 },
    );
  });

  test('property: valid generated bodies pass and keep every field', () => {
    const body = fc.record(
      {
        eventId: fc.uuid(),
        playerId: fc.uuid(),
        eventType: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,63}$/),
        occurredAt: fc
          .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
          .map((d) => d.toISOString()),
        metadata: fc.dictionary(
          fc.string({ maxLength: 5 }).filter((s) => !s.includes('\u0000')),
          fc.integer(),
          {
            maxKeys: 5,
          },
        ),
      },
      { requiredKeys: ['eventId', 'playerId', 'eventType', 'occurredAt'] },
    );
    fc.assert(
      fc.property(body, (b) => {
        const r = validateEventInput(b);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(new Date(r.input.occurredAtMs).toISOString()).toBe(b.occurredAt);
        expect(r.input.occurredAtMs).toBe(Date.parse(b.occurredAt));
      }),
      { numRuns: 300 },
    );
  });
});
