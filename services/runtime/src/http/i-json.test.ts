import fc from 'fast-check';
import { payloadHash } from '../../../ingest/src/domain/canonical-json.ts';
import { parseIJson, scanMembers } from './i-json.ts';

const reasonOf = (text: string) => {
  const result = parseIJson(text);
  return result.ok ? null : result.reason;
};

describe('parseIJson', () => {
  it('answers JSON.parse value for I-JSON texts', () => {
    for (const text of [
      '{}',
      '[]',
      '0',
      '"text"',
      'null',
      '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}',
      '{"a:b":"c:d","e\\"":"\\\\","f\\\\":":"}',
      '{"__proto__":1,"constructor":2}',
      '{"emoji":"\\ud83d\\ude00","raw":"😀"}',
      '{"n":1e308,"m":-1e308,"tiny":1e-400,"long":0.1000000000000000055511151231257827}',
      ' { "spaced" : [ 1 , 2 ] } ',
    ]) {
      const result = parseIJson(text);
      expect({ text, result }).toEqual({ text, result: { ok: true, value: JSON.parse(text) } });
    }
  });

  it('refuses a duplicated member name, however it is spelled, at any depth', () => {
    for (const text of [
      '{"eventType":"unknown.thing","eventType":"level.completed"}',
      '{"a":1,"a":1}',
      '{"a":1,"\\u0061":2}',
      '{"x":[{"k":{},"k":{}}]}',
      '{"__proto__":1,"__proto__":2}',
      '{"":1,"":2}',
    ]) {
      expect({ text, reason: reasonOf(text) }).toEqual({ text, reason: expect.stringMatching(/duplicated member/) });
    }
  });

  it('refuses a lone surrogate in a string or a member name', () => {
    for (const text of ['"\\ud800"', '{"a":"x\\udc00"}', '{"\\ud83d":1}', '["\\ude00\\ud83d"]', '{"a":"\ud800"}']) {
      expect({ text, reason: reasonOf(text) }).toEqual({ text, reason: expect.stringMatching(/lone surrogate/) });
    }
  });

  it('refuses a number outside the range of a double', () => {
    for (const text of ['1e309', '{"n":-1e309}', '[1,2,1e400]', `{"n":1${'0'.repeat(400)}}`]) {
      expect({ text, reason: reasonOf(text) }).toEqual({ text, reason: expect.stringMatching(/IEEE 754/) });
    }
  });

  it('refuses what JSON.parse refuses', () => {
    for (const text of ['', '{', '{"a":1,}', "{'a':1}", 'NaN', '{"a" 1}', '"unterminated']) {
      expect(reasonOf(text)).toBe('The body is not valid JSON.');
    }
  });

  it('decodes escaped member names right after a name that V8 caches wrongly (nodejs/node#63785)', () => {
    // The poison: a member name `\` after a first member `h`; V8 then decodes the next escaped one-character
    // name after `h` as `\` again.
    for (const poison of ['{"h":[],"\\\\":0}', '{"h":[],"\\u005c":0}']) {
      expect(parseIJson(poison)).toEqual({ ok: true, value: { h: [], '\\': 0 } });
      for (const [text, value] of [
        ['{"h":1,"\\u0061":2}', { h: 1, a: 2 }],
        ['{"h":1,"\\"":2}', { h: 1, '"': 2 }],
        ['{"h":1,"\\u00e9":2}', { h: 1, é: 2 }],
        ['{"h":1,"\\n":2,"\\u000a":3}', null],
      ] as const) {
        const result = parseIJson(text);
        expect({ text, result }).toEqual({
          text,
          result: value === null ? { ok: false, reason: expect.stringMatching(/duplicated/) } : { ok: true, value },
        });
      }
    }
  });

  it('keeps a __proto__ member an own property on both paths', () => {
    for (const text of ['{"__proto__":{"x":1}}', '{"__proto__":{"x":1},"\\u0061":1}']) {
      const result = parseIJson(text);
      if (!result.ok) throw new Error(result.reason);
      const value = result.value as Record<string, unknown>;
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.keys(value)).toContain('__proto__');
      expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ x: 1 });
    }
  });

  it('leaves the RFC 8785 hash of a valid body as it was', () => {
    const text =
      '{"eventId":"0b8f7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b","playerId":"0b8f7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5c",' +
      '"eventType":"level.completed","occurredAt":"2026-11-23T13:20:00Z","metadata":{"b":[1.0,2e0],"a":"\\u00e9"}}';
    const result = parseIJson(text);
    if (!result.ok) throw new Error(result.reason);
    expect(payloadHash(result.value).toString('hex')).toBe(payloadHash(JSON.parse(text)).toString('hex'));
    expect(payloadHash(result.value).toString('hex')).toBe(
      'eb0618ae87e89cc42e4faabc92e268eaf73ae48691b123ce55ca4f1c408c063c',
    );
  });
});

// ---- Property: the verdict matches one computed from the structure the text was written from ----

type Node =
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'literal'; text: 'true' | 'false' | 'null' }
  | { kind: 'array'; items: Node[] }
  | { kind: 'object'; members: Array<[string, Node]> };

