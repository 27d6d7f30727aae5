// The edge's RecordEvents codec against the generated code of proto/rewards/v1/events.proto (the contract): the
// request's bytes are the generated encoder's, and the reply read from the generated encoder's bytes is what the
// generated decoder's messages give through edgeDecisionOf, for every field and both oneof cases, with unknown fields
// of every wire type at every level, repeated message fields merged, int64 beyond a double, and truncated bytes.
import { create, type DescMessage, fromBinary, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import fc from 'fast-check';
import {
  DecisionQuotaSchema,
  type RecordEventOutcome,
  RecordEventOutcomeSchema,
  RecordEventRequestSchema,
  RecordEventResponseSchema,
  RecordEventsRequestSchema,
  type RecordEventsResponse,
  RecordEventsResponseSchema,
} from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import {
  decodeRecordEventsReply,
  type EdgeEventRequest,
  type EdgeOutcome,
  edgeDecisionOf,
  encodeRecordEventsRequest,
  jsonScratchBytes,
  LedgerOutcomeError,
  SCRATCH_KEPT_MAX_BYTES,
} from './record-events-wire.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
// Characters JSON escapes (short and \u00xx forms) or leaves as they are, and multi-byte UTF-8.
const jsonSensitive = fc.string({
  unit: fc.constantFrom(
    '"',
    '\\',
    '\n',
    '\t',
    '\b',
    '\f',
    '\r',
    '\u0000',
    '\u0001',
    '\u001f',
    '\u007f',
    'é',
    '😀',
    '\u2028',
    '/',
    'a',
  ),
  maxLength: 12,
});
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  jsonSensitive,
  fc.constant(''),
);
const longText = fc.oneof(text, fc.string({ minLength: 120, maxLength: 300 }));
const bytes = fc.oneof(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 3 }));
// Safe integers, both sides of 2^53, and the int64 ends (a JSON number is a double: rewardCredits as Number()).
const int64 = fc.oneof(
  fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.constantFrom(0n, 1n, -1n, INT64_MIN, INT64_MAX, 2n ** 53n - 1n, -(2n ** 53n) + 1n, 2n ** 53n, -(2n ** 53n)),
);

const request = fc.record(
  {
    keyHash: bytes,
    eventId: text,
    playerId: text,
    eventType: text,
    occurredAtMs: fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.constantFrom(0, 1, -1, 1_798_000_000_000)),
    payloadHash: bytes,
    metadataJson: longText,
    proposedDecisionId: fc.oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ maxLength: 3 })),
  },
  { requiredKeys: [] },
);

describe('encodeRecordEventsRequest', () => {
  it('writes the bytes of the generated encoder, for any events', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 8 }), (events: EdgeEventRequest[]) => {
        const generated = toBinary(
          RecordEventsRequestSchema,
          create(RecordEventsRequestSchema, {
            events: events.map((e) => ({
              ...e,
              occurredAtMs: e.occurredAtMs === undefined ? undefined : BigInt(e.occurredAtMs),
            })),
          }),
        );
        expect(Buffer.from(encodeRecordEventsRequest({ events }))).toEqual(Buffer.from(generated));
      }),
      { numRuns: 500 },
    );
  });
});

/** Unknown fields of every wire type (a group among them), as the generated message's `$unknown`. */
const unknownFields = fc.array(
  fc.oneof(
    fc
      .record({ no: fc.integer({ min: 12, max: 5000 }), wireType: fc.constant(WireType.Varint), v: int64 })
      .map((f) => ({
        no: f.no,
        wireType: f.wireType,
        data: new BinaryWriter().int64(f.v).finish(),
      })),
    fc
      .record({ no: fc.integer({ min: 12, max: 5000 }), data: fc.uint8Array({ minLength: 8, maxLength: 8 }) })
      .map((f) => ({ ...f, wireType: WireType.Bit64 })),
    fc
      .record({ no: fc.integer({ min: 12, max: 5000 }), data: fc.uint8Array({ minLength: 4, maxLength: 4 }) })
      .map((f) => ({ ...f, wireType: WireType.Bit32 })),
    fc.record({ no: fc.integer({ min: 12, max: 5000 }), data: fc.uint8Array({ maxLength: 200 }) }).map((f) => ({
      no: f.no,
      wireType: WireType.LengthDelimited,
      data: new BinaryWriter().bytes(f.data).finish(),
    })),
    fc.integer({ min: 12, max: 5000 }).map((no) => ({
      no,
      wireType: WireType.StartGroup,
      // A group holding a varint and a nested group, then its end tag.
      data: new BinaryWriter()
        .tag(1, WireType.Varint)
        .uint32(7)
        .tag(2, WireType.StartGroup)
        .tag(2, WireType.EndGroup)
        .tag(no, WireType.EndGroup)
        .finish(),
    })),
  ),
  { maxLength: 3 },
);

