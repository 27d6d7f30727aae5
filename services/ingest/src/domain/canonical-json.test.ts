import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson, eventCanonicalForms, payloadHash } from './canonical-json.ts';
import { checkMetadata } from './metadata.ts';

/** Independent, obviously-correct reference (recursive; fine for test-sized values). */
function reference(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(reference).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); // JS `<` compares UTF-16 code units
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(o[k])}`).join(',')}}`;
}

function fromBits(hex: string): number {
  return Buffer.from(hex, 'hex').readDoubleBE(0);
}

describe('canonicalJson: RFC 8785 vectors', () => {
  // RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
  test.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('number %s -> %s', (bits, expected) => {
    expect(canonicalJson(fromBits(bits))).toBe(expected);
  });

  test.each([
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [1e-7, '1e-7'],
    [1e-6, '0.000001'],
    [-0, '0'],
    [5e-324, '5e-324'],
    [4.5, '4.5'],
    [2e-3, '0.002'],
    [1e-27, '1e-27'],
    [1e30, '1e+30'],
  ])('number %p -> %s', (n, expected) => {
    expect(canonicalJson(n)).toBe(expected);
    expect(canonicalJson(JSON.parse(String(n)))).toBe(expected);
  });

  test('RFC 8785 §3.2.2 example (parsed from the RFC input text)', () => {
    const input =
      '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n' +
      '  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n' +
      '  "literals": [null, true, false]\n}';
    expect(canonicalJson(JSON.parse(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  test('RFC 8785 §3.2.3 sorting example (UTF-16 code units, non-BMP key)', () => {
    const input =
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
      '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}';
    const out = canonicalJson(JSON.parse(input));
    expect(out).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
        '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    // U+1F600 (surrogates D83D DE00) sorts before U+FB33 by code units, although after it by code point.
    expect(out.indexOf('😀')).toBeLessThan(out.indexOf('\ufb33'));
  });

  test('string escaping: only " \\ and C0 controls; short forms; lower-case hex; U+2028/U+007F raw', () => {
    expect(canonicalJson('\b\t\n\f\r')).toBe('"\\b\\t\\n\\f\\r"');
    expect(canonicalJson('\u0000\u0001\u001f')).toBe('"\\u0000\\u0001\\u001f"');
    expect(canonicalJson('"\\/')).toBe('"\\"\\\\/"');
    expect(canonicalJson('\u007f\u2028\u2029é😀')).toBe('"\u007f\u2028\u2029é😀"');
  });

  test('nesting, empty containers, integer-like keys sorted as strings', () => {
    expect(canonicalJson({ b: [], a: {}, c: [{ z: 1, y: [2, { x: null }] }] })).toBe(
      '{"a":{},"b":[],"c":[{"y":[2,{"x":null}],"z":1}]}',
    );
    expect(canonicalJson({ 10: 'a', 9: 'b', 1: 'c', '': 'd' })).toBe('{"":"d","1":"c","10":"a","9":"b"}');
    expect(canonicalJson(JSON.parse('{"__proto__":1,"a":2}'))).toBe('{"__proto__":1,"a":2}');
  });

  test('deep nesting does not overflow the stack', () => {
    const deep = JSON.parse('['.repeat(20000) + ']'.repeat(20000));
    expect(canonicalJson(deep).length).toBe(40000);
  });

  test('rejects values JSON cannot carry', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow();
    expect(() => canonicalJson(Number.POSITIVE_INFINITY)).toThrow();
    expect(() => canonicalJson({ a: -Infinity })).toThrow();
    expect(() => canonicalJson('\ud800')).toThrow();
    expect(() => canonicalJson({ '\udc00': 1 })).toThrow();
    expect(() => canonicalJson(10n)).toThrow();
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow();
  });
});

describe('payloadHash', () => {
  test('SHA-256 of the UTF-8 canonical form', () => {
    const v = { b: '€', a: [1, 2.5] };
    expect(payloadHash(v)).toEqual(createHash('sha256').update(Buffer.from('{"a":[1,2.5],"b":"€"}', 'utf8')).digest());
    expect(payloadHash(v)).toHaveLength(32);
  });

  test('property order does not matter; any value change does', () => {
    expect(payloadHash({ a: 1, b: 2 })).toEqual(payloadHash({ b: 2, a: 1 }));
    expect(payloadHash({ a: 1 })).not.toEqual(payloadHash({ a: 1, metadata: {} }));
    expect(payloadHash({ t: '2026-01-01T00:00Z' })).not.toEqual(payloadHash({ t: '2026-01-01T00:00:00Z' }));
  });
});

describe('canonicalJson: properties', () => {
  const json = fc.jsonValue({ stringUnit: 'binary' }); // full Unicode incl. non-BMP, well-formed

  /** Same value with every object's keys inserted in a shuffled order. */
  function reorder(v: unknown, rnd: () => number): unknown {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => reorder(x, rnd));
    const entries = Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of entries) Object.defineProperty(out, k, { value: reorder(x, rnd), enumerable: true });
    return out;
  }

  test('invariant under key reordering', () => {
    fc.assert(
      fc.property(json, fc.integer(), (v, seed) => {
        let s = seed >>> 0;
        const rnd = () => {
          s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
          return s / 2 ** 32;
        };
        expect(canonicalJson(reorder(v, rnd))).toBe(canonicalJson(v));
      }),
      { numRuns: 300 },
    );
  });

  test('JSON.parse(canonicalJson(x)) deep-equals x, and matches the reference serializer', () => {
    fc.assert(
      fc.property(json, (v) => {
        const text = canonicalJson(v);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v))); // -0 is the only lossy case
        expect(text).toBe(reference(v));
        expect(canonicalJson(JSON.parse(text))).toBe(text); // idempotent
      }),
      { numRuns: 300 },
    );
  });

  test('numbers: canonical text is Number#toString and round-trips exactly', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const text = canonicalJson(n);
        expect(text).toBe(Object.is(n, -0) ? '0' : String(n));
        expect(JSON.parse(text)).toBe(n === 0 ? 0 : n);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('eventCanonicalForms', () => {
  // Bodies the schema admits: UUIDs in either case, an event type of its pattern, an occurredAt text of its grammar,
  // and metadata of every JSON kind (full Unicode, numbers of every magnitude), or none.
  const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-fA-F]{${n}}$`));
  const uuid = fc.tuple(hex(8), hex(4), hex(4), hex(4), hex(12)).map((parts) => parts.join('-'));
  const body = fc.record(
    {
      eventId: uuid,
      playerId: uuid,
      eventType: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,63}$/),
      occurredAt: fc.constantFrom('2026-11-26T14:00:00Z', '2026-11-26T15:00:00.123456+01:00', '2026-11-26t14:00:00z'),
      metadata: fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ stringUnit: 'binary' })),
    },
    { requiredKeys: ['eventId', 'playerId', 'eventType', 'occurredAt'] },
  );

  test('the payload hash is the SHA-256 of the whole body canonicalized, and the metadata text its own', () => {
    fc.assert(
      fc.property(body, (b) => {
        const forms = eventCanonicalForms(b);
        expect(forms.payloadHash.toString('hex')).toBe(payloadHash(b).toString('hex'));
        expect(forms.metadataJson).toBe(b.metadata === undefined ? undefined : canonicalJson(b.metadata));
        // As ingest calls it: with the metadata text the metadata check wrote.
        const checked = b.metadata === undefined ? undefined : checkMetadata(b.metadata);
        if (checked?.ok) expect(eventCanonicalForms({ ...b, metadataJson: checked.canonical })).toEqual(forms);
      }),
      { numRuns: 500 },
    );
  });

  test('an empty metadata object is present, not absent', () => {
    const b = {
      eventId: '00000000-0000-4000-8000-000000000001',
      playerId: '00000000-0000-4000-8000-000000000002',
      eventType: 'match.won',
      occurredAt: '2026-11-26T14:00:00Z',
      metadata: {},
    };
    expect(eventCanonicalForms(b).metadataJson).toBe('{}');
    expect(eventCanonicalForms(b).payloadHash.equals(payloadHash(b))).toBe(true);
    const { metadata: _, ...without } = b;
    expect(eventCanonicalForms(without).payloadHash.equals(payloadHash(b))).toBe(false);
  });
});
