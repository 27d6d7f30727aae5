import fc from 'fast-check';
import { canonicalJson } from './canonical-json.ts';
import { checkMetadata } from './metadata.ts';

const size = (v: unknown) => Buffer.byteLength(canonicalJson(v), 'utf8');

/** `levels` nested containers, the outer one being the metadata object: {a:{a:...}} or {a:[[...]]}. */
function nest(levels: number, kind: 'object' | 'array', leaf: unknown = {}): Record<string, unknown> {
  let inner: unknown = leaf;
  for (let i = 1; i < levels - 1; i++) inner = kind === 'object' ? { a: inner } : [inner];
  return levels === 1 ? {} : { a: inner };
}

function entries(n: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
}

describe('checkMetadata: examples', () => {
  test('must be a JSON object', () => {
    for (const v of [null, [], 'x', 1, true, undefined, new Date(0), new Map()]) {
      expect(checkMetadata(v)).toEqual({ ok: false, reason: 'metadata must be a JSON object' });
    }
    expect(checkMetadata({})).toMatchObject({ ok: true });
    expect(checkMetadata(JSON.parse('{"__proto__":{"x":1}}'))).toMatchObject({ ok: true });
    expect(checkMetadata(Object.create(null))).toMatchObject({ ok: true });
  });

  test('canonical size: 4096 bytes accepted, 4097 rejected', () => {
    const at = { a: 'x'.repeat(4088) };
    const over = { a: 'x'.repeat(4089) };
    expect(size(at)).toBe(4096);
    expect(size(over)).toBe(4097);
    expect(checkMetadata(at)).toMatchObject({ ok: true });
    expect(checkMetadata(over)).toEqual({ ok: false, reason: 'metadata exceeds 4096 canonical UTF-8 bytes' });
  });

  test('canonical size counts UTF-8 bytes and JCS escapes, not characters or input spacing', () => {
    // '€' is 3 bytes, '\n' is 2 bytes (\n), '\u0001' is 6 bytes (\u0001), '😀' is 4 bytes.
    const fill = (n: number) => ({ b: '😀'.repeat(n), a: '€'.repeat(1000), c: '\n\u0001xx' });
    // {"a":"...","b":"...","c":"..."}: 2 + 3*(3 keys + colon) + 2 commas + (3000+2) + (4n+2) + (10+2)
    const n = (4096 - size(fill(0))) / 4;
    expect(Number.isInteger(n)).toBe(true);
    expect(size(fill(n))).toBe(4096);
    expect(checkMetadata(fill(n)).ok).toBe(true);
    expect(checkMetadata({ ...fill(n), d: null }).ok).toBe(false);
    // Reordered keys / pretty-printed input: same canonical size.
    expect(checkMetadata(JSON.parse(JSON.stringify(fill(n), null, 8))).ok).toBe(true);
    // Numbers are measured in their canonical form: 1e+21 (5 bytes), not 1000000000000000000000.
    const nums = { a: Array.from({ length: 100 }, () => 1e21), b: 'x'.repeat(4096 - 6 - 601 - 7) };
    expect(size(nums)).toBe(4096);
    expect(checkMetadata(nums).ok).toBe(true);
  });

  test('depth: 6 accepted, 7 rejected (metadata object is level 1)', () => {
    for (const kind of ['object', 'array'] as const) {
      expect(checkMetadata(nest(6, kind))).toMatchObject({ ok: true });
      expect(checkMetadata(nest(6, kind, kind === 'object' ? { x: 1 } : [1, 'a', null]))).toMatchObject({ ok: true });
      expect(checkMetadata(nest(7, kind))).toEqual({ ok: false, reason: 'metadata nesting exceeds depth 6' });
    }
    expect(checkMetadata({ a: [{ b: [{ c: { d: 1 } }] }] })).toMatchObject({ ok: true }); // 6 mixed
    expect(checkMetadata({ a: [{ b: [{ c: { d: [] } }] }] }).ok).toBe(false); // 7 mixed
    expect(checkMetadata({ a: [{ b: [{ c: { d: '[[[[' } }] }] }).ok).toBe(true); // strings do not nest
  });

  test('array items: 100 accepted, 101 rejected (also nested)', () => {
    expect(checkMetadata({ a: Array(100).fill(0) })).toMatchObject({ ok: true });
    expect(checkMetadata({ a: Array(101).fill(0) })).toEqual({
      ok: false,
      reason: 'a metadata array exceeds 100 items',
    });
    expect(checkMetadata({ a: { b: [Array(101).fill(null)] } }).ok).toBe(false);
  });

  test('object entries: 100 accepted, 101 rejected (also nested)', () => {
    expect(checkMetadata(entries(100))).toMatchObject({ ok: true });
    expect(checkMetadata(entries(101))).toEqual({ ok: false, reason: 'a metadata object exceeds 100 entries' });
    expect(checkMetadata({ a: [entries(100)] })).toMatchObject({ ok: true });
    expect(checkMetadata({ a: [entries(101)] }).ok).toBe(false);
  });

  test('NUL in a key or a value is rejected; other control characters are fine', () => {
    expect(checkMetadata({ 'a\u0000': 1 })).toEqual({ ok: false, reason: 'a metadata key contains NUL (U+0000)' });
    expect(checkMetadata({ a: 'x\u0000y' })).toEqual({ ok: false, reason: 'a metadata string contains NUL (U+0000)' });
    expect(checkMetadata({ a: [{ '\u0000': true }] }).ok).toBe(false);
    expect(checkMetadata({ a: ['\u0000'] }).ok).toBe(false);
    expect(checkMetadata(JSON.parse('{"a":"\\u0000"}')).ok).toBe(false);
    expect(checkMetadata({ '\u0001\u001f\u007f': '\t\r\n\u0001' })).toMatchObject({ ok: true });
  });

  test('unpaired surrogates are rejected in keys and values; valid pairs pass', () => {
    const lone = { ok: false, reason: 'a metadata string contains an unpaired surrogate' };
    expect(checkMetadata({ a: '\ud83d' })).toEqual(lone); // lone high
    expect(checkMetadata({ a: '\ude00' })).toEqual(lone); // lone low
    expect(checkMetadata({ a: 'x\ude00\ud83d' })).toEqual(lone); // reversed pair
    expect(checkMetadata({ a: ['\ud83dx'] })).toEqual(lone);
    expect(checkMetadata({ '\ud83d': 1 })).toEqual({
      ok: false,
      reason: 'a metadata key contains an unpaired surrogate',
    });
    expect(checkMetadata({ '\ude00': 1 }).ok).toBe(false);
    expect(checkMetadata(JSON.parse('{"a":"\\ud83d"}')).ok).toBe(false);
    expect(checkMetadata({ '😀': '😀\ud83d\ude00', a: ['𝄞'] })).toMatchObject({ ok: true });
    expect(checkMetadata(JSON.parse('{"\\ud83d\\ude00":"\\ud83d\\ude00"}'))).toMatchObject({ ok: true });
  });

  test('numbers must be finite; non-JSON values are rejected', () => {
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(checkMetadata({ a: [n] })).toEqual({ ok: false, reason: 'metadata numbers must be finite' });
    }
    expect(checkMetadata({ a: -0, b: 5e-324, c: 1.7976931348623157e308, d: -1e-7 })).toMatchObject({ ok: true });
    expect(checkMetadata({ a: undefined }).ok).toBe(false);
    expect(checkMetadata({ a: 1n }).ok).toBe(false);
    expect(checkMetadata({ a: () => 1 }).ok).toBe(false);
    expect(checkMetadata({ a: new Date(0) }).ok).toBe(false);
  });

  test('stops at the first violation (huge later content is not walked)', () => {
    const big = { a: '\u0000', b: Array.from({ length: 100 }, () => 'x'.repeat(10_000)) };
    expect(checkMetadata(big)).toEqual({ ok: false, reason: 'a metadata string contains NUL (U+0000)' });
  });
});

