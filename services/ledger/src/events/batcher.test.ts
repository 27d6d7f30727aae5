// The DecisionBatcher's grouping of keys (batcher.ts, "Several keys in one call"), with decide functions that
// record their calls: when groups form, in which order their keys go, and what happens when a group's call fails.
// (The call itself locks its games in the order of their ids: test/integration/ingest/batching.test.ts.)
// The decisions themselves are checked against PostgreSQL in test/integration/ingest/batching.test.ts.
import { type DecideBatch, type DecideGroup, DecisionBatcher, type RecoverFailedBatch } from './batcher.ts';
import type { RecordEventParams, RecordResult } from './repository.ts';

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
/** A decision of game `game-<key byte>` for every event. */
const decided = (p: RecordEventParams): RecordResult => ({
  outcome: 'decided',
  decision: {
    id: p.eventId,
    gameId: `game-${String(p.keyHash[0]).padStart(3, '0')}`,
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

function harness(options: {
  groupKeysMax: number;
  concurrencyMax: number;
  failGroups?: 'the group failed' | 'unavailable';
}) {
  const calls: string[][] = [];
  let release: (() => void) | undefined;
  let held = false;
  const decide: DecideBatch = async (batch) => {
    calls.push(batch.map((p) => p.eventId));
    if (held) await new Promise<void>((r) => (release = r));
    return batch.map(decided);
  };
  const decideGroup: DecideGroup = async (batches) => {
    calls.push(batches.map((b) => b.map((p) => p.eventId).join('+')));
    if (options.failGroups) throw new Error(options.failGroups);
    return batches.map((b) => b.map(decided));
  };
  // As recoverFailedBatch treats an unexpected failure: each event decided again alone; `unavailable` errors (the
  // database down) are answered as they are.
  const recover: RecoverFailedBatch = async (batch, error, again) => {
    if ((error as Error).message === 'unavailable') return batch.map(() => ({ error }));
    const results = [];
    for (const p of batch) results.push(((await again([p])) as RecordResult[])[0] as RecordResult);
    return results;
  };
  const batcher = new DecisionBatcher(
    decide,
    recover,
    { batchMax: 256, concurrencyMax: options.concurrencyMax, queuedMax: 100, groupKeysMax: options.groupKeysMax },
    { batch: () => undefined, queued: () => undefined },
    decideGroup,
  );
  return {
    batcher,
    calls,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      release?.();
    },
  };
}

describe('DecisionBatcher: several keys in one call', () => {
  test('keys that became ready while every connection was busy go together, each key its own batch', async () => {
    const h = harness({ groupKeysMax: 8, concurrencyMax: 1 });
    h.hold();
    const first = h.batcher.submit(event(1, 'a1'));
    await new Promise((r) => setImmediate(r)); // a1 is in the database, the only connection taken
    const waiting = [
      h.batcher.submit(event(3, 'c1')),
      h.batcher.submit(event(2, 'b1')),
      h.batcher.submit(event(3, 'c2')),
      h.batcher.submit(event(1, 'a2')),
    ];
    await new Promise((r) => setImmediate(r));
    h.release();
    const results = await Promise.all([first, ...waiting]);
    expect(results.map((r) => r.outcome)).toEqual(['decided', 'decided', 'decided', 'decided', 'decided']);
    // a1 alone; then the three ready keys in one call, in the order they became ready (a's when a1 was done).
    expect(h.calls).toEqual([['a1'], ['c1+c2', 'b1', 'a2']]);
  });

  test('keys ready together go in one call even while connections are free; one ready key goes alone', async () => {
    const h = harness({ groupKeysMax: 8, concurrencyMax: 4 });
    await Promise.all([1, 2, 3].map((k) => h.batcher.submit(event(k, `k${k}`))));
    await h.batcher.submit(event(4, 'alone'));
    expect(h.calls).toEqual([['k1', 'k2', 'k3'], ['alone']]);
  });

  test('a call holds at most groupKeysMax keys; the next ready keys take the next free connection', async () => {
    const h = harness({ groupKeysMax: 2, concurrencyMax: 4 });
    await Promise.all([1, 2, 3, 4, 5].map((k) => h.batcher.submit(event(k, `k${k}`))));
    expect(h.calls).toEqual([['k1', 'k2'], ['k3', 'k4'], ['k5']]);
  });

  /** a1 alone while b1 and c1 (two keys) wait; released, b1 and c1 go as one group, which fails with `failGroups`. */
  async function failingGroup(failGroups: 'the group failed' | 'unavailable') {
    const h = harness({ groupKeysMax: 8, concurrencyMax: 1, failGroups });
    h.hold();
    const first = h.batcher.submit(event(1, 'a1'));
    await new Promise((r) => setImmediate(r));
    const waiting = [h.batcher.submit(event(2, 'b1')), h.batcher.submit(event(3, 'c1'))];
    await new Promise((r) => setImmediate(r));
    h.release();
    return { first, waiting, calls: h.calls };
  }

  test("a group's failure decides each key's batch again alone", async () => {
    const { first, waiting, calls } = await failingGroup('the group failed');
    const results = await Promise.all([first, ...waiting]);
    expect(results.map((r) => r.outcome)).toEqual(['decided', 'decided', 'decided']);
    expect(calls).toEqual([['a1'], ['b1', 'c1'], ['b1'], ['c1']]);
  });

  test('a group that finds the database unavailable answers that error to each event, without trying again', async () => {
    const { first, waiting, calls } = await failingGroup('unavailable');
    expect((await first).outcome).toBe('decided');
    for (const w of waiting) await expect(w).rejects.toThrow('unavailable');
    expect(calls).toEqual([['a1'], ['b1', 'c1']]);
  });
});
