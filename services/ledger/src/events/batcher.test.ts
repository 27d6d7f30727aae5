// The ledger's side of batching (batcher.ts): where a call goes and what becomes of a failed batch (DecisionPolicy,
// recoverFailedBatch), and what the batcher reports. Which events travel together is the keyed batcher's
// (services/runtime/src/batching/keyed-batcher.test.ts); the decisions themselves are checked against PostgreSQL in
// test/integration/ingest/batching.test.ts.
import { Rejected } from '#runtime/batching/keyed-batcher.ts';
import { DecisionBatcher, DecisionPolicy } from './batcher.ts';
import { DatabaseUnavailableError, type RecordEventParams, type RecordResult } from './repository.ts';

const key = (n: number) => new Uint8Array(32).fill(n);
const event = (k: number, id: string): RecordEventParams => ({
  keyHash: key(k),
  eventId: id,
  playerId: '00000000-0000-4000-8000-000000000001',
  eventType: 'a.win',
  occurredAtMs: 0n,
  payloadHash: new Uint8Array(32),
  receivedAt: null,
  rateLimitPerMinute: 10,
});
const decided = (p: RecordEventParams): RecordResult => ({
  outcome: 'decided',
  decision: {
    id: p.eventId,
    gameId: `game-${p.keyHash[0]}`,
    organizationId: 'org',
    playerId: p.playerId,
    eventType: p.eventType,
    occurredAtMs: 0,
    status: 'accepted',
    reason: null,
    rewardCredits: 1n,
    createdAtMs: 0,
  },
});
const uniqueViolation = () => Object.assign(new Error('duplicate key'), { code: '23505' });

/** A repository whose calls are recorded; `fail` decides, per call, what it throws (nothing: each event decided). */
function repository(fail: (calls: number, events: string[]) => Error | undefined = () => undefined) {
  const calls: string[][] = [];
  const recordEventGroups = async (batches: RecordEventParams[][]) => {
    const events = batches.flat().map((p) => p.eventId);
    calls.push(events);
    const error = fail(calls.length, events);
    if (error) throw error;
    return batches.map((b) => b.map(decided));
  };
  return {
    calls,
    recordEventGroups,
    recordEvents: async (batch: RecordEventParams[]) => (await recordEventGroups([batch]))[0] as RecordResult[],
  };
}

const outcomes = (results: Array<RecordResult | Rejected>) =>
  results.map((r) => (r instanceof Rejected ? `error: ${(r.error as Error).message}` : r.outcome));

describe('DecisionPolicy: a call is one ledger.record_events; a failed batch is recovered', () => {
  test('a call sends the batches of its keys together', async () => {
    const store = repository();
    const results = await new DecisionPolicy(store).send([[event(1, 'a1'), event(1, 'a2')], [event(2, 'b1')]]);
    expect(results.map(outcomes)).toEqual([['decided', 'decided'], ['decided']]);
    expect(store.calls).toEqual([['a1', 'a2', 'b1']]);
  });

  test('the database unavailable: each event gets that error, nothing is tried again', async () => {
    const store = repository();
    const unavailable = new DatabaseUnavailableError(new Error('connection refused'), 'not_stored');
    const results = await new DecisionPolicy(store).recover([event(1, 'a1'), event(1, 'a2')], unavailable);
    expect(outcomes(results)).toEqual([
      'error: database unavailable: connection refused',
      'error: database unavailable: connection refused',
    ]);
    expect(store.calls).toEqual([]);
  });

  test('anything else: the events are decided again one by one, so one bad event fails alone', async () => {
    const store = repository((_, events) => (events[0] === 'a2' ? new Error('a bad value') : undefined));
    const warnings: string[] = [];
    const logger = { warn: (_: unknown, message: string) => warnings.push(message) };
    const policy = new DecisionPolicy(store, logger as never);
    const results = await policy.recover(
      [event(1, 'a1'), event(1, 'a2'), event(1, 'a3')],
      new Error('the call failed'),
    );
    expect(outcomes(results)).toEqual(['decided', 'error: a bad value', 'decided']);
    expect(store.calls).toEqual([['a1'], ['a2'], ['a3']]);
    expect(warnings).toEqual(['event batch failed; deciding its events one by one']);
  });

  test('an event alone: its own failure answers, but a unique violation is tried once more', async () => {
    const policy = new DecisionPolicy(repository());
    expect(outcomes(await policy.recover([event(1, 'a1')], new Error('a bad value')))).toEqual(['error: a bad value']);
    const store = repository((calls) => (calls === 1 ? uniqueViolation() : undefined));
    expect(outcomes(await new DecisionPolicy(store).recover([event(1, 'a1')], uniqueViolation()))).toEqual(['decided']);
    expect(store.calls).toEqual([['a1'], ['a1']]);
  });
});

describe('DecisionBatcher', () => {
  test('reports each key’s batch size, the keys of a call of several, and the events waiting', async () => {
    const sizes: number[] = [];
    const groups: number[] = [];
    const depths: number[] = [];
    const store = repository();
    const batcher = new DecisionBatcher(
      new DecisionPolicy(store),
      { batchMax: 256, concurrencyMax: 1, queuedMax: 100, groupKeysMax: 8 },
      { batch: (size) => sizes.push(size), group: (keys) => groups.push(keys), queued: (d) => depths.push(d) },
    );
    const results = await Promise.all([event(1, 'a1'), event(2, 'b1'), event(1, 'a2')].map((e) => batcher.submit(e)));
    expect(results.map((r) => r.outcome)).toEqual(['decided', 'decided', 'decided']);
    expect(store.calls).toEqual([['a1', 'a2', 'b1']]);
    expect(sizes).toEqual([2, 1]);
    expect(groups).toEqual([2]);
    expect(depths.at(-1)).toBe(0);
  });

  test('reports each call’s round trip, answered or failed', async () => {
    const durations: number[] = [];
    const store = repository((calls) =>
      calls === 2 ? new DatabaseUnavailableError(new Error('down'), 'not_stored') : undefined,
    );
    const batcher = new DecisionBatcher(
      new DecisionPolicy(store),
      { batchMax: 256, concurrencyMax: 1, queuedMax: 100 },
      { batch: () => {}, queued: () => {}, called: (seconds) => durations.push(seconds) },
    );
    await batcher.submit(event(1, 'a1'));
    await expect(batcher.submit(event(1, 'a2'))).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(durations).toHaveLength(2);
    for (const seconds of durations) expect(seconds).toBeGreaterThanOrEqual(0);
  });

  test('beyond queuedMax an event is refused at once (503 retry_later in the endpoint)', async () => {
    const batcher = new DecisionBatcher(new DecisionPolicy(repository()), {
      batchMax: 256,
      concurrencyMax: 1,
      queuedMax: 1,
    });
    const first = batcher.submit(event(1, 'a1'));
    await expect(batcher.submit(event(1, 'a2'))).rejects.toThrow('more than 1 events wait for the database');
    expect((await first).outcome).toBe('decided');
  });
});
