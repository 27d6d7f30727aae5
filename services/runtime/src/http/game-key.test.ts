import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { bearerGameKey } from './game-key.ts';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const randomPart = fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 43, maxLength: 43 });
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();
/** The reference rule: `Bearer` in any case, one space, a whole key. */
const REFERENCE = /^[Bb][Ee][Aa][Rr][Ee][Rr] (cr_(sk|pk)_sandbox_[A-Za-z0-9_-]{43})$/;

describe('bearerGameKey', () => {
  test('a well-formed header gives the kind and the SHA-256 of the key, whatever the letter case of Bearer', () => {
    fc.assert(
      fc.property(
        randomPart,
        fc.constantFrom('secret', 'public'),
        fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'),
        (random, kind, scheme) => {
          const value = `${kind === 'secret' ? 'cr_sk_sandbox_' : 'cr_pk_sandbox_'}${random}`;
          const key = bearerGameKey(`${scheme} ${value}`);
          expect(key?.kind).toBe(kind);
          expect(key?.hash.equals(sha256(value))).toBe(true);
        },
      ),
    );
  });

  test('any other header is refused: the parser agrees with the reference rule on arbitrary input', () => {
    const near = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      // Mutations of a valid header: a character changed, added or removed somewhere.
      fc
        .tuple(randomPart, fc.nat(70), fc.constantFrom('', ' ', 'x', '+', '/', '=', '\t', '\n', 'é'), fc.boolean())
        .map(([random, at, insert, drop]) => {
          const valid = `Bearer cr_sk_sandbox_${random}`;
          const i = at % (valid.length + 1);
          return valid.slice(0, i) + insert + valid.slice(drop ? i + 1 : i);
        }),
    );
    fc.assert(
      fc.property(near, (header) => {
        const match = REFERENCE.exec(header);
        const key = bearerGameKey(header);
        if (match) expect(key?.hash.equals(sha256(match[1]!))).toBe(true);
        else expect(key).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  test('missing and empty headers', () => {
    expect(bearerGameKey(undefined)).toBeUndefined();
    expect(bearerGameKey('')).toBeUndefined();
    expect(bearerGameKey('Bearer')).toBeUndefined();
    expect(bearerGameKey('Bearer ')).toBeUndefined();
  });
});
