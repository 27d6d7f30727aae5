// Edge batching: concurrent events of one ingest process travel to the ledger as one
// RecordEvents request, so NATS, protobuf and the round trip are paid once per batch. Which events travel together
// is the keyed batcher's (#runtime/batching/keyed-batcher.ts, the ledger's algorithm too); this file says where a
// call goes (RecordEventsPolicy) and sets the batcher up the edge's way.
//
// Smart batching, no timer: at most `inFlightMax` RecordEvents requests are in flight. An event that finds a free
// slot leaves at the end of the current event-loop turn (with every other event of its key that reached this point
// in the same turn); events that arrive while every slot is taken wait, and each reply sends the next request. At
// low load every request carries one event and nothing waits.
//
// Keys per request: a request takes the keys in line in turn, one event of each, then a second of each, ... (round
// robin, the keyed batcher's rule below), at most `keysMax` keys and `batchMax` events, each key's events in arrival
// order and together (one batch per key in the request). The ledger decides a request's keys in one call of
// ledger.record_events (one transaction: services/ledger/src/events/batcher.ts). A key with more events waiting than
// its share of a request keeps the rest in line; with another slot free, the next request leaves in the same turn
// with them, so a key's events can split over two requests that leave together. A key's events that wait while its
// requests are out gather into its next request, which is what makes the ledger's batches larger under load (unlike
// the ledger, a key may have several requests out: `oneCallPerKey` off).
//
// Fair ingest: a request takes the keys in line in turn (round robin, the keyed batcher's rule), so a
// flooding game's thousands of waiting events and a quiet game's one share the next request; and at most
// `keyInFlightMax` events of one key are in requests out at once. Past that bound a key's events wait here, in its
// queue, for a request of it to end (they are not refused: docs/decisions.md, "Fair ingest"), so a flood holds at most
// that many events in the ledger's queue and transactions, ahead of other games' events. A "key" here is a queue:
// its game's once the edge knows the game of the event's credential (key-tenants.ts), so a game's share does not
// grow with its keys; the credential's own until then. And while other queues' requests are slow, a flooding queue's
// are spaced out (`pacer`, flood-pacer.ts): a flood's events then leave CPU to the others.

import type { KeyPacer } from '#runtime/batching/key-pacer.ts';
import { type BatchPolicy, batchKey, KeyedBatcher, type Outcome, Rejected } from '#runtime/batching/keyed-batcher.ts';
import { toErrorCode } from '#runtime/contracts/error-codes.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import { type CallContext, type CallOptions, callWired, type Transport } from '#runtime/transport/operation.ts';
import { EVENT_OUTCOME_UNKNOWN } from './event-decision.ts';
import { EventWriteRoute } from './event-write-route.ts';
import { FLOOD_PACER_DEFAULTS, FloodPacer, type FloodPacerObserver } from './flood-pacer.ts';
import {
  type EdgeDecision,
  type EdgeEventRequest,
  edgeDecisionOf,
  LedgerOutcomeError,
  recordEventsAtEdge,
  recordEventsAtEdgeUncopied,
} from './record-events-wire.ts';

/** One event's RecordEventRequest as the edge holds it (the edge's codec writes it: record-events-wire.ts). */
export type RecordEventInit = EdgeEventRequest;

export interface EdgeBatcherOptions {
  /** Most events in one RecordEvents request (at most EVENT_LIMITS.eventsPerRequestMax, which the ledger accepts). */
  batchMax: number;
  /** RecordEvents requests in flight at once. */
  inFlightMax: number;
  /** Most keys in one request (taken in turn, in the order the keys began to wait). */
  keysMax: number;
  /** Most events of one key in requests out at once; the rest wait at the edge. Default 32 (below). */
  keyInFlightMax?: number | undefined;
  /** Spaces out a flooding key's requests while other keys' are slow (flood-pacer.ts). Default: none. */
  pacer?: KeyPacer | undefined;
}

// 2: while other games' RecordEvents requests take more than twice their quiet round trip, a flood's are spaced out
// (npm run bench:fair: docs/reliability.md, "Fair ingest"; INGEST_FLOOD_PACING_TARGET_PERCENT).
export const EDGE_FLOOD_PACING_TARGET_DEFAULT = 2;

/**
 * The edge's flood pacer with a target (other keys' round trip over the quiet one), or none for target 0. A flood's
 * calls fill its key's in-flight bound (`keyInFlightMax`): a game server's batch request of 20 events is a long batch
 * (it travels with long batches) but not a flood's.
 */
