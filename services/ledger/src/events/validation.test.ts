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
