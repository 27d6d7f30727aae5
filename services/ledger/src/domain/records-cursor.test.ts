import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { CURSOR_LENGTH_MAX, cursorKey, decodeCursor, encodeCursor, INVALID_CURSOR } from './records-cursor.ts';

const key = cursorKey(Buffer.alloc(32, 7));
const otherKey = cursorKey(Buffer.alloc(32, 8));
const scope = 'org=123e4567-e89b-42d3-a456-426614174000;project=;game=';
const pos = { createdAt: '2026-02-03 04:05:06.123456+00', id: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' };
const ctx = { kind: 'events', scope } as const;
const cursor = encodeCursor(key, { ...ctx, ...pos });
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('records cursor', () => {
  test('round trip; opaque base64url; does not reveal the scope', () => {
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor.length).toBeLessThan(150);
    expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toContain('org=');
    expect(decodeCursor(key, cursor, ctx)).toEqual(pos);
    expect(encodeCursor(key, { ...ctx, ...pos })).toBe(cursor); // deterministic
  });

  test('bound to kind, scope and key', () => {
    expect(decodeCursor(key, cursor, { kind: 'players', scope })).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, cursor, { kind: 'events', scope: `${scope}x` })).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, cursor, { kind: 'events', scope: '' })).toEqual(INVALID_CURSOR);
    expect(decodeCursor(otherKey, cursor, ctx)).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, cursor, { kind: 'nope' as 'events', scope })).toEqual(INVALID_CURSOR);
  });

  test('malformed input is rejected without throwing', () => {
    for (const bad of [
      '',
      'a',
      '====',
      `${cursor}=`,
      `${cursor} `,
      cursor.replace(/.$/, '+'),
      `${cursor}A`,
      cursor.slice(0, -1),
    ]) {
      expect(decodeCursor(key, bad, ctx)).toEqual(INVALID_CURSOR);
    }
    for (const bad of [null, undefined, 42, {}, [cursor]]) expect(decodeCursor(key, bad, ctx)).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, 'A'.repeat(CURSOR_LENGTH_MAX + 1), ctx)).toEqual(INVALID_CURSOR);
  });

  test('a valid MAC over a non-cursor payload or another version is still rejected', () => {
    const forge = (version: number, payload: string) => {
      const p = Buffer.from(payload, 'utf8');
      // The raw key bytes, as a client's stored cursor was made before the key became a KeyObject: the same MAC.
      const m = createHmac('sha256', Buffer.alloc(32, 7))
        .update(`${JSON.stringify(['records-cursor', version, 'events', scope])}\n`)
        .update(p)
        .digest()
        .subarray(0, 16);
      return Buffer.concat([Buffer.of(version), m, p]).toString('base64url');
    };
    expect(decodeCursor(key, forge(1, JSON.stringify([pos.createdAt, pos.id])), ctx)).toEqual(pos); // sanity
    expect(decodeCursor(key, forge(2, JSON.stringify([pos.createdAt, pos.id])), ctx)).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, forge(1, '{"a":1}'), ctx)).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, forge(1, '[1,2]'), ctx)).toEqual(INVALID_CURSOR);
    expect(decodeCursor(key, forge(1, 'not json'), ctx)).toEqual(INVALID_CURSOR);
  });

  test('encode rejects weak keys, bad kinds and oversize cursors', () => {
    expect(() => cursorKey(Buffer.alloc(8))).toThrow(TypeError);
    expect(() => encodeCursor(key, { kind: 'x' as 'events', scope, ...pos })).toThrow(TypeError);
    expect(() => encodeCursor(key, { ...ctx, createdAt: 'x'.repeat(400), id: pos.id })).toThrow(RangeError);
  });

  const position = fc.record({
    createdAt: fc
      .tuple(fc.date({ min: new Date('2000-01-01Z'), max: new Date('2999-12-31Z'), noInvalidDate: true }), fc.nat(999))
      .map(([d, us]) => `${d.toISOString().slice(0, -1)}${String(us).padStart(3, '0')}Z`),
    id: fc.uuid(),
  });
  const context = fc.record({
    kind: fc.constantFrom('players' as const, 'events' as const),
    scope: fc.string({ unit: 'grapheme', maxLength: 120 }),
  });

  test('property: round trip for any position and scope', () => {
    fc.assert(
      fc.property(position, context, (p, c) => {
        const text = encodeCursor(key, { ...c, ...p });
        expect(text.length).toBeLessThanOrEqual(CURSOR_LENGTH_MAX);
        expect(decodeCursor(key, text, c)).toEqual(p);
      }),
      { numRuns: 300 },
    );
  });

  test('property: any single-character change is rejected', () => {
    fc.assert(
      fc.property(position, context, fc.nat(), fc.nat(), (p, c, at, pick) => {
        const text = encodeCursor(key, { ...c, ...p });
        const i = at % text.length;
        const replacement = ALPHABET.replace(text[i]!, '')[pick % 63]!;
        const altered = text.slice(0, i) + replacement + text.slice(i + 1);
        expect(decodeCursor(key, altered, c)).toEqual(INVALID_CURSOR);
      }),
      { numRuns: 2000 },
    );
  });

  test('property: exhaustive single-character changes of one cursor', () => {
    for (let i = 0; i < cursor.length; i++) {
      for (const ch of ALPHABET) {
        if (ch === cursor[i]) continue;
        expect(decodeCursor(key, cursor.slice(0, i) + ch + cursor.slice(i + 1), ctx)).toEqual(INVALID_CURSOR);
      }
    }
  });

  test('property: a cursor for one scope/kind never opens another', () => {
    fc.assert(
      fc.property(position, context, context, (p, c1, c2) => {
        fc.pre(c1.kind !== c2.kind || c1.scope !== c2.scope);
        expect(decodeCursor(key, encodeCursor(key, { ...c1, ...p }), c2)).toEqual(INVALID_CURSOR);
      }),
      { numRuns: 300 },
    );
  });
});