describe('checkMetadata: properties', () => {
  // Strings over all code points (well-formed) without NUL, keys likewise.
  const str = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !s.includes('\u0000'));
  const leaf = fc.oneof(
    str,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  const { node } = fc.letrec<{ node: unknown; obj: Record<string, unknown>; arr: unknown[] }>((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('obj'), tie('arr')),
    obj: fc.dictionary(str, tie('node'), { maxKeys: 8 }),
    arr: fc.array(tie('node'), { maxLength: 8 }),
  }));
  const within = fc.dictionary(str, node, { maxKeys: 8 }).filter((v) => depth(v) <= 6);

  function depth(v: unknown): number {
    if (v === null || typeof v !== 'object') return 0;
    const children = Array.isArray(v) ? v : Object.values(v);
    return 1 + Math.max(0, ...children.map(depth));
  }

  test('size verdict equals the real canonical size verdict, around the 4096 boundary', () => {
    fc.assert(
      fc.property(
        within,
        fc.integer({ min: -3, max: 3 }),
        fc.constantFrom('x', 'é', '€', '😀', '\n', '\u0001'),
        (v, delta, ch) => {
          const base = size({ ...v, '~pad': '' }); // '~' sorts after the generated ASCII keys; irrelevant for size
          if (base > 4096) return;
          const chBytes = size(ch) - 2;
          const reps = Math.max(0, Math.floor((4096 - base) / chBytes) + delta);
          const padded = { ...v, '~pad': ch.repeat(reps) };
          expect(checkMetadata(padded).ok).toBe(size(padded) <= 4096);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('accepted values re-validate after a canonical round trip (same verdict, same size)', () => {
    fc.assert(
      fc.property(within, (v) => {
        const r = checkMetadata(v);
        expect(r.ok).toBe(size(v) <= 4096);
        if (!r.ok) return;
        const again = JSON.parse(canonicalJson(v));
        expect(checkMetadata(again)).toMatchObject({ ok: true });
        expect(size(again)).toBe(size(v));
      }),
      { numRuns: 500 },
    );
  });

  test('an accepted value’s canonical text is canonicalJson’s (RFC 8785: member order by UTF-16 code units)', () => {
    fc.assert(
      fc.property(within, (v) => {
        const r = checkMetadata(v);
        if (r.ok) expect(r.canonical).toBe(canonicalJson(v));
      }),
      { numRuns: 1000 },
    );
    for (const text of [
      '{"__proto__":{"x":1},"b":[1,-0,1e21,"\\u00e9"],"a":null,"\\ud83d\\ude00":true,"\\uffff":false}',
    ]) {
      const v = JSON.parse(text);
      expect(checkMetadata(v)).toEqual({ ok: true, canonical: canonicalJson(v) });
    }
  });

  test('one more nesting level than allowed is always rejected', () => {
    fc.assert(
      fc.property(within, fc.constantFrom('object', 'array'), (v, kind) => {
        const wrapped = nest(7, kind as 'object' | 'array');
        expect(checkMetadata({ ...v, '~deep': wrapped['a'] }).ok).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});