export function edgeFloodPacer(
  target: number,
  keyInFlightMax: number,
  observer?: FloodPacerObserver,
): FloodPacer | undefined {
  if (target === 0) return undefined;
  const longBatchMin = EVENT_LIMITS.longBatchMin;
  const floodBatchMin = Math.max(longBatchMin, keyInFlightMax);
  return new FloodPacer({ ...FLOOD_PACER_DEFAULTS, longBatchMin, floodBatchMin, target }, observer);
}

export const EDGE_BATCH_MAX_DEFAULT: number = EVENT_LIMITS.edgeBatchDefault;
// 8, not 16: with fewer requests out, more of a key's events gather into its next request, so the ledger's batches
// are larger and each event costs less (measured with npm run bench:ledger: docs/benchmarks.md, "The edge's in-flight
// bound").
export const EDGE_IN_FLIGHT_MAX_DEFAULT = 8;
// 8, at most the ledger's EVENT_GROUP_KEYS_MAX (16): a request is one call of ledger.record_events. More keys per
// request raise the peak but also the latency at half of it (docs/benchmarks.md, "One call for several games").
export const EDGE_KEYS_MAX_DEFAULT = 8;
// 32, two long batches (EVENT_LIMITS.longBatchMin): each of a flooding game's replies answers at most 32 of its HTTP
// requests in one event-loop turn of the edge. Against 128, npm run bench:fair measured another game's p99 beside the
// flood a third of what it was, for a few per cent of the flooding game's own rate (docs/reliability.md, "Fair
// ingest"). While the flood is paced its bound is one long batch (16: flood-pacer.ts, inFlightMax). A batch request of
// 100 events (CONTRACT section 11.1) travels in four requests, one after the other.
export const EDGE_KEY_IN_FLIGHT_MAX_DEFAULT: number = 2 * EVENT_LIMITS.longBatchMin;

export interface EdgeBatchObserver {
  /** A RecordEvents request left with this many events. */
  batch(size: number): void;
  /** Events waiting for a request. */
  queued(depth: number): void;
  /**
   * No ledger served the proposed-id event subjects: event writes go to RecordEvent(s), uncopied, for FALLBACK_MS
   * (event-write-route.ts).
   */
  fallback?(): void;
}

interface EdgeEvent {
  request: RecordEventInit;
  ctx: CallContext;
}

/**
 * The edge's batch policy: a call is one RecordEvents request (the batches of its keys, flattened, with the first
 * event's request id and trace in the headers), each event answered by its own outcome, read by the edge's codec
 * straight into the answer's shape (record-events-wire.ts); when the request fails as a whole, every event of it
 * gets that error.
 */
class RecordEventsPolicy implements BatchPolicy<EdgeEvent, EdgeDecision> {
  private readonly transport: Transport;
  private readonly route: EventWriteRoute;

  constructor(transport: Transport, route: EventWriteRoute) {
    this.transport = transport;
    this.route = route;
  }

  async send(batches: EdgeEvent[][]): Promise<Array<Array<Outcome<EdgeDecision>>>> {
    // The events' requests in one array (no intermediate flattened array of the edge's events).
    const requests: RecordEventInit[] = [];
    for (const batch of batches) for (const event of batch) requests.push(event.request);
    // The first event's request id and trace travel in the headers; the ledger logs per request.
    // The batcher calls at the end of the event-loop turn with the turn's events: the request leaves at once.
    const options: CallOptions = { gathered: true };
    const ctx = ((batches[0] as EdgeEvent[])[0] as EdgeEvent).ctx;
    const outcomes = await this.route.send(options, (proposedIds) =>
      callWired(
        this.transport,
        proposedIds ? recordEventsAtEdge : recordEventsAtEdgeUncopied,
        { events: requests },
        ctx,
        options,
      ),
    );
    let offset = 0;
    return batches.map((batch) =>
      batch.map(() => {
        const outcome = outcomes[offset++];
        if (outcome instanceof LedgerOutcomeError) {
          // The answer of one of several copies (CallOptions.copied): its "nothing was stored" does not cover the
          // others, which may still decide the event. Its outcome is unknown; a retry with its eventId tells.
          if (options.copied && outcome.status === 503) {
            return new Rejected(AppError.withStatus(503, 'retry_later', EVENT_OUTCOME_UNKNOWN));
          }
          return new Rejected(AppError.withStatus(outcome.status, toErrorCode(outcome.code), outcome.message));
        }
        if (outcome !== undefined) return outcome;
        return new Rejected(new AppError('internal_error', 'The ledger answered no outcome for the event.'));
      }),
    );
  }

