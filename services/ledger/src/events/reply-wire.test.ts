// The ledger's own encoder of its event replies and decision notices against the generated code of
// proto/rewards/v1/events.proto and notices.proto (the contract): for any decision, quota figures (int32 and int64 at
// their extremes, zero, negative), replay flag, reason (absent, empty, any text) and error, its bytes are exactly what
// `toBinary(Schema, create(Schema, ...))` writes of the message the ledger answered before it had this encoder.
import { create, fromBinary, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { DeveloperEventSchema } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import {
  type RecordEventOutcomeSchema,
  RecordEventResponseSchema,
  RecordEventsResponseSchema,
} from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { DecisionCommittedSchema } from '#runtime/contracts/gen/rewards/v1/notices_pb.ts';
import { AppError } from '#runtime/errors.ts';
import {
  type AnswerOutcome,
  type DecisionAnswer,
  encodeDecision,
  encodeRecordEventReply,
  encodeRecordEventsReply,
} from './reply-wire.ts';
import type { DecisionQuota, StoredDecision } from './repository.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const LAST_ISO_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

// Empty, ASCII, multi-byte UTF-8 and astral characters.
const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', ' ', 'é', '€', '😀', '\n', '"') });

const int64 = fc.oneof(
  fc.constantFrom(0n, 1n, -1n, 127n, 128n, INT64_MIN, INT64_MAX, 2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n),
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
);
const int32 = fc.oneof(fc.constantFrom(0, 1, -1, 127, 128, INT32_MIN, INT32_MAX), fc.integer());

const storedDecisionWithoutClock: fc.Arbitrary<StoredDecision> = fc.record({
  id: fc.oneof(fc.uuid(), text),
  gameId: fc.oneof(fc.uuid(), text),
  organizationId: fc.oneof(fc.uuid(), text),
  playerId: text,
  eventType: text,
  occurredAtMs: fc.integer({ min: 0, max: LAST_ISO_MS }),
  status: fc.constantFrom('accepted', 'rejected'),
  reason: fc.option(text, { nil: null }),
  rewardCredits: int64,
  createdAtMs: fc.integer({ min: 0, max: LAST_ISO_MS }),
});

// A fresh decision of a game whose clock was advanced carries its offset (CONTRACT section 11.2): game_time.
const storedDecision: fc.Arbitrary<StoredDecision> = fc
  .tuple(storedDecisionWithoutClock, fc.option(fc.integer({ min: 1, max: 315_360_000 }), { nil: undefined }))
  .map(([d, clockOffsetSeconds]) => (clockOffsetSeconds === undefined ? d : { ...d, clockOffsetSeconds }));

const quota: fc.Arbitrary<DecisionQuota> = fc.record({
  rateLimit: int32,
  rateRemaining: int32,
  rateResetSeconds: int32,
  dailyRemainingCredits: int64,
  budgetRemainingCredits: int64,
});

const appError = fc.constantFrom(
  new AppError('invalid_player', 'playerId is not a player of this game.'),
  new AppError('event_conflict', 'This eventId was already used with a different payload.'),
  new AppError('retry_later', 'The ledger is overloaded; retry later. Nothing was stored. 😀 "quoted"'),
  new AppError('internal_error', 'The service failed to handle the request.'),
);

interface Case {
  eventId: string;
  decision: StoredDecision;
  replayed: boolean;
  quota: DecisionQuota | undefined;
}

const answerCase: fc.Arbitrary<Case> = fc.record({
  eventId: fc.oneof(fc.uuid(), text),
  decision: storedDecision,
  replayed: fc.boolean(),
  quota: fc.option(quota, { nil: undefined }),
});

/** The records' DeveloperEvent of a decision, as the ledger made it with the generated code. */
function generatedEvent(eventId: string, d: StoredDecision) {
  return create(DeveloperEventSchema, {
    id: d.id,
    eventId,
    gameId: d.gameId,
    organizationId: d.organizationId,
    playerId: d.playerId,
    eventType: d.eventType,
    occurredAt: new Date(d.occurredAtMs).toISOString(),
    status: d.status,
    reason: d.reason ?? undefined,
    rewardCredits: d.rewardCredits,
    createdAt: new Date(d.createdAtMs).toISOString(),
    gameTime: d.clockOffsetSeconds ? new Date(d.createdAtMs + d.clockOffsetSeconds * 1000).toISOString() : '',
  });
}

const generatedResponse = (c: Case): MessageInitShape<typeof RecordEventResponseSchema> => ({
  decision: generatedEvent(c.eventId, c.decision),
  replayed: c.replayed,
  quota: c.quota,
});

const answerOf = (c: Case): DecisionAnswer => ({
  decision: encodeDecision(c.eventId, c.decision),
  replayed: c.replayed,
  quota: c.quota,
});

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe("the ledger's reply and notice encoder", () => {
  test('a decision notice is DecisionCommitted as the generated encoder writes it, its event the DeveloperEvent', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uuid(), text), storedDecision, (eventId, d) => {
        const encoded = encodeDecision(eventId, d);
        const event = generatedEvent(eventId, d);
        expect(hex(encoded.notice)).toBe(
          hex(toBinary(DecisionCommittedSchema, create(DecisionCommittedSchema, { decision: event }))),
        );
        expect(hex(encoded.event)).toBe(hex(toBinary(DeveloperEventSchema, event)));
        expect(fromBinary(DecisionCommittedSchema, encoded.notice).decision).toEqual(event);
      }),
      { numRuns: 500 },
    );
  });

  test("RecordEvent's reply is RecordEventResponse as the generated encoder writes it", () => {
    fc.assert(
      fc.property(answerCase, (c) => {
        const expected = toBinary(RecordEventResponseSchema, create(RecordEventResponseSchema, generatedResponse(c)));
        expect(hex(encodeRecordEventReply(answerOf(c)))).toBe(hex(expected));
      }),
      { numRuns: 500 },
    );
  });

  test("RecordEvents' reply is RecordEventsResponse: decisions and errors in order, none at all", () => {
    const outcome = fc.oneof(
      answerCase.map((c) => ({ c, error: undefined })),
      appError.map((error) => ({ c: undefined, error })),
    );
    fc.assert(
      fc.property(fc.array(outcome, { maxLength: 40 }), (outcomes) => {
        const generated = outcomes.map(
          ({ c, error }): MessageInitShape<typeof RecordEventOutcomeSchema> =>
            c
              ? { outcome: { case: 'result', value: generatedResponse(c) } }
              : {
                  outcome: {
                    case: 'error',
                    value: { status: error?.status, code: error?.code, message: error?.message },
                  },
                },
        );
        const ours = outcomes.map(({ c, error }): AnswerOutcome => (c ? answerOf(c) : (error as AppError)));
        const expected = toBinary(
          RecordEventsResponseSchema,
          create(RecordEventsResponseSchema, { outcomes: generated }),
        );
        expect(hex(encodeRecordEventsReply(ours))).toBe(hex(expected));
      }),
      { numRuns: 300 },
    );
  });

  test('a decision with a reason that is empty is not one without a reason (optional string presence)', () => {
    const d: StoredDecision = {
      id: '0192f0c4-0000-7000-8000-000000000001',
      gameId: '0192f0c4-0000-7000-8000-000000000002',
      organizationId: '0192f0c4-0000-7000-8000-000000000003',
      playerId: 'player-1',
      eventType: 'match_won',
      occurredAtMs: Date.UTC(2026, 10, 29),
      status: 'rejected',
      reason: '',
      rewardCredits: 0n,
      createdAtMs: Date.UTC(2026, 10, 29, 0, 0, 1),
    };
    const withEmpty = fromBinary(DecisionCommittedSchema, encodeDecision('e', d).notice).decision;
    const without = fromBinary(DecisionCommittedSchema, encodeDecision('e', { ...d, reason: null }).notice).decision;
    expect(withEmpty?.reason).toBe('');
    expect(without?.reason).toBeUndefined();
  });
});
