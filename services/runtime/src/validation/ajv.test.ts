import { createAjv, describeAjvError, isRfc3339DateTime } from './ajv.ts';
import { UUID_PATTERN } from './uuid.ts';

const ajv = createAjv();
const validate = ajv.compile({
  type: 'object',
  additionalProperties: false,
  required: ['id', 'eventType'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    ref: { type: 'string', pattern: UUID_PATTERN },
    eventType: { type: 'string', maxLength: 64, pattern: '^[a-z][a-z0-9_.-]{0,63}$' },
    at: { type: 'string', format: 'date-time' },
    email: { type: 'string', format: 'email' },
    nested: {
      type: 'object',
      additionalProperties: false,
      properties: { list: { type: 'array', items: { type: 'integer' } } },
    },
  },
});

function message(value: unknown): string | null {
  return validate(value) ? null : describeAjvError(validate.errors);
}

const ID = '123e4567-e89b-42d3-a456-426614174000';

describe('createAjv', () => {
  test('valid document passes; ajv-formats formats are present', () => {
    expect(message({ id: ID, eventType: 'level.up', at: '2026-02-03T04:05:06.123+01:00', email: 'a@b.co' })).toBe(null);
    expect(message({ id: ID, eventType: 'x', email: 'nope' })).toBe('body.email must be a valid email');
  });

  test('uuid format is the spec rule, not ajv-formats', () => {
    expect(message({ id: '123e4567-e89b-02d3-a456-426614174000', eventType: 'x' })).toBe(
      'body.id must be a valid uuid',
    );
    expect(message({ id: '00000000-0000-0000-0000-000000000000', eventType: 'x' })).toBe(null);
    expect(message({ id: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', eventType: 'x' })).toBe(null);
    expect(message({ id: ID, ref: '123e4567-e89b-42d3-c456-426614174000', eventType: 'x' })).toBe(
      'body.ref must be a valid uuid',
    );
  });

  test('date-time format is strict RFC 3339', () => {
    expect(message({ id: ID, eventType: 'x', at: '2026-02-03 04:05:06Z' })).toBe('body.at must be a valid date-time');
    expect(message({ id: ID, eventType: 'x', at: '2024-02-29T00:00:00Z' })).toBe(null);
  });

  test('strict mode rejects unknown keywords and formats in schemas', () => {
    expect(() => ajv.compile({ type: 'string', foo: 1 })).toThrow();
    expect(() => ajv.compile({ type: 'string', format: 'no-such-format' })).toThrow();
  });

  test('extra formats can be supplied per instance', () => {
    const a = createAjv({ formats: { 'date-time': { type: 'string', validate: (s: string) => s === 'now' } } });
    const v = a.compile({ type: 'string', format: 'date-time' });
    expect(v('now')).toBe(true);
    expect(v('2026-02-03T04:05:06Z')).toBe(false);
  });
});

describe('describeAjvError', () => {
  test.each([
    [{ eventType: 'x' }, 'body.id is required'],
    [{ id: ID, eventType: 'x', foo: 1 }, "unknown field 'foo'"],
    [{ id: ID, eventType: 'x', nested: { bad: 1 } }, "unknown field 'bad' in body.nested"],
    [{ id: ID, eventType: 'x', nested: { list: [1, 'a'] } }, 'body.nested.list[1] must be integer'],
    [{ id: ID, eventType: 'Bad' }, 'body.eventType must match pattern ^[a-z][a-z0-9_.-]{0,63}$'],
    [{ id: ID, eventType: 'a'.repeat(65) }, 'body.eventType must NOT have more than 64 characters'],
    [{ id: 5, eventType: 'x' }, 'body.id must be string'],
    [[], 'body must be object'],
    [null, 'body must be object'],
  ])('%j -> %s', (value, expected) => {
    expect(message(value)).toBe(expected);
  });

  test('unknown field names are escaped and truncated', () => {
    const m = message({ id: ID, eventType: 'x', ['\n'.repeat(2) + 'z'.repeat(200)]: 1 });
    expect(m).toBe(`unknown field '\\n\\n${'z'.repeat(62)}...'`);
  });

  test('no errors gives a generic message', () => {
    expect(describeAjvError(null)).toBe('body is invalid');
    expect(describeAjvError([], 'query')).toBe('query is invalid');
  });
});

describe('isRfc3339DateTime', () => {
  test.each([
    '2026-02-03T04:05:06Z',
    '2026-02-03T04:05:06.123456Z',
    '2024-02-29T23:59:59+23:59',
    '2000-02-29T00:00:00-00:00',
  ])('accepts %s', (s) => expect(isRfc3339DateTime(s)).toBe(true));
  test.each([
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-01T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T00:60:00Z',
    '2026-01-01T00:00:60Z',
    '2026-01-01T00:00Z',
    '2026-01-01T00:00:00',
    '2026-01-01T00:00:00+24:00',
    '2026-01-01T00:00:00+01:60',
    '2026-01-01t00:00:00z',
    '2026-01-01T00:00:00.Z',
  ])('rejects %s', (s) => expect(isRfc3339DateTime(s)).toBe(false));
});
