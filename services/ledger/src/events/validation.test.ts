import { create } from '@bufbuild/protobuf';
import { databaseClock } from '#runtime/clock.ts';
import { RecordEventRequestSchema } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { AppError } from '#runtime/errors.ts';
import { recordEventParams } from './validation.ts';

const clock = databaseClock;
const request = (metadataJson?: string) =>
  create(RecordEventRequestSchema, {
    keyHash: new Uint8Array(32),
    eventId: '00000000-0000-4000-8000-000000000001',
    playerId: '00000000-0000-4000-8000-000000000002',
    eventType: 'match.won',
    occurredAtMs: 1_764_000_000_000n,
    payloadHash: new Uint8Array(32),
    ...(metadataJson === undefined ? {} : { metadataJson }),
  });

function refusal(metadataJson: string): unknown {
  try {
    recordEventParams(request(metadataJson), clock, 600);
  } catch (error) {
    return error instanceof AppError ? { status: error.status, code: error.code } : error;
  }
  return undefined;
}

describe('recordEventParams: the metadata text', () => {
  test('absent, or an object text within 4,096 bytes, is passed on as it is', () => {
    expect(recordEventParams(request(), clock, 600).metadataJson).toBeUndefined();
    expect(recordEventParams(request('{}'), clock, 600).metadataJson).toBe('{}');
    const largest = `{"a":"${'é'.repeat(2044)}"}`;
    expect(Buffer.byteLength(largest)).toBe(4096);
    expect(recordEventParams(request(largest), clock, 600).metadataJson).toBe(largest);
  });

  test.each([
    ['not an object', '[1]'],
    ['empty', ''],
    ['over 4,096 UTF-8 bytes', `{"a":"${'é'.repeat(2045)}"}`],
  ])('%s: 400 invalid_metadata', (_, text) => {
    expect(refusal(text)).toEqual({ status: 400, code: 'invalid_metadata' });
  });
});

describe('recordEventParams: the decision id the caller proposed', () => {
  const withId = (bytes: number[]) => ({ ...request(), proposedDecisionId: Uint8Array.from(bytes) });
  const v4 = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x80, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07];

  test('a UUID (version 1 to 8, variant 10xx) is the decision id, marked as the caller’s', () => {
    expect(recordEventParams(withId(v4), clock, 600)).toMatchObject({
      decisionId: '12345678-9abc-4def-8001-020304050607',
      proposedByCaller: true,
    });
  });

  test('none, another length, or not a UUID by the rule: the ledger proposes one', () => {
    const nil = new Array(16).fill(0);
    const version0 = [...v4.slice(0, 6), 0x0d, ...v4.slice(7)];
    const variant11 = [...v4.slice(0, 8), 0xc0, ...v4.slice(9)];
    for (const bytes of [[], v4.slice(0, 15), nil, version0, variant11]) {
      const params = recordEventParams(withId(bytes), clock, 600);
      expect(params.proposedByCaller).toBe(false);
      expect(params.decisionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});
