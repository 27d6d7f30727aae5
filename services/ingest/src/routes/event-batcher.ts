// Edge batching (issue #17, item 2): concurrent events of one ingest process travel to the ledger as one
// RecordEvents request, so NATS, protobuf and the round trip are paid once per batch.
//
// Smart batching, no timer: at most `inFlightMax` RecordEvents requests are in flight. An event that finds a free
// slot leaves at the end of the current event-loop turn (with every other event of its key that reached this point
// in the same turn); events that arrive while every slot is taken wait, and each reply sends the next request. At
// low load every request carries one event and nothing waits.
//
// Whole keys per request: a request holds the waiting events of the key that began to wait first (at most
// `batchMax`, in arrival order) and, behind it, the whole queues of the next keys in line, at most `keysMax` keys
// and `batchMax` events. A key's events never split over two requests that leave together, so each key's events
// reach the ledger as one batch, and the ledger decides the request's keys in one call of ledger.record_events (one
// transaction: services/ledger/src/events/batcher.ts). A key's events that wait while its request is out gather
// into its next request, which is what makes the ledger's batches larger under load.

import type { MessageInitShape } from '@bufbuild/protobuf';
import { toErrorCode } from '#runtime/contracts/error-codes.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import type { RecordEventRequestSchema, RecordEventResponse } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import type { CallContext, Transport } from '#runtime/transport/operation.ts';

export type RecordEventInit = MessageInitShape<typeof RecordEventRequestSchema>;

export interface EdgeBatcherOptions {
  /** Most events in one RecordEvents request (at most EVENT_LIMITS.eventsPerRequestMax, which the ledger accepts). */
  batchMax: number;
  /** RecordEvents requests in flight at once. */
  inFlightMax: number;
  /** Most keys in one request (whole waiting queues, in the order the keys began to wait). */
  keysMax: number;
}

export const EDGE_BATCH_MAX_DEFAULT: number = EVENT_LIMITS.edgeBatchDefault;
// 8, not 16: with fewer requests out, more of a key's events gather into its next request, so the ledger's batches
// are larger and each event costs less; measured with npm run bench:ledger on 2 CPUs, 50 games: 1.68 x pgbench on
// average over five runs with 8 against 1.46 over six with 16 (docs/benchmarks.md, "The edge's in-flight bound").
export const EDGE_IN_FLIGHT_MAX_DEFAULT = 8;
// 8, as the ledger's EVENT_GROUP_KEYS_MAX: a request is one call of ledger.record_events. More keys per request
// raise the peak but also the latency at half of it (docs/benchmarks.md, "One call for several games").
export const EDGE_KEYS_MAX_DEFAULT = 8;

export interface EdgeBatchObserver {
  /** A RecordEvents request left with this many events. */
  batch(size: number): void;
  /** Events waiting for a request. */
  queued(depth: number): void;
}

interface Waiting {
  request: RecordEventInit;
  ctx: CallContext;
  resolve: (reply: RecordEventResponse) => void;
  reject: (error: unknown) => void;
}

export class EdgeEventBatcher {
  private readonly transport: Transport;
  private readonly options: EdgeBatcherOptions;
  /** Waiting events per key (the key hash as a latin1 string), in arrival order. */
  private readonly queues = new Map<string, Waiting[]>();
  /** Events waiting in all queues. */
  private waiting = 0;
  private inFlight = 0;
  private flushScheduled = false;
  private readonly observer: EdgeBatchObserver | undefined;

  constructor(transport: Transport, options: EdgeBatcherOptions, observer?: EdgeBatchObserver) {
    if (!(options.batchMax >= 1 && options.inFlightMax >= 1 && options.keysMax >= 1)) {
      throw new Error(`invalid edge batcher options ${JSON.stringify(options)}`);
    }
    this.transport = transport;
    this.options = options;
    this.observer = observer;
  }

  /** Sends one event (in a batch); resolves with RecordEvent's reply or rejects with its error. */
  record(request: RecordEventInit, ctx: CallContext): Promise<RecordEventResponse> {
    if (this.options.batchMax === 1) return this.transport.call(ledgerOps.recordEvent, request, ctx);
    const hash = request.keyHash ?? new Uint8Array();
    const key = Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('latin1');
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) {
        // A Map iterates in insertion order: a key enters behind every key that waits already.
        queue = [];
        this.queues.set(key, queue);
      }
      queue.push({ request, ctx, resolve, reject });
      this.waiting++;
      this.observer?.queued(this.waiting);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushScheduled || this.inFlight >= this.options.inFlightMax || this.waiting === 0) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.inFlightMax && this.waiting > 0) {
      // The key that began to wait first (the Map's first entry).
      const [key, queue] = this.queues.entries().next().value as [string, Waiting[]];
      let batch = queue.length <= this.options.batchMax ? queue : queue.slice(0, this.options.batchMax);
      if (batch === queue) this.queues.delete(key);
      else queue.splice(0, batch.length); // its older events stay first in line
      // The next keys in line, whole, as long as they fit.
      for (let keys = 1; keys < this.options.keysMax && this.queues.size > 0; keys++) {
        const [nextKey, nextQueue] = this.queues.entries().next().value as [string, Waiting[]];
        if (batch.length + nextQueue.length > this.options.batchMax) break;
        this.queues.delete(nextKey);
        batch = batch.concat(nextQueue);
      }
      this.waiting -= batch.length;
      this.inFlight++;
      this.observer?.batch(batch.length);
      this.observer?.queued(this.waiting);
      void this.send(batch).finally(() => {
        this.inFlight--;
        // The events that queued while every slot was taken leave now.
        this.flush();
      });
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    try {
      // The first event's request id and trace travel in the headers; the ledger logs per request.
      const reply = await this.transport.call(
        ledgerOps.recordEvents,
        { events: batch.map((w) => w.request) },
        (batch[0] as Waiting).ctx,
      );
      batch.forEach((waiting, i) => {
        const outcome = reply.outcomes[i]?.outcome;
        if (outcome?.case === 'result') waiting.resolve(outcome.value);
        else if (outcome?.case === 'error') {
          waiting.reject(new AppError(outcome.value.status, toErrorCode(outcome.value.code), outcome.value.message));
        } else waiting.reject(new AppError(500, 'internal_error', 'The ledger answered no outcome for the event.'));
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
