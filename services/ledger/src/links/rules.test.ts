import { approvalRefusal, inspectionRefusal, intentRefusal, isValidExternalPlayerId } from './rules.ts';

const pending = { consumed: false, expired: false };

describe('link intent rules', () => {
  it('an unknown token is refused before anything else', () => {
    expect(intentRefusal(undefined)).toBe('unknown');
    expect(approvalRefusal(undefined, { linked: true }, true)).toBe('unknown');
  });

  it('a used token is refused as used even when it has also expired', () => {
    expect(intentRefusal({ consumed: true, expired: true })).toBe('used');
    expect(intentRefusal({ consumed: true, expired: false })).toBe('used');
    expect(intentRefusal({ consumed: false, expired: true })).toBe('expired');
    expect(intentRefusal(pending)).toBeUndefined();
  });

  it('the token is judged before the player, the player before the account', () => {
    expect(approvalRefusal({ consumed: false, expired: true }, { linked: true }, true)).toBe('expired');
    expect(approvalRefusal(pending, { linked: true }, true)).toBe('player_linked');
    expect(approvalRefusal(pending, { linked: false }, true)).toBe('account_linked');
    expect(approvalRefusal(pending, { linked: false }, false)).toBeUndefined();
  });

  it('inspection does not look at the account', () => {
    expect(inspectionRefusal(pending, { linked: false })).toBeUndefined();
    expect(inspectionRefusal(pending, { linked: true })).toBe('player_linked');
  });

  it('externalPlayerId: 1..200 code points without control characters', () => {
    for (const ok of ['a', 'x'.repeat(200), '🎮'.repeat(200), 'with space', 'ünï\u0080']) {
      expect(isValidExternalPlayerId(ok)).toBe(true);
    }
    for (const bad of ['', 'x'.repeat(201), '🎮'.repeat(201), 'a\u0000', 'a\tb', 'a\u001f', 'a\u007f']) {
      expect(isValidExternalPlayerId(bad)).toBe(false);
    }
  });
});