const maybeUnknown = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc.tuple(arb, fc.option(unknownFields, { nil: undefined })).map(([value, $unknown]) => ({ ...value, $unknown }));

const decision = maybeUnknown(
  fc.record(
    {
      id: text,
      eventId: text,
      gameId: text,
      organizationId: text,
      playerId: text,
      eventType: text,
      occurredAt: text,
      status: fc.oneof(fc.constantFrom('accepted', 'rejected'), text),
      reason: text,
      rewardCredits: int64,
      createdAt: text,
    },
    { requiredKeys: [] },
  ),
);
const int32 = fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: 0, max: 100 }));
const quota = maybeUnknown(
  fc.record(
    {
      rateLimit: int32,
      rateRemaining: int32,
      rateResetSeconds: int32,
      dailyRemainingCredits: int64,
      budgetRemainingCredits: int64,
    },
    { requiredKeys: [] },
  ),
);
const result = maybeUnknown(fc.record({ decision, replayed: fc.boolean(), quota }, { requiredKeys: [] }));
const serviceError = maybeUnknown(
  fc.record(
    {
      status: fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.constantFrom(400, 401, 404, 409, 503)),
      code: text,
      message: longText,
      extraJson: fc.dictionary(text, text, { maxKeys: 2 }),
    },
    { requiredKeys: [] },
  ),
);
type OutcomeInit = MessageInitShape<typeof RecordEventsResponseSchema>['outcomes'];
const outcome = maybeUnknown(
  fc.oneof(
    result.map((value) => ({ outcome: { case: 'result' as const, value } })),
    serviceError.map((value) => ({ outcome: { case: 'error' as const, value } })),
    fc.constant({}),
  ),
);
const response = maybeUnknown(fc.record({ outcomes: fc.array(outcome, { maxLength: 6 }) }));

/** What the edge makes of the generated decoder's outcome. */
function expected(outcome: RecordEventOutcome): EdgeOutcome {
  const o = outcome.outcome;
  if (o.case === 'result') return edgeDecisionOf(o.value);
  if (o.case === 'error') return new LedgerOutcomeError(o.value.status, o.value.code, o.value.message);
  return undefined;
}

/** Both decoders on the same bytes: the same outcomes, the answers' JSON the same text (member order included). */
function expectSameDecoding(data: Uint8Array): void {
  let reference: RecordEventsResponse | undefined;
  try {
    reference = fromBinary(RecordEventsResponseSchema, data);
  } catch {
    reference = undefined;
  }
  if (reference === undefined) {
    expect(() => decodeRecordEventsReply(data)).toThrow();
    return;
  }
  const outcomes = decodeRecordEventsReply(data);
  const wanted = reference.outcomes.map(expected);
  expect(outcomes).toStrictEqual(wanted);
  // The JSON texts as text: toStrictEqual compared the bytes already; this shows a difference readably.
  const texts = (list: EdgeOutcome[]) => list.map((o) => (o instanceof LedgerOutcomeError ? o : o?.json?.toString()));
  expect(texts(outcomes)).toStrictEqual(texts(wanted));
}

const encode = (init: { outcomes?: OutcomeInit }) =>
  toBinary(RecordEventsResponseSchema, create(RecordEventsResponseSchema, init));

