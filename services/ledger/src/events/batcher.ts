// Smart batching of event decisions (issue #17; TigerBeetle's lesson, DESIGN.md "The hot path").
//
// While a batch of a key is in the database, that key's arriving events queue (in arrival order). When a batch
// finishes, or whenever fewer batches than the pool's connections are in the database, the next key with waiting
// events sends up to `batchMax` of them as ONE call of ledger.record_events (one transaction). No timer waits for a
// batch to fill: an event arriving at an idle key goes at once (with the events submitted in the same synchronous
// run, e.g. one RecordEvents request of the edge), so at low load a batch is one event and
// latency does not grow; under load the queue that formed while the previous batch ran is the next batch.
//
// Queues are per key, not per game: the ledger learns a key's game only in the database, and a key belongs to one
// game. Two keys of one game may have a batch each in the database; they serialize on the game row as single events
// do. Keys take turns (first come, first served), so one hot game cannot starve the others.
//
// Several keys in one call: a call takes the batches of the keys that are ready (in the order they became ready, at
// most `groupKeysMax` keys and `batchMax` events together) and sends them as ONE call of ledger.record_events, one
// transaction (DecideGroup). Each key's batch is decided exactly as alone, in the order given; what the keys share
// is the call's statements, the round trip and the commit, which is most of what a batch of one or two events
// costs (docs/benchmarks.md, "One call for several games"). So an edge request that holds several keys' events is
// one call, and at a moderate rate, when each key has only an event or two waiting, the events still travel in few,
// large calls instead of one small call per key. At low load one key is ready at a time and nothing changes. The
// call locks the games of its keys in the order of their ids, so two calls that share games cannot deadlock. When a
// group's call fails, each key's batch is recovered as it would have been had it failed alone.
import type { RecordEventParams, RecordResult } from './repository.ts';

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

/**
 * Decides the batches of several keys (each as DecideBatch would, in the order given) in one transaction; throws
 * when nothing was committed.
 */
export type DecideGroup = (batches: RecordEventParams[][]) => Promise<RecordResult[][]>;

/**
 * What becomes of the events of a batch whose call failed: an answer or an error per event. Kept in one function
 * (see failedBatchPolicy in endpoints.ts) so that the database-error classification lives in one place.
 */
export type RecoverFailedBatch = (
  batch: RecordEventParams[],
  error: unknown,
  decide: DecideBatch,
) => Promise<Array<RecordResult | { error: unknown }>>;

export interface BatchObserver {
  /** A batch went to the database with this many events. */
  batch(size: number): void;
  /** A transaction went to the database with the batches of this many keys. */
  group?(keys: number): void;
  /** Events now waiting in the queues (not yet in the database). */
  queued(depth: number): void;
}

export class QueueFullError extends Error {
  constructor(queuedMax: number) {
    super(`more than ${queuedMax} events wait for the database`);
    this.name = 'QueueFullError';
  }
}

interface Waiting {
  params: RecordEventParams;
  resolve: (result: RecordResult) => void;
  reject: (error: unknown) => void;
}

export class DecisionBatcher {
  private readonly decide: DecideBatch;
  private readonly decideGroup: DecideGroup | undefined;
  private readonly groupKeysMax: number;
  private readonly recover: RecoverFailedBatch;
  private readonly options: DecisionBatcherOptions;
  private readonly observer: BatchObserver | undefined;
  /** Waiting events per key (the key hash as a latin1 string), in arrival order. */
  private readonly queues = new Map<string, Waiting[]>();
  /** Keys with waiting events and no batch in the database, in the order they became ready. */
  private ready: string[] = [];
  private readyHead = 0;
  /** Keys with a batch in the database. */
  private readonly busy = new Set<string>();
  private running = 0;
  private queued = 0;
  private pumpScheduled = false;

  constructor(
    decide: DecideBatch,
    recover: RecoverFailedBatch,
    options: DecisionBatcherOptions,
    observer?: BatchObserver,
    decideGroup?: DecideGroup,
  ) {
    const groupKeysMax = options.groupKeysMax ?? 1;
    if (
      !(options.batchMax >= 1 && options.concurrencyMax >= 1 && options.queuedMax >= 1 && groupKeysMax >= 1) ||
      (groupKeysMax > 1 && !decideGroup)
    ) {
      throw new Error(`invalid batcher options ${JSON.stringify(options)}`);
    }
    this.decide = decide;
    this.decideGroup = decideGroup;
    this.groupKeysMax = groupKeysMax;
    this.recover = recover;
    this.options = options;
    this.observer = observer;
  }

