// The ledger's batcher of event decisions (docs/ingest.md, "Batched decisions"): RecordEvent requests
// queue per key hash in the keyed batcher (#runtime/batching/keyed-batcher.ts), which decides which events travel
// together; this file says where they travel and what becomes of a failed batch (the DecisionPolicy), and builds the
// batcher from the ledger's settings.
//
// While a batch of a key is in the database, that key's arriving events queue (in arrival order) and become its next
// batch when it ends (`oneCallPerKey`). When no call is in the database, the keys that are ready go at once; while
// one is, the ready keys wait for it to end and go together as the next call, unless they fill a call
// (EVENT_GROUP_KEYS_MAX keys or EVENT_BATCH_MAX events), which then takes a free connection of the pool
// (`eagerCallsMax: 1`). First come, first served, so one hot game cannot starve the others. No timer: an event
// arriving while no call is out goes at once, with the events submitted in the same synchronous run (one RecordEvents
// request of the edge: `leave: 'microtask'`), so at low load a batch is one event and latency does not grow.
//
// Queues are per key, not per game: the ledger learns a key's game only in the database, and a key belongs to one
// game. Two keys of one game may have a batch each in the database; they serialize on the game row as single events
// do.
//
// Several keys in one call: a call takes the batches of the keys that are ready (in the order they became ready, at
// most EVENT_GROUP_KEYS_MAX keys and EVENT_BATCH_MAX events together) and sends them as ONE call of
// ledger.record_events, one transaction (EventRepository.recordEventGroups). Each key's batch is decided exactly as
// alone, in the order given; what the keys share is the call's statements, the round trip and the commit, which is
// most of what a batch of one or two events costs (docs/benchmarks.md, "One call for several games"). The call locks
// the games of its keys in the order of their ids, so two calls that share games cannot deadlock. When a call fails,
// each key's batch is recovered as it would have been had it failed alone (recoverFailedBatch).
import { type BatchPolicy, batchKey, KeyedBatcher, type Outcome, Rejected } from '#runtime/batching/keyed-batcher.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import type { Logger } from '#runtime/logger.ts';
import { DeadlinePassedError } from '#runtime/transport/deadline.ts';
import {
  DatabaseUnavailableError,
  type EventRepository,
  isUniqueViolation,
  type RecordEventParams,
  type RecordResult,
} from './repository.ts';

/** Default EVENT_BATCH_MAX: large enough that a hot game's queue goes in one transaction, small enough to bound it. */
export const EVENT_BATCH_MAX_DEFAULT: number = EVENT_LIMITS.ledgerBatchDefault;
/**
 * Default EVENT_GROUP_KEYS_MAX ("Several keys in one call" above): two of the edge's requests (INGEST_EVENT_KEYS_MAX 8)
 * fit in one call. With one call at a time until a call is full, 16 measured larger calls and less PostgreSQL CPU per
 * decision than 8, end to end and in bench:ledger (docs/benchmarks.md, "One call at a time until a call is full").
 */
export const EVENT_GROUP_KEYS_MAX_DEFAULT = 16;
/** Most events waiting for the database in one ledger process; beyond it RecordEvent answers 503 at once. */
const EVENTS_QUEUED_MAX = 10_000;

export interface DecisionBatchingConfig {
  /** Most events in one call of ledger.record_events (EVENT_BATCH_MAX; 1 turns batching off). */
  eventBatchMax?: number | undefined;
  /** Most keys' waiting batches in one call of ledger.record_events (EVENT_GROUP_KEYS_MAX; 1: one key per call). */
  eventGroupKeysMax?: number | undefined;
}

export interface DecisionBatcherOptions {
  /** Most events in one batch (one call of ledger.record_events). */
  batchMax: number;
  /** Batches in the database at once: the connections of the ledger's pool. */
  concurrencyMax: number;
  /** Most events waiting in all queues together; beyond it an event is refused at once (nothing stored). */
  queuedMax: number;
  /** Most keys in one call (1: every call holds one key). Default 1. */
  groupKeysMax?: number | undefined;
}

/** Decides the events of one key, in order, in one transaction; throws when nothing was committed. */
export type DecideBatch = (batch: RecordEventParams[]) => Promise<RecordResult[]>;

export interface BatchObserver {
  /** A batch went to the database with this many events. */
  batch(size: number): void;
  /** A transaction went to the database with the batches of this many keys. */
  group?(keys: number): void;
  /** Events now waiting in the queues (not yet in the database). */
  queued(depth: number): void;
  /** A call of ledger.record_events ended (answered or failed) this many seconds after it left: its round trip. */
  called?(seconds: number): void;
  /** This many events were dropped from the queue, their request's deadline passed (nothing decided). */
  dropped?(count: number): void;
}

/**
 * What becomes of the events of a batch whose call of ledger.record_events failed; nothing of the batch was
 * committed (one transaction). The one place that classifies such failures:
 * - the database is unavailable (DatabaseUnavailableError: connection or transient failure): every event of the
 *   batch gets that error, the same answer each would have got alone (503 retry_later);
 * - anything else is unexpected (a unique violation from a writer that did not take the game lock, a bad value
 *   that only one event carries, ...): each event is decided again alone, in order, so that one bad event fails only
 *   itself; an event alone that meets a unique violation is tried once more (the stored decision then answers as a
 *   replay), as single decisions always were.
 */