// Few names, so that duplicates are common; some need escapes, one is a lone surrogate, one looks like a separator.
const memberName = fc.constantFrom('a', 'b', 'ab', ':', 'x:y', '"', '\\', 'é', '😀', '\ud800', '__proto__', '');
const stringValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom(':', '":"', '\\', '\\"', '\ud83d', '\ude00', '\ud83d\ude00'),
);
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.integer().map(String),
  fc.constantFrom('1e309', '-1e309', '1e-400', '-0', '0.1e1', '123456789012345678901234567890', '1E+2'),
);

const { node } = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    stringValue.map((value): Node => ({ kind: 'string', value })),
    numberText.map((text): Node => ({ kind: 'number', text })),
    fc.constantFrom('true', 'false', 'null').map((text): Node => ({ kind: 'literal', text })),
    fc.array(tie('node'), { maxLength: 4 }).map((items): Node => ({ kind: 'array', items })),
    fc.array(fc.tuple(memberName, tie('node')), { maxLength: 5 }).map((members): Node => ({ kind: 'object', members })),
  ),
}));

/** Writes a string with a random mix of raw characters and escapes (`\u0061` and `a` are the same name). */
function writeString(value: string, choices: () => number): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const mustEscape = code === 0x22 || code === 0x5c || code < 0x20;
    const pick = choices();
    if (mustEscape || pick % 3 === 0) {
      const hex = code.toString(16).padStart(4, '0');
      out += `\\u${pick % 2 === 0 ? hex : hex.toUpperCase()}`;
    } else {
      out += value[i];
    }
  }
  return `${out}"`;
}

function write(n: Node, choices: () => number): string {
  const ws = () => [' ', '', '\n', '\t', '', '\r\n'][choices() % 6];
  switch (n.kind) {
    case 'string':
      return writeString(n.value, choices);
    case 'number':
    case 'literal':
      return n.text;
    case 'array':
      return `[${ws()}${n.items.map((item) => write(item, choices)).join(`${ws()},${ws()}`)}${ws()}]`;
    case 'object':
      return `{${ws()}${n.members
        .map(([name, value]) => `${writeString(name, choices)}${ws()}:${ws()}${write(value, choices)}`)
        .join(`${ws()},${ws()}`)}${ws()}}`;
  }
}

function problems(n: Node, found: Set<string>): Set<string> {
  switch (n.kind) {
    case 'string':
      if (!n.value.isWellFormed()) found.add('surrogate');
      break;
    case 'number':
      if (!Number.isFinite(Number(n.text))) found.add('range');
      break;
    case 'array':
      for (const item of n.items) problems(item, found);
      break;
    case 'object': {
      const names = n.members.map(([name]) => name);
      if (new Set(names).size !== names.length) found.add('duplicate');
      for (const [name, value] of n.members) {
        if (!name.isWellFormed()) found.add('surrogate');
        problems(value, found);
      }
      break;
    }
  }
  return found;
}

/** The value a correct parser makes of the written text (no duplicates here). */
function expectedValue(n: Node): unknown {
  switch (n.kind) {
    case 'string':
      return n.value;
    case 'number':
      return Number(n.text);
    case 'literal':
      return JSON.parse(n.text);
    case 'array':
      return n.items.map(expectedValue);
    case 'object':
      return Object.fromEntries(n.members.map(([name, value]) => [name, expectedValue(value)]));
  }
}

const REASON_PATTERN: Record<string, RegExp> = {
  duplicate: /duplicated member/,
  surrogate: /lone surrogate/,
  range: /IEEE 754/,
};

