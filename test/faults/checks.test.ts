// The fault suite's reading of 503 messages (test/faults/checks.ts): one function, adapted when the wording changes.
import {
  classifyUnavailableMessage,
  isFalseNothingStoredClaim,
  rowKey,
  type StoredRow,
  unknownOutcomeCopies,
} from './checks.ts';
import type { SentRequest } from './load.ts';

describe('classifyUnavailableMessage', () => {
  it.each([
    ['The ledger is temporarily unavailable; retry later. Nothing was changed.', 'nothing-stored'],
    ['The ledger is temporarily unavailable; retry later. Nothing was stored.', 'nothing-stored'],
    [
      'The outcome is unknown: the event may have been stored. Retry with the same eventId to get its decision.',
      'outcome-unknown',
    ],
    ['The ledger did not answer in time; retry with the same eventId.', 'outcome-unknown'],
    ['A dependency is temporarily unavailable; retry later.', 'unspecified'],
  ])('%s -> %s', (message, claim) => {
    expect(classifyUnavailableMessage(message)).toBe(claim);
  });
});

describe('isFalseNothingStoredClaim', () => {
  const GAME = '0b0e0c52-3a58-4a2f-9d5e-1f2a3b4c5d6e';
  const EVENT = 'evt-1';
  const HASH = 'a'.repeat(64);
  const NOTHING = 'The ledger is temporarily unavailable; retry later. Nothing was stored.';
  const UNKNOWN =
    'The outcome is unknown: the event may have been stored. Retry with the same eventId to get its decision.';
  let seq = 0;
  const sent = (sentAt: number, answeredAt: number, message: string): SentRequest => ({
    seq: seq++,
    kind: 'fresh',
    copy: { gameId: GAME, secret: 's', eventId: EVENT, body: '{}', hash: HASH },
    sentAt,
    answeredAt,
    answer: { status: 503, body: { error: { code: 'retry_later', message } }, retryAfter: '1' },
  });
  const rows = (createdAtMs: number): Map<string, StoredRow> =>
    new Map([
      [
        rowKey(GAME, EVENT),
        {
          id: 'row-1',
          gameId: GAME,
          eventId: EVENT,
          organizationId: 'o',
          playerId: 'p',
          eventType: 't',
          occurredAtMs: 0,
          status: 'accepted',
          reason: null,
          rewardCredits: 1,
          createdAtMs,
          hash: HASH,
        },
      ],
    ]);

  it('holds a "nothing stored" against a row whose transaction began while that request alone was out', () => {
    const claim = sent(1000, 1100, NOTHING);
    expect(isFalseNothingStoredClaim(claim, rows(1050), new Set(), unknownOutcomeCopies([claim]))).toBe(true);
    // A row made before it was sent, or after its answer, is another copy's doing.
    expect(isFalseNothingStoredClaim(claim, rows(900), new Set(), unknownOutcomeCopies([claim]))).toBe(false);
    expect(isFalseNothingStoredClaim(claim, rows(1200), new Set(), unknownOutcomeCopies([claim]))).toBe(false);
    // So is a row another request got as a fresh decision.
    expect(isFalseNothingStoredClaim(claim, rows(1050), new Set(['row-1']), unknownOutcomeCopies([claim]))).toBe(false);
  });

  it('does not, when another copy whose outcome is unknown was out as the row was made', () => {
    const claim = sent(1010, 1090, NOTHING);
    const unknown = sent(1000, 1120, UNKNOWN);
    const copies = unknownOutcomeCopies([claim, unknown]);
    expect(isFalseNothingStoredClaim(claim, rows(1080), new Set(), copies)).toBe(false);
    // A copy without an answer counts as unknown too.
    const lost: SentRequest = { ...sent(1000, 0, ''), answeredAt: undefined, answer: undefined, failure: 'timeout' };
    expect(isFalseNothingStoredClaim(claim, rows(1080), new Set(), unknownOutcomeCopies([claim, lost]))).toBe(false);
  });

  it('still does when the other copy also said nothing was stored, or was answered before the row was made', () => {
    const claim = sent(1010, 1090, NOTHING);
    const alsoNothing = sent(1000, 1120, NOTHING);
    expect(isFalseNothingStoredClaim(claim, rows(1080), new Set(), unknownOutcomeCopies([claim, alsoNothing]))).toBe(
      true,
    );
    const answeredEarlier = sent(1000, 1020, UNKNOWN);
    expect(
      isFalseNothingStoredClaim(claim, rows(1080), new Set(), unknownOutcomeCopies([claim, answeredEarlier])),
    ).toBe(true);
  });
});
