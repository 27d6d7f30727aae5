// The keyed batcher with a policy that records its calls and holds them until the test releases them: which events
// travel together, in which order, what a failed call becomes, and that each answer reaches its own event. The
// ledger's way (one call per key at a time, leaving at the end of the synchronous run) and the edge's (several calls
// of a key, leaving at the end of the loop turn). The decisions themselves are checked against PostgreSQL in
// test/integration/ingest/batching.test.ts; the edge end to end in test/integration/ingest/edge-batching.test.ts.
import { jest } from '@jest/globals';
import {
  BatcherClosedError,
  type BatchPolicy,
  KeyedBatcher,
  type KeyedBatcherOptions,
  QueueFullError,
  Rejected,
} from './keyed-batcher.ts';

/** An event: its key (a number) and its id; its answer is its id back, so a mix-up would show. */
interface Item {
  key: number;
  id: string;
  /** performance.now() time past which it must not be sent (the `late` option). */
  deadline?: number;
}
const item = (key: number, id: string): Item => ({ key, id });

interface Held {
  /** The call's events, key by key (`a1+a2` for two events of one key). */
  batches: string[];
  release(): void;
}

function harness(
  options: Omit<KeyedBatcherOptions, 'oneCallPerKey' | 'leave'>,
  way: 'ledger' | 'edge',
  failCalls?: 'the call failed' | 'unavailable',
) {
  const held: Held[] = [];
  let holding = false;
  const policy: BatchPolicy<Item, string> = {
    send: async (batches) => {
      const call: Held = { batches: batches.map((b) => b.map((e) => e.id).join('+')), release: () => undefined };
      held.push(call);
      if (holding) await new Promise<void>((release) => (call.release = release));
      if (failCalls && batches.length > 1) throw new Error(failCalls);
      return batches.map((b) => b.map((e) => e.id));
    },
    // As the ledger's recovery treats an unexpected failure: each event sent again alone; `unavailable` errors (the
    // database down) are answered as they are.
    recover: async (batch, error) => {
      if ((error as Error).message === 'unavailable') return batch.map(() => new Rejected(error));
      const results = [];
      for (const e of batch) results.push(...((await policy.send([[e]]))[0] as string[]));
      return results;
    },
  };
  const batcher = new KeyedBatcher(policy, {
    ...options,
    oneCallPerKey: way === 'ledger',
    leave: way === 'ledger' ? 'microtask' : 'turn',
    eagerCallsMax: way === 'ledger' ? 1 : undefined,
  });
  return {
    submit: (e: Item) => batcher.submit(String(e.key), e),
    submitAll: (key: number, events: Item[]) => batcher.submitAll(String(key), events),
    sizes: () => batcher.sizes,
    held,
    calls: () => held.map((h) => h.batches),
    hold: () => {
      holding = true;
    },
    release: (i?: number) => {
      if (i === undefined) holding = false;
      for (const h of i === undefined ? held : [held[i] as Held]) h.release();
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

/**
 * The calls out after the batcher's next turn (the policy records a call as it is sent). Two turns: at the edge a
 * call that ended sends its slot's next call at the end of the turn in which it ended, and the test's own turn may
 * have been queued first in that turn.
 */
async function callsAfterTurn(h: { held: Held[] }, n: number) {
  await turn();
  await turn();
  expect(h.held).toHaveLength(n);
}

describe('the ledger’s way: one call per key at a time, several keys in one call', () => {
  const ledger = (keysMax: number, concurrencyMax: number, failCalls?: 'the call failed' | 'unavailable') =>
    harness({ batchMax: 256, concurrencyMax, keysMax, queuedMax: 100 }, 'ledger', failCalls);

  test('keys that became ready while every slot was busy go together, each key its own batch', async () => {
    const h = ledger(8, 1);
    h.hold();
    const first = h.submit(item(1, 'a1'));
    await turn(); // a1 is out, the only slot taken
    const waiting = [
      h.submit(item(3, 'c1')),
      h.submit(item(2, 'b1')),
      h.submit(item(3, 'c2')),
      h.submit(item(1, 'a2')),
    ];
    await turn();
    h.release();
    expect(await Promise.all([first, ...waiting])).toEqual(['a1', 'c1', 'b1', 'c2', 'a2']);
    // a1 alone; then the three ready keys in one call, in the order they became ready (a's when a1 was done).
    expect(h.calls()).toEqual([['a1'], ['c1+c2', 'b1', 'a2']]);
  });

  test('keys ready together go in one call even while slots are free; one ready key goes alone', async () => {
    const h = ledger(8, 4);
    await Promise.all([1, 2, 3].map((k) => h.submit(item(k, `k${k}`))));
    await h.submit(item(4, 'alone'));
    expect(h.calls()).toEqual([['k1', 'k2', 'k3'], ['alone']]);
  });

  test('events whose deadline passed while they waited are answered with the late error, never sent', async () => {
    const late = { deadlineOf: (e: unknown) => (e as Item).deadline, error: () => new Error('late') };
    const h = harness({ batchMax: 256, concurrencyMax: 1, keysMax: 8, late }, 'ledger');
    h.hold();
    const first = h.submit(item(1, 'a1'));
    await turn(); // a1 is out, the only slot taken
    const passed = performance.now() - 1;
    const answers = Promise.allSettled([
      h.submit({ key: 1, id: 'a2', deadline: passed }),
      h.submit({ key: 2, id: 'b1', deadline: passed }),
      h.submit({ key: 2, id: 'b2', deadline: performance.now() + 60_000 }),
      h.submit({ key: 3, id: 'c1', deadline: passed }),
    ]);
    await turn();
    h.release();
    expect(await first).toBe('a1');
    expect((await answers).map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual([
      'late',
      'late',
      'b2',
      'late',
    ]);
    // Keys a and c had only late events: they left the line; b's call holds its one event in time.
    expect(h.calls()).toEqual([['a1'], ['b2']]);
  });

  test('a call holds at most keysMax keys; the next ready keys take the next free slot', async () => {
    const h = ledger(2, 4);
    await Promise.all([1, 2, 3, 4, 5].map((k) => h.submit(item(k, `k${k}`))));
    expect(h.calls()).toEqual([['k1', 'k2'], ['k3', 'k4'], ['k5']]);
  });

  test('a key waits for its call while others go; its events gather into its next batch', async () => {
    const h = harness({ batchMax: 2, concurrencyMax: 4, keysMax: 1 }, 'ledger');
    h.hold();
    const answers = [h.submit(item(1, 'a1')), h.submit(item(1, 'a2')), h.submit(item(1, 'a3'))];
    await turn();
    answers.push(h.submit(item(1, 'a4')), h.submit(item(2, 'b1')));
    await turn();
    // a1+a2 out; a3 (the rest of a's queue) and a4 wait for it; b1 takes a free slot.
    expect(h.calls()).toEqual([['a1+a2'], ['b1']]);
    h.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
    expect(h.calls()).toEqual([['a1+a2'], ['b1'], ['a3+a4']]);
  });

  test('a key with more waiting than its share gives the rest to its next batch: the keys behind it share the call', async () => {
    const h = harness({ batchMax: 4, concurrencyMax: 1, keysMax: 8 }, 'ledger');
    h.hold();
    const answers = [h.submit(item(1, 'a1'))];
    await turn(); // a1 out
    for (const id of ['a2', 'a3', 'a4', 'a5', 'a6', 'a7']) answers.push(h.submit(item(1, id)));
    answers.push(h.submit(item(2, 'b1')));
    await turn();
    h.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'b1']);
    // b began to wait first (a's events waited for a1's call); key 1's six do not fit whole, yet it takes the room
    // left (its three oldest) and its rest is its next batch.
    expect(h.calls()).toEqual([['a1'], ['b1', 'a2+a3+a4'], ['a5+a6+a7']]);
  });

  test('while a call is out, ready keys that do not fill a call wait for it and then go together', async () => {
    const h = ledger(8, 4);
    h.hold();
    const answers = [h.submit(item(1, 'a1'))];
    await turn(); // a1 out; three slots free
    answers.push(h.submit(item(2, 'b1')), h.submit(item(3, 'c1')));
    await turn();
    answers.push(h.submit(item(2, 'b2')));
    await turn();
    expect(h.calls()).toEqual([['a1']]); // two keys of the eight a call holds: they wait for a1's call
    h.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'b1', 'c1', 'b2']);
    expect(h.calls()).toEqual([['a1'], ['b1+b2', 'c1']]);
  });

  test('while a call is out, keys in line that fill a call (keysMax keys or batchMax events) take a free slot', async () => {
    const byKeys = ledger(2, 4);
    byKeys.hold();
    const answers = [byKeys.submit(item(1, 'a1'))];
    await turn();
    answers.push(byKeys.submit(item(2, 'b1')), byKeys.submit(item(3, 'c1')), byKeys.submit(item(4, 'd1')));
    await turn();
    // b and c fill a call of two keys and go while a1 is out; d alone waits for a call to end.
    expect(byKeys.calls()).toEqual([['a1'], ['b1', 'c1']]);
    byKeys.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'b1', 'c1', 'd1']);
    expect(byKeys.calls()).toEqual([['a1'], ['b1', 'c1'], ['d1']]);

    const byEvents = harness({ batchMax: 3, concurrencyMax: 4, keysMax: 8 }, 'ledger');
    byEvents.hold();
    const more = [byEvents.submit(item(1, 'a1'))];
    await turn();
    more.push(byEvents.submit(item(2, 'b1')), byEvents.submit(item(2, 'b2')));
    await turn();
    expect(byEvents.calls()).toEqual([['a1']]); // two events of the three a call holds
    more.push(byEvents.submit(item(3, 'c1')));
    await turn();
    expect(byEvents.calls()).toEqual([['a1'], ['b1+b2', 'c1']]);
    byEvents.release();
    expect(await Promise.all(more)).toEqual(['a1', 'b1', 'b2', 'c1']);
  });

  test('longBatchMin: a long batch goes in a call of its own, on a free slot; short keys neither ride in it nor wait for it', async () => {
    const h = harness({ batchMax: 256, concurrencyMax: 4, keysMax: 8, longBatchMin: 3 }, 'ledger');
    h.hold();
    const answers = [h.submit(item(1, 'a1'))];
    await turn(); // a1 out: a short call
    for (const id of ['a2', 'a3', 'a4', 'a5']) answers.push(h.submit(item(1, id)));
    answers.push(h.submit(item(2, 'b1')));
    await turn();
    expect(h.calls()).toEqual([['a1']]); // b1 waits for a short call (group commit); a's rest for its key's call
    h.release(0);
    await answers[0];
    await turn();
    // Key 1's four (a long batch) and b1 were in line together: b1 goes alone, and the long batch takes the next
    // free slot although a short call (b1's) is out.
    expect(h.calls()).toEqual([['a1'], ['b1'], ['a2+a3+a4+a5']]);
    h.release(1);
    await answers[5];
    answers.push(h.submit(item(3, 'c1')));
    await turn();
    expect(h.held[3]?.batches).toEqual(['c1']); // only the long call is out: c1 does not wait for it
    answers.push(h.submit(item(3, 'c2')), h.submit(item(4, 'd1')));
    await turn();
    expect(h.held).toHaveLength(4); // c1's short call is out: c2 and d1 wait for it
    h.release(3);
    await answers[6];
    await turn();
    expect(h.held[4]?.batches).toEqual(['d1', 'c2']); // d in line first; c2 joined the line when c1's call ended
    h.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'b1', 'c1', 'c2', 'd1']);
  });

  /** a1 alone while b1 and c1 (two keys) wait; released, b1 and c1 go as one call, which fails with `failCalls`. */
  async function failingCall(failCalls: 'the call failed' | 'unavailable') {
    const h = ledger(8, 1, failCalls);
    h.hold();
    const first = h.submit(item(1, 'a1'));
    await turn();
    const waiting = [h.submit(item(2, 'b1')), h.submit(item(3, 'c1'))];
    await turn();
    h.release();
    return { first, waiting, calls: h.calls };
  }

  test("a call's failure recovers each key's batch as if it had failed alone", async () => {
    const { first, waiting, calls } = await failingCall('the call failed');
    expect(await Promise.all([first, ...waiting])).toEqual(['a1', 'b1', 'c1']);
    expect(calls()).toEqual([['a1'], ['b1', 'c1'], ['b1'], ['c1']]);
  });

  test('a call that finds the database unavailable answers that error to each event, without trying again', async () => {
    const { first, waiting, calls } = await failingCall('unavailable');
    expect(await first).toBe('a1');
    for (const w of waiting) await expect(w).rejects.toThrow('unavailable');
    expect(calls()).toEqual([['a1'], ['b1', 'c1']]);
  });

  test('beyond queuedMax an event is refused at once; a recovery that throws answers its error', async () => {
    const refused = new KeyedBatcher<Item, string>(
      {
        send: async () => {
          throw new Error('the call failed');
        },
        recover: async () => {
          throw new Error('the recovery failed');
        },
      },
      { batchMax: 8, concurrencyMax: 1, keysMax: 1, oneCallPerKey: true, leave: 'microtask', queuedMax: 1 },
    );
    const first = refused.submit('1', item(1, 'a1'));
    await expect(refused.submit('1', item(1, 'a2'))).rejects.toThrow(QueueFullError);
    await expect(first).rejects.toThrow('the recovery failed');
  });
});

