// The fault suite's reading of 503 messages (test/faults/checks.ts): one function, adapted when the wording changes.
import { classifyUnavailableMessage } from './checks.ts';

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
