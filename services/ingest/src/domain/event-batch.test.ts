import { EVENT_ANSWER_LOST } from '#runtime/contracts/event-answer-lost.ts';
import { EVENT_NOT_STORED, EVENT_OUTCOME_UNKNOWN } from '../routes/event-decision.ts';
import { BatchRetryVerdict } from './event-batch.ts';

// The whole-request 503 rule of a batch (CONTRACT section 11.1; docs/decisions.md, "Batch events"), on the messages
// the edge really answers.
const BUSY = 'Too many events are waiting; retry later. Nothing was stored.';
type Item = { decided: true } | { status: number; message: string };

function verdictOf(items: Item[]): string | undefined {
  const verdict = new BatchRetryVerdict({ answerLost: EVENT_ANSWER_LOST, mixed: EVENT_OUTCOME_UNKNOWN });
  for (const item of items) {
    if ('decided' in item) verdict.decided();
    else verdict.failed(item.status, item.message);
  }
  return verdict.wholeRequestMessage();
}

describe('BatchRetryVerdict', () => {
  it('answers one 503 with the events’ message when every event met the same 503', () => {
    const notStored = { status: 503, message: EVENT_NOT_STORED };
    expect(verdictOf([notStored])).toBe(EVENT_NOT_STORED);
    expect(verdictOf([notStored, notStored, notStored])).toBe(EVENT_NOT_STORED);
    const unknown = { status: 503, message: EVENT_OUTCOME_UNKNOWN };
    expect(verdictOf([unknown, unknown])).toBe(EVENT_OUTCOME_UNKNOWN);
  });

  it('answers the unknown outcome’s message when the events met different 503s', () => {
    expect(
      verdictOf([
        { status: 503, message: EVENT_NOT_STORED },
        { status: 503, message: BUSY },
      ]),
    ).toBe(EVENT_OUTCOME_UNKNOWN);
    expect(
      verdictOf([
        { status: 503, message: EVENT_OUTCOME_UNKNOWN },
        { status: 503, message: EVENT_NOT_STORED },
        { status: 503, message: EVENT_NOT_STORED },
      ]),
    ).toBe(EVENT_OUTCOME_UNKNOWN);
  });

  it('keeps the batch a 200 when any event was decided, even if every other met a 503', () => {
    expect(verdictOf([{ status: 503, message: EVENT_NOT_STORED }, { decided: true }])).toBeUndefined();
    expect(verdictOf([{ decided: true }, { status: 503, message: EVENT_NOT_STORED }])).toBeUndefined();
  });

  it('counts an event whose own decision’s answer was lost as decided', () => {
    const lost = { status: 503, message: EVENT_ANSWER_LOST };
    expect(verdictOf([lost])).toBeUndefined();
    expect(verdictOf([{ status: 503, message: EVENT_NOT_STORED }, lost])).toBeUndefined();
  });

  it('keeps the batch a 200 when an event got a final 4xx beside the 503s', () => {
    expect(
      verdictOf([
        { status: 503, message: EVENT_NOT_STORED },
        { status: 422, message: 'metadata is not valid' },
      ]),
    ).toBeUndefined();
    expect(verdictOf([{ status: 400, message: 'eventId must be a UUID' }])).toBeUndefined();
  });
});