test('every key leaves the maps once its events are answered: a thousand keys seen once leave nothing behind', async () => {
  for (const way of ['ledger', 'edge'] as const) {
    const h = harness({ batchMax: 64, concurrencyMax: 2, keysMax: 8, keyInFlightMax: 4, queuedMax: 10_000 }, way);
    h.hold();
    const answers = Array.from({ length: 1000 }, (_, key) => h.submit(item(key, `k${key}`)));
    await turn();
    expect(h.sizes().line + h.sizes().out).toBeGreaterThan(0);
    h.release();
    expect(await Promise.all(answers)).toHaveLength(1000);
    expect(h.sizes()).toEqual({ line: 0, out: 0, keyInFlight: 0, queued: 0 });
  }
});

describe('the edge’s way: several calls of a key, leaving at the end of the loop turn', () => {
  const edge = (options: {
    batchMax: number;
    concurrencyMax: number;
    keysMax: number;
    keyInFlightMax?: number;
    longBatchMin?: number;
    pacer?: KeyedBatcherOptions['pacer'];
  }) => {
    const h = harness(options, 'edge');
    h.hold();
    return h;
  };
  const ids = (events: Item[], keys = [...new Set(events.map((e) => e.key))]) =>
    keys.flatMap((k) => events.filter((e) => e.key === k).map((e) => e.id));

  test('keysMax 1: one key per call, keys in the order they began to wait, a key’s events in arrival order', async () => {
    const h = edge({ batchMax: 256, concurrencyMax: 1, keysMax: 1 });
    const firstAnswer = h.submit(item(1, 'first'));
    await callsAfterTurn(h, 1);
    const waiting = [item(2, 'b1'), item(3, 'c1'), item(2, 'b2'), item(1, 'a1'), item(3, 'c2'), item(2, 'b3')];
    const answers = waiting.map(h.submit);
    await turn();
    expect(h.held).toHaveLength(1);
    h.release(0);
    expect(await firstAnswer).toBe('first');
    // Then key 2 (its oldest event came first), then key 3, then key 1: one call each.
    for (const [i, key] of [2, 3, 1].entries()) {
      await callsAfterTurn(h, i + 2);
      expect(h.held[i + 1]?.batches).toEqual([ids(waiting, [key]).join('+')]);
      h.release(i + 1);
    }
    expect(await Promise.all(answers)).toEqual(waiting.map((e) => e.id));
  });

  test('several keys per call: whole keys in the order they began to wait, at most keysMax of them', async () => {
    const h = edge({ batchMax: 256, concurrencyMax: 1, keysMax: 2 });
    const firstAnswer = h.submit(item(1, 'first'));
    await callsAfterTurn(h, 1);
    const waiting = [item(2, 'b1'), item(3, 'c1'), item(2, 'b2'), item(1, 'a1'), item(4, 'd1'), item(3, 'c2')];
    waiting.push(item(2, 'b3'));
    const answers = waiting.map(h.submit);
    await turn();
    h.release(0);
    expect(await firstAnswer).toBe('first');
    // Keys 2 and 3 (each whole, key by key), then keys 1 and 4.
    await callsAfterTurn(h, 2);
    expect(h.held[1]?.batches).toEqual(['b1+b2+b3', 'c1+c2']);
    h.release(1);
    await callsAfterTurn(h, 3);
    expect(h.held[2]?.batches).toEqual(['a1', 'd1']);
    h.release(2);
    expect(await Promise.all(answers)).toEqual(waiting.map((e) => e.id));
  });

  test('a call takes the keys in line in turn (round robin); a key with events left goes to the back', async () => {
    const h = edge({ batchMax: 3, concurrencyMax: 2, keysMax: 8 });
    const events = ['g1', 'g2', 'g3', 'g4', 'g5'].map((id) => item(7, id));
    events.push(item(8, 'h1'), item(9, 'i1'), item(9, 'i2'));
    const answers = events.map(h.submit);
    // Two slots: one event of each key, in the order they began to wait; then keys 7 and 9, which had events left,
    // in turn again (7 gives its second and third: 9 has no more).
    await callsAfterTurn(h, 2);
    expect(h.calls()).toEqual([
      ['g1', 'h1', 'i1'],
      ['g2+g3', 'i2'],
    ]);
    h.release(0);
    await callsAfterTurn(h, 3);
    expect(h.held[2]?.batches).toEqual(['g4+g5']);
    h.release();
    expect(await Promise.all(answers)).toEqual(events.map((e) => e.id));
  });

  test('a hot key shares each call with the quiet keys behind it, whatever its number of waiting events', async () => {
    const h = edge({ batchMax: 6, concurrencyMax: 1, keysMax: 8 });
    const firstAnswer = h.submit(item(1, 'first'));
    await callsAfterTurn(h, 1);
    const hot = Array.from({ length: 20 }, (_, i) => item(1, `a${i + 1}`));
    const waiting = [...hot.slice(0, 10), item(2, 'b1'), ...hot.slice(10), item(3, 'c1'), item(2, 'b2')];
    const answers = waiting.map(h.submit);
    await turn();
    h.release(0);
    expect(await firstAnswer).toBe('first');
    // Round robin over the three keys: a1 b1 c1, a2 b2, a3 (c has no more); the rest of key 1 fills the next calls.
    await callsAfterTurn(h, 2);
    expect(h.held[1]?.batches).toEqual(['a1+a2+a3', 'b1+b2', 'c1']);
    for (const [i, batch] of ['a4+a5+a6+a7+a8+a9', 'a10+a11+a12+a13+a14+a15', 'a16+a17+a18+a19+a20'].entries()) {
      h.release(i + 1);
      await callsAfterTurn(h, i + 3);
      expect(h.held[i + 2]?.batches).toEqual([batch]);
    }
    h.release();
    expect(await Promise.all(answers)).toEqual(waiting.map((e) => e.id));
  });

  test('keyInFlightMax: a key at its bound is passed over until a call of it ends; other keys still go', async () => {
    const h = edge({ batchMax: 256, concurrencyMax: 4, keysMax: 8, keyInFlightMax: 2 });
    const events = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => item(1, id));
    const answers = events.map(h.submit);
    await callsAfterTurn(h, 1);
    expect(h.calls()).toEqual([['a1+a2']]); // three slots free, but key 1 has two events out
    const b = h.submit(item(2, 'b1'));
    await callsAfterTurn(h, 2);
    expect(h.held[1]?.batches).toEqual(['b1']);
    h.release(0);
    await callsAfterTurn(h, 3);
    expect(h.held[2]?.batches).toEqual(['a3+a4']);
    h.release(2);
    await callsAfterTurn(h, 4);
    expect(h.held[3]?.batches).toEqual(['a5']);
    h.release();
    expect(await Promise.all([...answers, b])).toEqual([...events.map((e) => e.id), 'b1']);
  });

  test('longBatchMin: a key’s long batch goes in a request of its own; the short batches of other keys in another', async () => {
    const h = edge({ batchMax: 256, concurrencyMax: 4, keysMax: 8, longBatchMin: 3 });
    const events = ['a1', 'a2', 'a3', 'a4'].map((id) => item(1, id));
    events.push(item(2, 'b1'), item(1, 'a5'), item(3, 'c1'));
    const answers = events.map(h.submit);
    await callsAfterTurn(h, 2);
    expect(h.calls()).toEqual([['b1', 'c1'], ['a1+a2+a3+a4+a5']]);
    h.release();
    expect(await Promise.all(answers)).toEqual(events.map((e) => e.id));
  });

  test('pacer: a key it holds back keeps its place while other keys go, and leaves once its time has come', async () => {
    // The pause timer and performance.now() on jest's clock; the batcher's turns (setImmediate) stay real.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      await pacedKeyLeavesOnTime();
    } finally {
      jest.useRealTimers();
    }
  });

  async function pacedKeyLeavesOnTime() {
    let holdUntil = Number.POSITIVE_INFINITY;
    const ended: string[] = [];
    const h = edge({
      batchMax: 256,
      concurrencyMax: 4,
      keysMax: 8,
      pacer: {
        notBefore: (key, now) => (key === '1' ? holdUntil : now),
        ended: (batches) => {
          ended.push(batches.map((b) => `${b.key}:${b.size}`).join(','));
        },
      },
    });
    const a = ['a1', 'a2'].map((id) => h.submit(item(1, id)));
    const b = h.submit(item(2, 'b1'));
    await callsAfterTurn(h, 1);
    expect(h.calls()).toEqual([['b1']]); // key 1 is in line first, but held back
    h.release(0);
    expect(await b).toBe('b1');
    expect(ended).toEqual(['2:1']);
    holdUntil = performance.now() + 20;
    h.submit(item(3, 'c1')).catch(() => undefined);
    await callsAfterTurn(h, 2);
    expect(h.held[1]?.batches).toEqual(['c1']);
    // Nothing else ends to wake the batcher: its timer sends key 1 once the time has come, not before.
    jest.advanceTimersByTime(19);
    await callsAfterTurn(h, 2);
    jest.advanceTimersByTime(1);
    await callsAfterTurn(h, 3);
    expect(h.held[2]?.batches).toEqual(['a1+a2']);
    h.release();
    expect(await Promise.all(a)).toEqual(['a1', 'a2']);
  }

  test('pacer: a bound it names for a key is that key’s events in flight, below keyInFlightMax', async () => {
    let paced: number | undefined;
    const h = edge({
      batchMax: 256,
      concurrencyMax: 4,
      keysMax: 8,
      keyInFlightMax: 4,
      pacer: {
        notBefore: (_key, now) => now,
        inFlightMax: (key) => (key === '1' ? paced : undefined),
        ended: () => {},
      },
    });
    const first = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => h.submit(item(1, id)));
    await callsAfterTurn(h, 1);
    expect(h.calls()).toEqual([['a1+a2+a3+a4']]); // the batcher's own bound
    paced = 2;
    h.release(0);
    const more = ['a6', 'a7'].map((id) => h.submit(item(1, id)));
    const b = h.submit(item(2, 'b1'));
    await callsAfterTurn(h, 2);
    expect(h.held[1]?.batches).toEqual(['a5+a6', 'b1']); // key 1 at the pacer's bound; key 2 unbounded by it
    paced = undefined;
    h.release();
    await callsAfterTurn(h, 3);
    expect(h.held[2]?.batches).toEqual(['a7']);
    h.release();
    expect(await Promise.all([...first, ...more, b])).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'b1']);
  });

  test('submitAll: a key’s events travel as submit of each one would, their outcomes in order', async () => {
    const h = edge({ batchMax: 256, concurrencyMax: 2, keysMax: 8, keyInFlightMax: 3 });
    const group = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => item(1, id));
    const one = h.submit(item(2, 'b1'));
    const all = h.submitAll(1, group);
    const after = h.submit(item(1, 'a6'));
    // As five submits: key 2 in line first, then key 1's first three (its bound); a4, a5 and a6 wait for a call of it.
    await callsAfterTurn(h, 1);
    expect(h.calls()).toEqual([['b1', 'a1+a2+a3']]);
    h.release(0);
    await callsAfterTurn(h, 2);
    expect(h.held[1]?.batches).toEqual(['a4+a5+a6']);
    h.release();
    expect(await all).toEqual(group.map((e) => e.id));
    expect([await one, await after]).toEqual(['b1', 'a6']);
    expect(await h.submitAll(3, [])).toEqual([]);
  });
});