  /** Queues one event; resolves with its decision (or an error outcome) once its batch is done. */
  submit(params: RecordEventParams): Promise<RecordResult> {
    if (this.queued >= this.options.queuedMax) return Promise.reject(new QueueFullError(this.options.queuedMax));
    const key = Buffer.from(params.keyHash.buffer, params.keyHash.byteOffset, params.keyHash.byteLength).toString(
      'latin1',
    );
    return new Promise<RecordResult>((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) {
        queue = [];
        this.queues.set(key, queue);
        // A new queue of a key without a batch in the database is ready; a busy key is made ready when its batch ends.
        if (!this.busy.has(key)) this.ready.push(key);
      }
      queue.push({ params, resolve, reject });
      this.queued++;
      // The events submitted in one synchronous run (a RecordEvents request of the edge) go as one batch: the pump
      // runs once they are all queued, before any I/O (a microtask, not a timer).
      if (!this.pumpScheduled) {
        this.pumpScheduled = true;
        queueMicrotask(() => {
          this.pumpScheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Events waiting, not yet in the database. */
  get depth(): number {
    return this.queued;
  }

  private nextReadyKey(): string | undefined {
    if (this.readyHead >= this.ready.length) return undefined;
    const key = this.ready[this.readyHead++];
    if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.readyHead);
      this.readyHead = 0;
    }
    return key;
  }

  /** The next ready key's batch (taken out of its queue), or undefined when no key is ready. */
  private takeBatch(eventsMax: number): { key: string; batch: Waiting[] } | undefined {
    for (;;) {
      if (this.readyHead >= this.ready.length) return undefined;
      const key = this.ready[this.readyHead] as string;
      const queue = this.queues.get(key);
      if (!queue || queue.length === 0) {
        this.nextReadyKey();
        continue;
      }
      const size = Math.min(queue.length, this.options.batchMax);
      if (size > eventsMax) return undefined; // it stays first in line for the next call
      this.nextReadyKey();
      const batch = size === queue.length ? queue : queue.slice(0, size);
      if (batch === queue) this.queues.delete(key);
      else this.queues.set(key, queue.slice(size));
      this.queued -= batch.length;
      this.busy.add(key);
      this.observer?.batch(batch.length);
      return { key, batch };
    }
  }

  private pump(): void {
    while (this.running < this.options.concurrencyMax) {
      const first = this.takeBatch(this.options.batchMax);
      if (first === undefined) break;
      const group = [first];
      if (this.groupKeysMax > 1) {
        // The keys ready behind it join this call, as many as fit.
        let events = first.batch.length;
        while (group.length < this.groupKeysMax) {
          const next = this.takeBatch(this.options.batchMax - events);
          if (next === undefined) break;
          group.push(next);
          events += next.batch.length;
        }
      }
      this.running++;
      if (group.length > 1) this.observer?.group?.(group.length);
      void this.runGroup(group).finally(() => {
        this.running--;
        for (const { key } of group) {
          this.busy.delete(key);
          if (this.queues.has(key)) this.ready.push(key);
        }
        this.pump();
      });
    }
    this.observer?.queued(this.queued);
  }

  /** Runs the batches of one call (one key, or a group of keys in one transaction); never throws. */
  private async runGroup(group: Array<{ key: string; batch: Waiting[] }>): Promise<void> {
    if (group.length === 1 || !this.decideGroup) {
      for (const { batch } of group) await this.run(batch);
      return;
    }
    const params = group.map(({ batch }) => batch.map((w) => w.params));
    let results: RecordResult[][];
    try {
      results = await this.decideGroup(params);
    } catch (error) {
      // Each key's batch meets the group's failure as if it had failed alone: the one recovery policy decides (the
      // database unavailable: each event gets the error, and a lost connection's unknown outcome is looked up per
      // event; anything else: its events decided again one by one).
      for (const [i, { batch }] of group.entries()) {
        this.answer(batch, await this.recovered(params[i]!, error));
      }
      return;
    }
    group.forEach(({ batch }, i) => {
      this.answer(batch, results[i] ?? []);
    });
  }

  /** Runs one batch and answers each of its events; never throws. */
  private async run(batch: Waiting[]): Promise<void> {
    const params = batch.map((w) => w.params);
    let results: Array<RecordResult | { error: unknown }>;
    try {
      results = await this.decide(params);
    } catch (error) {
      results = await this.recovered(params, error);
    }
    this.answer(batch, results);
  }

  /** What the recovery policy makes of a batch whose call failed (nothing of it was committed); never throws. */
  private async recovered(
    params: RecordEventParams[],
    error: unknown,
  ): Promise<Array<RecordResult | { error: unknown }>> {
    try {
      return await this.recover(params, error, this.decide);
    } catch (recoveryError) {
      return params.map(() => ({ error: recoveryError }));
    }
  }

  /** Answers each event of a batch with its result (or error). */
  private answer(batch: Waiting[], results: Array<RecordResult | { error: unknown }>): void {
    batch.forEach((waiting, i) => {
      const result = results[i];
      if (result === undefined) waiting.reject(new Error('the batch answered fewer events than it held'));
      else if ('error' in result) waiting.reject(result.error);
      else waiting.resolve(result);
    });
  }
}