describe('parseIJson (property)', () => {
  it('refuses exactly the texts with a duplicate, a lone surrogate or an out-of-range number', () => {
    fc.assert(
      fc.property(node, fc.nat(), (tree, seed) => {
        // The writer's choices (escapes, whitespace) from a small linear congruential generator.
        let state = seed;
        const text = write(tree, () => {
          state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
          return state >>> 16;
        });
        const found = problems(tree, new Set());
        const result = parseIJson(text);
        if (found.size === 0) {
          // Not JSON.parse(text): V8's JSON.parse can decode an escaped member name wrongly (see i-json.ts).
          expect(result).toEqual({ ok: true, value: expectedValue(tree) });
        } else {
          expect(result.ok).toBe(false);
          if (!result.ok) expect([...found].some((problem) => REASON_PATTERN[problem]!.test(result.reason))).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('counts one separator per member written', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        let members = 0;
        const walk = (v: unknown): void => {
          if (Array.isArray(v)) v.forEach(walk);
          else if (v !== null && typeof v === 'object') {
            for (const item of Object.values(v)) {
              members++;
              walk(item);
            }
          }
        };
        walk(JSON.parse(text));
        expect(scanMembers(text).members).toBe(members);
      }),
    );
  });
});

// ---- Deferring the faults inside one member of the root object (CONTRACT section 10: an event's `metadata`) ----

describe('parseIJson with a deferred member', () => {
  const deferred = (text: string) => parseIJson(text, 'metadata');

  it('reports a lone surrogate or an out-of-range number inside the member, with the value', () => {
    for (const [text, value, reason] of [
      ['{"eventType":"a","metadata":{"s":"a\\ud800b"}}', { eventType: 'a', metadata: { s: 'a\ud800b' } }, /lone/],
      ['{"metadata":{"\\udc00":1}}', { metadata: { '\udc00': 1 } }, /lone/],
      ['{"metadata":{"n":1e400}}', { metadata: { n: Number.POSITIVE_INFINITY } }, /IEEE 754/],
      ['{"metadata":{"n":-1e400}}', { metadata: { n: Number.NEGATIVE_INFINITY } }, /IEEE 754/],
      ['{"metadata":{"a":[{"b":["x\\udc00"]}]}}', { metadata: { a: [{ b: ['x\udc00'] }] } }, /lone/],
      // Not an object: the caller's schema decides (then its schema error wins).
      ['{"metadata":"\\ud800"}', { metadata: '\ud800' }, /lone/],
      ['{"metadata":1e309,"x":1}', { metadata: Number.POSITIVE_INFINITY, x: 1 }, /IEEE 754/],
      // An escaped name is the same member, and the placeholder path renames every object, the member's included.
      [
        '{"\\u006detadata":{"\\u0061":"\\ud800","b":{"\\u0063":1}}}',
        { metadata: { a: '\ud800', b: { c: 1 } } },
        /lone/,
      ],
      [
        '{"x":{"\\u00e9":1},"metadata":{"n":1e400,"\\u00e9":[2]}}',
        { x: { é: 1 }, metadata: { n: Infinity, é: [2] } },
        /IEEE/,
      ],
    ] as const) {
      const result = deferred(text);
      expect({ text, result }).toEqual({
        text,
        result: { ok: false, member: 'metadata', reason: expect.stringMatching(reason), value },
      });
    }
  });

  it('keeps a valid body exactly as without deferral', () => {
    for (const text of [
      '{"metadata":{"s":"\\ud83d\\ude00","n":1e308}}',
      '{"a":1}',
      '[1]',
      '"\\u00e9"',
      '{"\\u00e9":{}}',
    ]) {
      expect(deferred(text)).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });

  it('does not defer a fault outside the member, a duplicate anywhere, or a fault in a nested member of that name', () => {
    for (const text of [
      '{"eventType":"\\ud800","metadata":{}}',
      '{"eventType":"\\ud800","metadata":{"s":"\\ud800"}}',
      '{"metadata":{"s":"\\ud800"},"eventType":"\\ud800"}',
      '{"metadata":{},"n":1e400}',
      '{"metadata\\ud800":{}}',
      '{"\\ud800":1,"metadata":{"n":1e400}}',
      '{"x":{"metadata":{"s":"\\ud800"}}}',
      '[{"metadata":{"s":"\\ud800"}}]',
      '{"metadata":{"a":1,"a":2}}',
      '{"metadata":{"s":"\\ud800","a":1,"a":2}}',
      '{"metadata":{"n":1e400,"\\u0061":1,"a":2}}',
      '{"metadata":{"s":"\\ud800"},"metadata":{}}',
      '{"metadata":{},"metadata":{"s":"\\ud800"}}',
      '{"metadata":{"s":"\\ud800"},"x":1,"x":2}',
    ]) {
      const result = deferred(text);
      expect({ text, result }).toEqual({ text, result: { ok: false, reason: expect.any(String) } });
    }
  });

  it('without deferral, the same faults are not I-JSON', () => {
    expect(parseIJson('{"metadata":{"s":"\\ud800"}}')).toEqual({ ok: false, reason: expect.stringMatching(/lone/) });
    expect(parseIJson('{"metadata":{"n":1e400}}')).toEqual({ ok: false, reason: expect.stringMatching(/IEEE/) });
  });

  it('property: defers exactly the faults inside the root member, and never a duplicate', () => {
    fc.assert(
      fc.property(node, node, fc.boolean(), fc.nat(), (inside, outside, metadataFirst, seed) => {
        // The root holds the member and, one level down, another member of the same name (never deferred).
        const root: Node = {
          kind: 'object',
          members: metadataFirst
            ? [
                ['metadata', inside],
                ['nested', { kind: 'object', members: [['metadata', outside]] }],
              ]
            : [
                ['nested', { kind: 'object', members: [['metadata', outside]] }],
                ['metadata', inside],
              ],
        };
        let state = seed;
        const text = write(root, () => {
          state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
          return state >>> 16;
        });
        const insideFaults = problems(inside, new Set());
        const outsideFaults = problems(outside, new Set());
        const result = parseIJson(text, 'metadata');
        if (outsideFaults.size > 0 || insideFaults.has('duplicate')) {
          expect(result).toEqual({ ok: false, reason: expect.any(String) });
        } else if (insideFaults.size > 0) {
          expect(result).toEqual({
            ok: false,
            member: 'metadata',
            reason: expect.stringMatching(/lone surrogate|IEEE 754/),
            value: expectedValue(root),
          });
        } else {
          expect(result).toEqual({ ok: true, value: expectedValue(root) });
        }
      }),
      { numRuns: 2000 },
    );
  });
});
