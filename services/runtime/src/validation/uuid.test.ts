import fc from 'fast-check';
import { isUuid, UUID_PATTERN } from './uuid.ts';

describe('isUuid', () => {
  test.each([
    '00000000-0000-1000-8000-000000000000',
    '123e4567-e89b-12d3-a456-426614174000',
    '123E4567-E89B-42D3-B456-426614174000',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    '01890a5d-ac96-774b-bcce-b302099a8057', // v7
    '01890a5d-ac96-874b-9cce-b302099a8057', // v8
    '00000000-0000-0000-0000-000000000000', // nil
    'ffffffff-ffff-ffff-ffff-ffffffffffff', // max
    'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', // max, upper case
    'FFFFffff-ffff-FFFF-ffff-ffffffffffff', // max, mixed case
  ])('accepts %s', (s) => {
    expect(isUuid(s)).toBe(true);
  });

  test.each([
    ['version 0', '123e4567-e89b-02d3-a456-426614174000'],
    ['version 9', '123e4567-e89b-92d3-a456-426614174000'],
    ['version f (not max)', '123e4567-e89b-f2d3-a456-426614174000'],
    ['variant c', '123e4567-e89b-42d3-c456-426614174000'],
    ['variant 7', '123e4567-e89b-42d3-7456-426614174000'],
    ['variant 0', '123e4567-e89b-42d3-0456-426614174000'],
    ['almost nil', '00000000-0000-0000-0000-000000000001'],
    ['almost max', 'ffffffff-ffff-ffff-ffff-fffffffffffe'],
    ['no hyphens', '123e4567e89b42d3a456426614174000'],
    ['braces', '{123e4567-e89b-42d3-a456-426614174000}'],
    ['urn', 'urn:uuid:123e4567-e89b-42d3-a456-426614174000'],
    ['trailing newline', '123e4567-e89b-42d3-a456-426614174000\n'],
    ['leading space', ' 123e4567-e89b-42d3-a456-426614174000'],
    ['non-hex', '123e4567-e89b-42d3-a456-42661417400g'],
    ['too short', '123e4567-e89b-42d3-a456-42661417400'],
    ['empty', ''],
  ])('rejects %s', (_name, s) => {
    expect(isUuid(s)).toBe(false);
  });

  test('rejects non-strings', () => {
    for (const v of [null, undefined, 1, {}, [], ['00000000-0000-0000-0000-000000000000']]) {
      expect(isUuid(v)).toBe(false);
    }
  });

  test('pattern string compiles without flags and agrees with isUuid', () => {
    const re = new RegExp(UUID_PATTERN, 'u');
    fc.assert(
      fc.property(fc.uuid({ version: [1, 2, 3, 4, 5, 6, 7, 8] }), (u) => {
        expect(isUuid(u)).toBe(true);
        expect(isUuid(u.toUpperCase())).toBe(true);
        expect(re.test(u)).toBe(true);
      }),
    );
  });

  test('property: version nibble outside 1..8 or variant outside 8..b is rejected (unless nil/max)', () => {
    const hex = fc.constantFrom(...'0123456789abcdef');
    fc.assert(
      fc.property(fc.array(hex, { minLength: 32, maxLength: 32 }), (digits) => {
        const h = digits.join('');
        const u = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        const version = h[12]!;
        const variant = h[16]!;
        const expected = ('12345678'.includes(version) && '89ab'.includes(variant)) || /^0+$/.test(h) || /^f+$/.test(h);
        expect(isUuid(u)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
