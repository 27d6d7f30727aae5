import { classifyGameKey, issueKeyValue, issueLinkToken, LINK_TOKEN_PATTERN, sha256 } from './keys.ts';

describe('game keys', () => {
  it('issues secret and public keys in the spec format with a 6-character prefix and a SHA-256 hash', () => {
    for (const kind of ['secret', 'public'] as const) {
      const key = issueKeyValue(kind);
      expect(classifyGameKey(key.value)).toBe(kind);
      expect(key.value).toHaveLength(14 + 43);
      expect(key.prefix).toBe(key.value.slice(0, 20));
      expect(key.hash.equals(sha256(key.value))).toBe(true);
    }
  });

  it('never issues the same value twice', () => {
    const values = new Set(Array.from({ length: 1000 }, () => issueKeyValue('secret').value));
    expect(values.size).toBe(1000);
  });

  it('classifies malformed credentials as neither kind', () => {
    const valid = issueKeyValue('secret').value;
    expect(classifyGameKey(valid.slice(0, -1))).toBeUndefined();
    expect(classifyGameKey(`${valid}A`)).toBeUndefined();
    expect(classifyGameKey(valid.replace('cr_sk_', 'cr_xx_'))).toBeUndefined();
    expect(classifyGameKey(`${valid.slice(0, -1)}=`)).toBeUndefined();
  });

  it('issues link tokens in the spec format', () => {
    const token = issueLinkToken();
    expect(token.value).toMatch(LINK_TOKEN_PATTERN);
    expect(token.hash.equals(sha256(token.value))).toBe(true);
  });
});
