// The edge batcher over the in-process transport, with a ledger endpoint that holds each RecordEvents request until
// the test releases it: which events travel together, in which order, and that each answer reaches its own event.
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { InProcessTransport } from '#runtime/transport/in-process.ts';
import { bind } from '#runtime/transport/operation.ts';
import { EdgeEventBatcher, type RecordEventInit } from './event-batcher.ts';

const ctx = { requestId: 'test' };
const keyHash = (n: number) => new Uint8Array(32).fill(n);

interface Held {
  /** Event ids of the request, in its order. */
  eventIds: string[];
  keys: number[];
  release(): void;
}

async function ledgerHoldingRequests() {
  const transport = new InProcessTransport(pino({ level: 'silent' }), createMetrics());
  const held: Held[] = [];
  await transport.serve({
    service: 'ledger',
    version: '1.0.0',
    description: 'holds each RecordEvents request until released',
    endpoints: [
      bind(ledgerOps.recordEvents, async (request) => {
        await new Promise<void>((release) =>
          held.push({
            eventIds: request.events.map((e) => e.eventId),
            keys: request.events.map((e) => e.keyHash[0]!),
            release,
          }),
        );
        // Each event answers its own id back (as the decision's eventId), so a mix-up would show.
        return {
          outcomes: request.events.map((e) => ({
            outcome: { case: 'result' as const, value: { decision: { eventId: e.eventId }, replayed: false } },
          })),
        };
      }),
    ],
  });
  return { transport, held };
}

const event = (key: number): RecordEventInit => ({ keyHash: keyHash(key), eventId: randomUUID() });

async function until(check: () => boolean) {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('EdgeEventBatcher', () => {
  it('keysMax 1: one key per request, keys in the order they began to wait, a key’s events in arrival order', async () => {
    const { transport, held } = await ledgerHoldingRequests();
    const batcher = new EdgeEventBatcher(transport, { batchMax: 256, inFlightMax: 1, keysMax: 1 });
    try {
      // The first event takes the only slot; the others wait behind it.
      const first = event(1);
      const firstAnswer = batcher.record(first, ctx);
      await until(() => held.length === 1);
      const waiting = [event(2), event(3), event(2), event(1), event(3), event(2)];
      const answers = waiting.map((e) => batcher.record(e, ctx));
      await new Promise((r) => setImmediate(r));
      expect(held).toHaveLength(1);

      held[0]!.release();
      expect((await firstAnswer).decision?.eventId).toBe(first.eventId);
      // Then key 2 (its oldest event came first), then key 3, then key 1: one request each.
      for (const [i, key] of [2, 3, 1].entries()) {
        await until(() => held.length === i + 2);
        const request = held[i + 1]!;
        expect(request.keys.every((k) => k === key)).toBe(true);
        expect(request.eventIds).toEqual(waiting.filter((e) => e.keyHash![0] === key).map((e) => e.eventId));
        request.release();
      }
      const decided = await Promise.all(answers);
      expect(decided.map((a) => a.decision?.eventId)).toEqual(waiting.map((e) => e.eventId));
    } finally {
      for (const h of held) h.release();
      await transport.close();
    }
  });

  it('several keys per request: whole keys in the order they began to wait, at most keysMax of them', async () => {
    const { transport, held } = await ledgerHoldingRequests();
    const batcher = new EdgeEventBatcher(transport, { batchMax: 256, inFlightMax: 1, keysMax: 2 });
    try {
      const first = event(1);
      const firstAnswer = batcher.record(first, ctx);
      await until(() => held.length === 1);
      const waiting = [event(2), event(3), event(2), event(1), event(4), event(3), event(2)];
      const answers = waiting.map((e) => batcher.record(e, ctx));
      await new Promise((r) => setImmediate(r));
      held[0]!.release();
      expect((await firstAnswer).decision?.eventId).toBe(first.eventId);
      // Keys 2 and 3 (each whole, key by key), then keys 1 and 4.
      const ids = (keys: number[]) =>
        keys.flatMap((k) => waiting.filter((e) => e.keyHash![0] === k).map((e) => e.eventId));
      await until(() => held.length === 2);
      expect(held[1]!.eventIds).toEqual(ids([2, 3]));
      held[1]!.release();
      await until(() => held.length === 3);
      expect(held[2]!.eventIds).toEqual(ids([1, 4]));
      held[2]!.release();
      const decided = await Promise.all(answers);
      expect(decided.map((a) => a.decision?.eventId)).toEqual(waiting.map((e) => e.eventId));
    } finally {
      for (const h of held) h.release();
      await transport.close();
    }
  });

  it('splits a key’s waiting events at batchMax, oldest first; a next key joins only whole and if it fits', async () => {
    const { transport, held } = await ledgerHoldingRequests();
    const batcher = new EdgeEventBatcher(transport, { batchMax: 3, inFlightMax: 2, keysMax: 8 });
    try {
      const events = [event(7), event(7), event(7), event(7), event(7), event(8), event(9), event(9)];
      const answers = events.map((e) => batcher.record(e, ctx));
      // Two slots: key 7's three oldest (full: no other key fits), then its other two with key 8's event (key 9's
      // two would not fit whole).
      await until(() => held.length === 2);
      expect(held.map((h) => h.eventIds)).toEqual([
        events.slice(0, 3).map((e) => e.eventId),
        events.slice(3, 6).map((e) => e.eventId),
      ]);
      held[0]!.release();
      await until(() => held.length === 3);
      expect(held[2]!.eventIds).toEqual(events.slice(6).map((e) => e.eventId));
      for (const h of held) h.release();
      const decided = await Promise.all(answers);
      expect(decided.map((a) => a.decision?.eventId)).toEqual(events.map((e) => e.eventId));
    } finally {
      for (const h of held) h.release();
      await transport.close();
    }
  });
});
