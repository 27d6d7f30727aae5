// The edge batcher over the in-process transport, with a ledger endpoint that holds each RecordEvents request until
// the test releases it: that the keys' batches of a call travel as one RecordEvents request, that each outcome reaches
// its own event (an error outcome as the AppError RecordEvent would raise), and that batchMax 1 sends RecordEvent.
// Which events travel together is the keyed batcher's (services/runtime/src/batching/keyed-batcher.test.ts).
import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import type { AppError } from '#runtime/errors.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { isRepeatable } from '#runtime/transport/deadline.ts';
import { InProcessTransport } from '#runtime/transport/in-process.ts';
import { bind, type Transport } from '#runtime/transport/operation.ts';
import { uuidText } from '#runtime/validation/uuid.ts';
import { EdgeEventBatcher, type RecordEventInit } from './event-batcher.ts';
import { EVENT_OUTCOME_UNKNOWN, proposedDecisionId } from './event-decision.ts';
import { FALLBACK_MS } from './event-write-route.ts';
import { LedgerOutcomeError } from './record-events-wire.ts';

const ctx = { requestId: 'test' };
/** The decided event's eventId, from its GameEventResult text. */
const decidedId = (a: unknown) => JSON.parse(String((a as { json?: Buffer }).json)).eventId as string;
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
  const single: string[] = [];
  await transport.serve({
    service: 'ledger',
    version: '1.0.0',
    description: 'holds each RecordEvents request until released',
    endpoints: [
      bind(ledgerOps.recordEventsWithProposedIds, async (request) => {
        await new Promise<void>((release) =>
          held.push({
            eventIds: request.events.map((e) => e.eventId),
            keys: request.events.map((e) => e.keyHash[0]!),
            release,
          }),
        );
        // Each event answers its own id back (as the decision's eventId), so a mix-up would show; an event of type
        // `conflict` answers RecordEvent's 409, one of type `unanswered` ends the outcomes (none for it and after).
        const last = request.events.findIndex((e) => e.eventType === 'unanswered');
        return {
          outcomes: request.events.slice(0, last === -1 ? undefined : last).map((e) =>
            e.eventType === 'conflict'
              ? {
                  outcome: {
                    case: 'error' as const,
                    value: { status: 409, code: 'event_conflict', message: 'This eventId was already used.' },
                  },
                }
              : { outcome: { case: 'result' as const, value: { decision: { eventId: e.eventId }, replayed: false } } },
          ),
        };
      }),
      bind(ledgerOps.recordEventWithProposedId, async (request) => {
        single.push(request.eventId);
        return { decision: { eventId: request.eventId }, replayed: false };
      }),
    ],
  });
  return { transport, held, single };
}

const event = (key: number, eventType = 'a.win'): RecordEventInit => ({
  keyHash: keyHash(key),
  eventId: randomUUID(),
  eventType,
});