test('submitAll: an event without a result is a Rejected in its place; beyond queuedMax a QueueFullError', async () => {
  let release = (): void => undefined;
  const batcher = new KeyedBatcher<Item, string>(
    {
      send: async (batches) => {
        await new Promise<void>((r) => (release = r));
        return batches.map((b) => b.map((e) => (e.id === 'bad' ? new Rejected(new Error('refused')) : e.id)));
      },
      recover: async (batch, error) => batch.map(() => new Rejected(error)),
    },
    { batchMax: 8, concurrencyMax: 1, keysMax: 1, oneCallPerKey: true, leave: 'microtask', queuedMax: 3 },
  );
  const all = batcher.submitAll('1', [item(1, 'a1'), item(1, 'bad'), item(1, 'a3'), item(1, 'a4')]);
  await new Promise((r) => setImmediate(r));
  release();
  const outcomes = await all;
  expect(outcomes.slice(0, 3).map((o) => (o instanceof Rejected ? (o.error as Error).message : o))).toEqual([
    'a1',
    'refused',
    'a3',
  ]);
  expect(outcomes[3]).toBeInstanceOf(Rejected);
  expect((outcomes[3] as Rejected).error).toBeInstanceOf(QueueFullError);
});

describe('what a call’s end tells, late events, closing', () => {
  /** A policy that answers each event with its id, or fails every call. */
  const echo = (fail = false): BatchPolicy<Item, string> => ({
    send: async (batches) => {
      if (fail) throw new Error('the call failed');
      return batches.map((b) => b.map((e) => e.id));
    },
    recover: async (batch, error) => batch.map(() => new Rejected(error)),
  });
  const edgeWay = { batchMax: 8, concurrencyMax: 1, keysMax: 8, oneCallPerKey: false, leave: 'microtask' } as const;
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await turn();
  };

  test('the pacer is told of a call that failed, as of one that succeeded', async () => {
    const ended: string[] = [];
    const pacer = {
      notBefore: (_key: string, now: number) => now,
      ended: (batches: ReadonlyArray<{ key: string; size: number }>) => {
        ended.push(batches.map((b) => `${b.key}:${b.size}`).join(','));
      },
    };
    const failing = new KeyedBatcher<Item, string>(echo(true), { ...edgeWay, pacer });
    await expect(failing.submit('1', item(1, 'a1'))).rejects.toThrow('the call failed');
    expect(ended).toEqual(['1:1']);
  });

  test('an observer or a pacer that throws costs no event its answer, and rejects nothing unheard', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const reported = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const pacer = {
        notBefore: (_key: string, now: number) => now,
        ended: () => {
          throw new Error('the pacer’s fault');
        },
      };
      const observer = {
        sent: () => {
          throw new Error('the observer’s fault');
        },
      };
      for (const fail of [false, true]) {
        const batcher = new KeyedBatcher<Item, string>(echo(fail), { ...edgeWay, pacer }, observer);
        const answers = [batcher.submit('1', item(1, 'a1')), batcher.submit('2', item(2, 'b1'))];
        const settled = Promise.allSettled(answers);
        const outcome = await Promise.race([settled, turns(5).then(() => 'unsettled' as const)]);
        expect(outcome).not.toBe('unsettled');
        // The freed slot sends the next call.
        const next = batcher.submit('3', item(3, 'c1'));
        if (fail) await expect(next).rejects.toThrow('the call failed');
        else await expect(next).resolves.toBe('c1');
      }
      await turns(2);
      expect(unhandled).toEqual([]);
      const names = reported.mock.calls.map((args) => String(args[0]));
      expect(names.some((line) => line.includes('keyed_batcher_observer_threw'))).toBe(true);
      expect(names.some((line) => line.includes('keyed_batcher_pacer_threw'))).toBe(true);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      reported.mockRestore();
    }
  });

  test('late: each event’s deadline is read once, not at every call of its key', async () => {
    let reads = 0;
    const late = {
      deadlineOf: (e: unknown) => {
        reads++;
        return (e as Item).deadline;
      },
      error: () => new Error('late'),
    };
    const batcher = new KeyedBatcher<Item, string>(echo(), { ...edgeWay, batchMax: 4, late });
    const deadline = performance.now() + 60_000;
    const events = Array.from({ length: 400 }, (_, i) => ({ key: i % 2, id: `e${i}`, deadline }));
    const answers = events.map((e) => batcher.submit(String(e.key), e));
    expect(await Promise.all(answers)).toEqual(events.map((e) => e.id));
    expect(reads).toBe(events.length);
  });

  test('late: a late event behind one still in time is dropped; the key’s others keep their order', async () => {
    const late = { deadlineOf: (e: unknown) => (e as Item).deadline, error: () => new Error('late') };
    const h = harness({ batchMax: 256, concurrencyMax: 1, keysMax: 8, late }, 'ledger');
    h.hold();
    const first = h.submit(item(1, 'a1'));
    await turn(); // a1 is out, the only slot taken
    const now = performance.now();
    const answers = Promise.allSettled([
      h.submit({ key: 2, id: 'b1', deadline: now + 60_000 }),
      h.submit({ key: 2, id: 'b2', deadline: now - 1 }),
      h.submit({ key: 2, id: 'b3', deadline: now + 30_000 }),
      h.submit({ key: 2, id: 'b4' }),
    ]);
    await turn();
    h.release();
    expect(await first).toBe('a1');
    expect((await answers).map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual([
      'b1',
      'late',
      'b3',
      'b4',
    ]);
    expect(h.calls()).toEqual([['a1'], ['b1+b3+b4']]);
  });

  test('close: what waits is rejected, so is what comes after; the pause timer goes, and never held the process', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const timers = jest.spyOn(globalThis, 'setTimeout');
    try {
      const pacer = { notBefore: (key: string, now: number) => (key === '1' ? now + 60_000 : now), ended: () => {} };
      const batcher = new KeyedBatcher<Item, string>(echo(), { ...edgeWay, leave: 'turn', pacer });
      const paced = batcher.submit('1', item(1, 'a1'));
      expect(await batcher.submit('2', item(2, 'b1'))).toBe('b1');
      expect(jest.getTimerCount()).toBe(1); // the pause: key 1 waits for it
      const pause = timers.mock.results[0]?.value as NodeJS.Timeout;
      expect(pause.hasRef()).toBe(false);
      batcher.close();
      await expect(paced).rejects.toThrow(BatcherClosedError);
      await expect(batcher.submit('2', item(2, 'b2'))).rejects.toThrow(BatcherClosedError);
      expect(await batcher.submitAll('2', [item(2, 'b3')])).toEqual([expect.any(Rejected)]);
      expect(jest.getTimerCount()).toBe(0);
      batcher.assertConsistent();
    } finally {
      timers.mockRestore();
      jest.useRealTimers();
    }
  });
});