export async function recoverFailedBatch(
  batch: RecordEventParams[],
  error: unknown,
  decide: DecideBatch,
  logger?: Logger,
): Promise<Array<Outcome<RecordResult>>> {
  if (error instanceof DatabaseUnavailableError || error instanceof DeadlinePassedError) {
    return batch.map(() => new Rejected(error));
  }
  if (batch.length > 1)
    logger?.warn({ err: error, events: batch.length }, 'event batch failed; deciding its events one by one');
  else if (!isUniqueViolation(error)) return [new Rejected(error)];
  const results: Array<Outcome<RecordResult>> = [];
  for (const params of batch) {
    let result: Outcome<RecordResult>;
    try {
      result = (await decide([params]))[0] as RecordResult;
    } catch (first) {
      result = new Rejected(first);
      if (isUniqueViolation(first)) {
        try {
          result = (await decide([params]))[0] as RecordResult;
        } catch (second) {
          result = new Rejected(second);
        }
      }
    }
    results.push(result);
  }
  return results;
}

/**
 * The ledger's batch policy: a call is one call of ledger.record_events (the batches of its keys, one transaction);
 * a failed batch is recovered by recoverFailedBatch, deciding again through the same repository.
 */
export class DecisionPolicy implements BatchPolicy<RecordEventParams, RecordResult> {
  private readonly events: Pick<EventRepository, 'recordEvents' | 'recordEventGroups'>;
  private readonly logger: Logger | undefined;

  constructor(events: Pick<EventRepository, 'recordEvents' | 'recordEventGroups'>, logger?: Logger) {
    this.events = events;
    this.logger = logger;
  }

  send(batches: RecordEventParams[][]): Promise<Array<Array<Outcome<RecordResult>>>> {
    return this.events.recordEventGroups(batches);
  }

  recover(batch: RecordEventParams[], error: unknown): Promise<Array<Outcome<RecordResult>>> {
    return recoverFailedBatch(batch, error, (one) => this.events.recordEvents(one), this.logger);
  }
}

/** Event decisions batched per key (the keyed batcher, one call per key at a time). */
export class DecisionBatcher {
  private readonly batcher: KeyedBatcher<RecordEventParams, RecordResult>;

  constructor(
    policy: BatchPolicy<RecordEventParams, RecordResult>,
    options: DecisionBatcherOptions,
    observer?: BatchObserver,
  ) {
    this.batcher = new KeyedBatcher(
      observer?.called ? timedPolicy(policy, (seconds) => observer.called?.(seconds)) : policy,
      {
        batchMax: options.batchMax,
        concurrencyMax: options.concurrencyMax,
        keysMax: options.groupKeysMax ?? 1,
        oneCallPerKey: true,
        leave: 'microtask',
        eagerCallsMax: 1,
        longBatchMin: EVENT_LIMITS.longBatchMin,
        queuedMax: options.queuedMax,
        queueFullMessage: `more than ${options.queuedMax} events wait for the database`,
        // An event whose request's deadline passed while it waited is not decided: its caller gave up already.
        late: { deadlineOf: (params) => params.deadline, error: () => new DeadlinePassedError('its batch left') },
      },
      observer && {
        sent: (batches) => {
          for (const batch of batches) observer.batch(batch.length);
          if (batches.length > 1) observer.group?.(batches.length);
        },
        queued: (depth) => observer.queued(depth),
        dropped: (count) => observer.dropped?.(count),
      },
    );
  }

  /** Queues one event; resolves with its decision (or rejects with its error) once its batch is done. */
  submit(params: RecordEventParams): Promise<RecordResult> {
    return this.batcher.submit(batchKey(params.keyHash), params);
  }

  /** The keyed batcher's map entries and events queued (KeyedBatcher.sizes). */
  get sizes(): KeyedBatcher<RecordEventParams, RecordResult>['sizes'] {
    return this.batcher.sizes;
  }

  /** The keyed batcher's counters against its queues, read in full (tests: KeyedBatcher.assertConsistent). */
  assertConsistent(): void {
    this.batcher.assertConsistent();
  }
}

/** The policy, each call's round trip (from leaving to its answer or failure, the commit included) reported. */
function timedPolicy(
  policy: BatchPolicy<RecordEventParams, RecordResult>,
  called: (seconds: number) => void,
): BatchPolicy<RecordEventParams, RecordResult> {
  return {
    send: async (batches) => {
      const started = performance.now();
      try {
        return await policy.send(batches);
      } finally {
        called((performance.now() - started) / 1000);
      }
    },
    recover: (batch, error) => policy.recover(batch, error),
  };
}

/** The ledger's batcher, from its settings: at most one call per connection of the repository's pool. */
export function decisionBatcher(
  events: EventRepository,
  config: DecisionBatchingConfig,
  observer: BatchObserver | undefined,
  logger: Logger,
): DecisionBatcher {
  return new DecisionBatcher(
    new DecisionPolicy(events, logger),
    {
      batchMax: Math.min(config.eventBatchMax ?? EVENT_BATCH_MAX_DEFAULT, EVENT_LIMITS.eventsPerCallMax),
      concurrencyMax: events.poolMax,
      queuedMax: EVENTS_QUEUED_MAX,
      groupKeysMax: Math.min(config.eventGroupKeysMax ?? EVENT_GROUP_KEYS_MAX_DEFAULT, EVENT_LIMITS.keysPerCallMax),
    },
    observer,
  );
}