async function until(check: () => boolean) {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('EdgeEventBatcher', () => {
  it('several keys per request: one RecordEvents request, whole keys in line order, each answer to its event', async () => {
    const { transport, held } = await ledgerHoldingRequests();
    const sizes: number[] = [];
    const batcher = new EdgeEventBatcher(
      transport,
      { batchMax: 256, inFlightMax: 1, keysMax: 2 },
      { batch: (size) => sizes.push(size), queued: () => undefined },
    );
    try {
      const first = event(1);
      const firstAnswer = batcher.record(first, ctx);
      await until(() => held.length === 1);
      const waiting = [event(2), event(3), event(2), event(1), event(4), event(3), event(2)];
      const answers = waiting.map((e) => batcher.record(e, ctx));
      await new Promise((r) => setImmediate(r));
      held[0]!.release();
      expect(decidedId(await firstAnswer)).toBe(first.eventId);
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
      expect(decided.map(decidedId)).toEqual(waiting.map((e) => e.eventId));
      expect(sizes).toEqual([1, 5, 2]);
    } finally {
      for (const h of held) h.release();
      await transport.close();
    }
  });

  it('a key with more waiting than its share of a request has the rest in the next, which may leave with it', async () => {
    const { transport, held } = await ledgerHoldingRequests();
    const batcher = new EdgeEventBatcher(transport, { batchMax: 3, inFlightMax: 2, keysMax: 8 });
    try {
      const events = [event(1), event(1), event(1), event(1), event(2)];
      const answers = events.map((e) => batcher.record(e, ctx));
      await until(() => held.length === 2);
      // Both requests left in the same turn, each with events of key 1 (round robin: two of key 1 and key 2's one,
      // then key 1's rest).
      expect(held.map((h) => h.keys)).toEqual([
        [1, 1, 2],
        [1, 1],
      ]);
      for (const h of held) h.release();
      expect((await Promise.all(answers)).map(decidedId)).toEqual(events.map((e) => e.eventId));
    } finally {
      for (const h of held) h.release();
      await transport.close();
    }
  });

  it('an error outcome is the AppError RecordEvent raises; an event without an outcome is a 500', async () => {
    const { transport, held } = await ledgerHoldingRequests();
    const batcher = new EdgeEventBatcher(transport, { batchMax: 256, inFlightMax: 1, keysMax: 8 });
    try {
      const events = [event(1), event(2, 'conflict'), event(1), event(3, 'unanswered')];
      const answers = events.map((e) => batcher.record(e, ctx).catch((error: unknown) => error));
      await until(() => held.length === 1);
      held[0]!.release();
      const [a1, conflict, a2, unanswered] = await Promise.all(answers);
      expect([a1, a2].map(decidedId)).toEqual([events[0]!.eventId, events[2]!.eventId]);
      expect(conflict).toMatchObject({
        status: 409,
        code: 'event_conflict',
        message: 'This eventId was already used.',
      });
      expect(unanswered).toMatchObject({
        status: 500,
        code: 'internal_error',
        message: 'The ledger answered no outcome for the event.',
      });
    } finally {
      for (const h of held) h.release();
      await transport.close();
    }
  });

  it('batchMax 1 sends one RecordEvent per event', async () => {
    const { transport, held, single } = await ledgerHoldingRequests();
    const batcher = new EdgeEventBatcher(transport, { batchMax: 1, inFlightMax: 1, keysMax: 8 });
    try {
      const events = [event(1), event(1), event(2)];
      const answers = await Promise.all(events.map((e) => batcher.record(e, ctx)));
      expect(answers.map(decidedId)).toEqual(events.map((e) => e.eventId));
      expect(single).toEqual(events.map((e) => e.eventId));
      expect(held).toEqual([]);
    } finally {
      await transport.close();
    }
  });
});

describe('the subjects of event writes', () => {
  afterEach(() => jest.restoreAllMocks());

  /** A ledger that answers each event fresh on `operations` (a ledger of an earlier release: RecordEvent(s) only). */
  async function ledgerServing(earlierRelease: boolean) {
    const transport = new InProcessTransport(pino({ level: 'silent' }), createMetrics());
    const subjects: string[] = [];
    const answer = (e: { eventId: string; proposedDecisionId: Uint8Array }) => ({
      outcome: {
        case: 'result' as const,
        value: { decision: { id: earlierRelease ? randomUUID() : uuidText(e.proposedDecisionId), eventId: e.eventId } },
      },
    });
    const operations = earlierRelease
      ? [ledgerOps.recordEvents]
      : [ledgerOps.recordEvents, ledgerOps.recordEventsWithProposedIds];
    await transport.serve({
      service: 'ledger',
      version: '1.0.0',
      description: 'answers each event fresh',
      endpoints: operations.map((operation) =>
        bind(operation, async (request) => {
          subjects.push(operation.subject);
          return { outcomes: request.events.map(answer) };
        }),
      ),
    });
    return { transport, subjects };
  }

  it('are copied only on the proposed-id subject, which only a ledger that takes the ids serves', () => {
    expect(isRepeatable(ledgerOps.recordEventsWithProposedIds.subject)).toBe(true);
    expect(isRepeatable(ledgerOps.recordEventWithProposedId.subject)).toBe(true);
    expect(isRepeatable(ledgerOps.recordEvents.subject)).toBe(false);
    expect(isRepeatable(ledgerOps.recordEvent.subject)).toBe(false);
  });

  it('go to the proposed-id subject, or to RecordEvents (uncopied) while only earlier ledgers serve', async () => {
    for (const earlierRelease of [false, true]) {
      const { transport, subjects } = await ledgerServing(earlierRelease);
      const batcher = new EdgeEventBatcher(transport, { batchMax: 256, inFlightMax: 1, keysMax: 8 });
      try {
        const sent = { ...event(1), proposedDecisionId: proposedDecisionId() };
        expect(decidedId(await batcher.record(sent, ctx))).toBe(sent.eventId);
        const expected = earlierRelease ? ledgerOps.recordEvents : ledgerOps.recordEventsWithProposedIds;
        expect(subjects).toEqual([expected.subject]);
      } finally {
        await transport.close();
      }
    }
  });

  it('try the proposed-id subject again FALLBACK_MS after it found no ledger', async () => {
    const { transport, subjects } = await ledgerServing(true);
    let fallbacks = 0;
    const observer = { batch: () => undefined, queued: () => undefined, fallback: () => fallbacks++ };
    const batcher = new EdgeEventBatcher(transport, { batchMax: 256, inFlightMax: 1, keysMax: 8 }, observer);
    let now = 1000;
    jest.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      await batcher.record({ ...event(1), proposedDecisionId: proposedDecisionId() }, ctx);
      now += FALLBACK_MS - 1;
      // A ledger that takes the ids joins; the edge, falling back, does not try it yet.
      await transport.serve({
        service: 'ledger',
        version: '1.0.0',
        description: 'a ledger that takes the proposed ids, joined',
        endpoints: [
          bind(ledgerOps.recordEventsWithProposedIds, async (request) => {
            subjects.push('joined');
            return {
              outcomes: request.events.map((e) => ({
                outcome: { case: 'result' as const, value: { decision: { eventId: e.eventId } } },
              })),
            };
          }),
        ],
      });
      await batcher.record({ ...event(2), proposedDecisionId: proposedDecisionId() }, ctx);
      now += 1;
      await batcher.record({ ...event(3), proposedDecisionId: proposedDecisionId() }, ctx);
      expect(subjects).toEqual([ledgerOps.recordEvents.subject, ledgerOps.recordEvents.subject, 'joined']);
      // One fallback (the metric ingest_event_write_fallbacks_total and a warning), not one per request.
      expect(fallbacks).toBe(1);
    } finally {
      await transport.close();
    }
  });
});

describe('an answer of one of several copies', () => {
  /** A transport whose every RecordEvents answer came while copies were out, each event refused "nothing stored". */
  const copiedTransport = (copied: boolean) =>
    ({
      kind: 'nats',
      call: async (
        _operation: unknown,
        request: { events: unknown[] },
        _ctx: unknown,
        options?: { copied?: boolean },
      ) => {
        if (options) options.copied = copied;
        return request.events.map(
          () =>
            new LedgerOutcomeError(503, 'retry_later', 'The ledger is temporarily unavailable; nothing was stored.'),
        );
      },
    }) as unknown as Transport;

  it("answers a copy's 503 as of unknown outcome (another copy may still decide it); a lone request's as it is", async () => {
    for (const copied of [true, false]) {
      const batcher = new EdgeEventBatcher(copiedTransport(copied), { batchMax: 256, inFlightMax: 1, keysMax: 8 });
      const error = await batcher.record(event(1), ctx).catch((e: unknown) => e);
      expect({ copied, status: (error as AppError).status, message: (error as AppError).message }).toEqual({
        copied,
        status: 503,
        message: copied ? EVENT_OUTCOME_UNKNOWN : 'The ledger is temporarily unavailable; nothing was stored.',
      });
      batcher.close();
    }
  });
});