  async recover(batch: EdgeEvent[], error: unknown): Promise<Array<Outcome<EdgeDecision>>> {
    return batch.map(() => new Rejected(error));
  }
}

/** The edge's batcher: events per key (the keyed batcher, several requests of a key may be out), sent to the ledger. */
export class EdgeEventBatcher {
  private readonly transport: Transport;
  private readonly route: EventWriteRoute;
  private readonly options: EdgeBatcherOptions;
  private readonly batcher: KeyedBatcher<EdgeEvent, EdgeDecision>;
  private readonly observer: EdgeBatchObserver | undefined;
  private depth = 0;
  private depthPending = false;

  constructor(transport: Transport, options: EdgeBatcherOptions, observer?: EdgeBatchObserver) {
    const keyInFlightMax = options.keyInFlightMax ?? EDGE_KEY_IN_FLIGHT_MAX_DEFAULT;
    if (!(options.batchMax >= 1 && options.inFlightMax >= 1 && options.keysMax >= 1 && keyInFlightMax >= 1)) {
      throw new Error(`invalid edge batcher options ${JSON.stringify(options)}`);
    }
    this.transport = transport;
    this.options = options;
    this.observer = observer;
    this.route = new EventWriteRoute(() => observer?.fallback?.());
    this.batcher = new KeyedBatcher(
      new RecordEventsPolicy(transport, this.route),
      {
        batchMax: options.batchMax,
        concurrencyMax: options.inFlightMax,
        keysMax: options.keysMax,
        keyInFlightMax,
        longBatchMin: EVENT_LIMITS.longBatchMin,
        pacer: options.pacer,
        oneCallPerKey: false,
        leave: 'turn',
      },
      observer && {
        sent: (batches) => observer.batch(batches.reduce((events, batch) => events + batch.length, 0)),
        queued: (depth) => this.queued(depth),
      },
    );
  }

  /**
   * The queue depth reaches the observer once per microtask checkpoint, with its last value, not once per event: a
   * batch request submits its events in one synchronous run, and a gauge set per event cost 1 % of the edge's CPU.
   */
  private queued(depth: number): void {
    this.depth = depth;
    if (this.depthPending) return;
    this.depthPending = true;
    queueMicrotask(this.reportDepth);
  }

  private readonly reportDepth = (): void => {
    this.depthPending = false;
    this.observer?.queued(this.depth);
  };

  /**
   * Sends one event (in a batch); resolves with RecordEvent's reply (the edge's shape) or rejects with its error.
   * `queue`: the queue it waits in, its game's when known (key-tenants.ts); default its key's.
   */
  record(request: RecordEventInit, ctx: CallContext, queue?: string): Promise<EdgeDecision> {
    if (this.options.batchMax === 1) {
      const single = { ...request, occurredAtMs: BigInt(request.occurredAtMs ?? 0) };
      const options: CallOptions = {};
      return this.route
        .send(options, (proposedIds) =>
          this.transport.call(
            proposedIds ? ledgerOps.recordEventWithProposedId : ledgerOps.recordEvent,
            single,
            ctx,
            options,
          ),
        )
        .then(edgeDecisionOf);
    }
    return this.batcher.submit(queue ?? batchKey(request.keyHash ?? new Uint8Array()), { request, ctx });
  }

  /** The keyed batcher's map entries and events queued (KeyedBatcher.sizes). */
  get sizes(): KeyedBatcher<EdgeEvent, EdgeDecision>['sizes'] {
    return this.batcher.sizes;
  }

  /** Rejects what still waits and stops the batcher's pause timer (KeyedBatcher.close); the requests out end. */
  close(): void {
    this.batcher.close();
  }

  /**
   * Sends several events of one key (a batch request's), as `record` of each one after the other in one synchronous
   * run would, with one promise for all of them: it resolves with each event's reply or error (a Rejected) in order.
   */
  recordAll(
    key: Uint8Array,
    requests: readonly RecordEventInit[],
    ctx: CallContext,
    queue?: string,
  ): Promise<Array<Outcome<EdgeDecision>>> {
    if (this.options.batchMax === 1) {
      return Promise.all(
        requests.map((request) =>
          this.record(request, ctx).then(
            (decision) => decision,
            (error: unknown) => new Rejected(error),
          ),
        ),
      );
    }
    return this.batcher.submitAll(
      queue ?? batchKey(key),
      requests.map((request) => ({ request, ctx })),
    );
  }
}