describe('decodeRecordEventsReply', () => {
  it('reads what the generated decoder reads, for any reply with unknown fields at every level', () => {
    fc.assert(
      fc.property(response, (init) => expectSameDecoding(encode(init as { outcomes?: OutcomeInit }))),
      { numRuns: 1000 },
    );
  });

  it('merges a message field that occurs twice, and keeps the last oneof case (as the generated decoder)', () => {
    fc.assert(
      fc.property(fc.array(outcome, { minLength: 1, maxLength: 3 }), (parts) => {
        // One outcome whose bytes are several outcomes' bytes one after the other: protobuf's merge.
        const body = Buffer.concat(
          parts.map((part) => toBinary(RecordEventOutcomeSchema, create(RecordEventOutcomeSchema, part as never))),
        );
        expectSameDecoding(new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(body).finish());
      }),
      { numRuns: 500 },
    );
  });

  it('refuses truncated bytes where the generated decoder does, and reads the same where it does not', () => {
    fc.assert(
      fc.property(response, fc.nat(), (init, cut) => {
        const data = encode(init as { outcomes?: OutcomeInit });
        expectSameDecoding(data.subarray(0, data.length === 0 ? 0 : cut % data.length));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a string that is not UTF-8, as the generated decoder does', () => {
    const valid = encode({ outcomes: [{ outcome: { case: 'result', value: { decision: { id: 'ab' } } } }] });
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80]]) {
      // The id's bytes replaced: lengths adjusted from the innermost message out.
      const id = Buffer.from(bad);
      const decision = Buffer.concat([Buffer.from([0x0a, id.length]), id]);
      const result = Buffer.concat([Buffer.from([0x0a, decision.length]), decision]);
      const outcome = Buffer.concat([Buffer.from([0x0a, result.length]), result]);
      const data = Buffer.concat([Buffer.from([0x0a, outcome.length]), outcome]);
      expect(() => fromBinary(RecordEventsResponseSchema, data)).toThrow();
      expectSameDecoding(data);
    }
    expectSameDecoding(valid);
  });

  it('refuses a length of 2^32 or more instead of reading it modulo 2^32', () => {
    // Field 1 (an outcome) of length 2^32: its low word, 0, would read an empty outcome.
    const length = [0x80, 0x80, 0x80, 0x80, 0x10];
    expect(() => decodeRecordEventsReply(Buffer.from([0x0a, ...length]))).toThrow('premature end of the message');
    // A length in 32 bits is read as before.
    expect(decodeRecordEventsReply(Buffer.from([0x0a, 0x00]))).toEqual([undefined]);
  });

  it('a scratch buffer grown for one large reply is not kept past its bound', () => {
    const small = encode({ outcomes: [{ outcome: { case: 'result', value: { decision: { id: 'ab' } } } }] });
    decodeRecordEventsReply(small);
    const kept = jsonScratchBytes();
    expect(kept).toBeLessThanOrEqual(SCRATCH_KEPT_MAX_BYTES);
    // Decisions whose JSON texts together pass the bound: each with a reason of 8 KiB.
    const reason = 'r'.repeat(8 * 1024);
    const outcomes = Array.from({ length: (2 * SCRATCH_KEPT_MAX_BYTES) / reason.length }, (_, i) => ({
      outcome: { case: 'result' as const, value: { decision: { id: `d${i}`, reason } } },
    }));
    const large = decodeRecordEventsReply(encode({ outcomes }));
    expect(large).toHaveLength(outcomes.length);
    expect(JSON.parse(String((large[7] as { json: Buffer }).json)).reason).toBe(reason);
    expect(jsonScratchBytes()).toBe(kept);
    expect(decodeRecordEventsReply(small)).toEqual(decodeRecordEventsReply(small));
  });

  it('reads an int64 as a number where it is a safe integer, as a BigInt beyond', () => {
    const reply = (credits: bigint) =>
      decodeRecordEventsReply(
        encode({
          outcomes: [
            {
              outcome: {
                case: 'result',
                value: { quota: { dailyRemainingCredits: credits, budgetRemainingCredits: -credits } },
              },
            },
          ],
        }),
      )[0];
    expect(reply(2n ** 53n - 1n)).toMatchObject({
      quota: { dailyRemainingCredits: 2 ** 53 - 1, budgetRemainingCredits: -(2 ** 53 - 1) },
    });
    expect(reply(2n ** 53n)).toMatchObject({
      quota: { dailyRemainingCredits: 2n ** 53n, budgetRemainingCredits: -(2n ** 53n) },
    });
  });
});

describe('the messages this codec reads and writes', () => {
  // The property tests above draw the fields this codec knows; a field added to the contract would go unread (or
  // unwritten) without failing them. This one fails instead, until the codec and its arbitraries know the field.
  const fields = (schema: DescMessage | undefined) => schema?.fields.map((f) => `${f.number}:${f.name}`);
  const messageOf = (schema: DescMessage, name: string) => schema.fields.find((f) => f.name === name)?.message;

  it('have exactly the fields it knows (proto/rewards/v1/events.proto and console.proto)', () => {
    expect(fields(RecordEventsRequestSchema)).toEqual(['1:events']);
    expect(fields(RecordEventRequestSchema)).toEqual([
      '1:key_hash',
      '2:event_id',
      '3:player_id',
      '4:event_type',
      '5:occurred_at_ms',
      '6:payload_hash',
      '7:metadata_json',
      '8:proposed_decision_id',
    ]);
    expect(fields(RecordEventsResponseSchema)).toEqual(['1:outcomes']);
    expect(fields(RecordEventOutcomeSchema)).toEqual(['1:result', '2:error']);
    expect(fields(messageOf(RecordEventOutcomeSchema, 'error'))).toEqual([
      '1:status',
      '2:code',
      '3:message',
      '4:extra_json',
    ]);
    expect(fields(RecordEventResponseSchema)).toEqual(['1:decision', '2:replayed', '3:quota']);
    expect(fields(messageOf(RecordEventResponseSchema, 'decision'))).toEqual([
      '1:id',
      '2:event_id',
      '3:game_id',
      '4:organization_id',
      '5:player_id',
      '6:event_type',
      '7:occurred_at',
      '8:status',
      '9:reason',
      '10:reward_credits',
      '11:created_at',
      // Read past: the event answer (the document's shape) has no game time (CONTRACT section 11.2).
      '12:game_time',
    ]);
    expect(fields(DecisionQuotaSchema)).toEqual([
      '1:rate_limit',
      '2:rate_remaining',
      '3:rate_reset_seconds',
      '4:daily_remaining_credits',
      '5:budget_remaining_credits',
    ]);
  });
});
