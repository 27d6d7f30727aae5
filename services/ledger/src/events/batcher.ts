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
// game, so a batch still holds exactly one game (one game row lock per transaction, no lock-order deadlocks). Two
// keys of one game may have a batch each in the database; they serialize on the game row as single events do.
// Keys take turns (first come, first served), so one hot game cannot starve the others.
import type { RecordEventParams, RecordResult, StoredDecision } from './repository.ts';

export interface DecisionBatcherOptions {
  /** Most events in one batch (one call of ledger.record_events). */
  batchMax: number;
  /** Batches in the database at once: the connections of the ledger's pool. */
  concurrencyMax: number;
  /** Most events waiting in all queues together; beyond it an event is refused at once (nothing stored). */
  queuedMax: number;
}

/** Decides the events of one key, in order, in one transaction; throws when nothing was committed. */
export type DecideBatch = (batch: RecordEventParams[]) => Promise<RecordResult[]>;

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
  /** Events now waiting in the queues (not yet in the database). */
  queued(depth: number): void;
  /**
   * A fresh decision (not a replay) was committed; called after its event was answered, once per decision. Must not
   * throw or wait (the live decisions notice: endpoints.ts).
   */
  decided?(decision: StoredDecision, eventId: string): void;
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
  ) {
    if (!(options.batchMax >= 1 && options.concurrencyMax >= 1 && options.queuedMax >= 1)) {
      throw new Error(`invalid batcher options ${JSON.stringify(options)}`);
    }
    this.decide = decide;
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

  private pump(): void {
    while (this.running < this.options.concurrencyMax) {
      const key = this.nextReadyKey();
      if (key === undefined) break;
      const queue = this.queues.get(key);
      if (!queue || queue.length === 0) continue;
      const batch = queue.length <= this.options.batchMax ? queue : queue.slice(0, this.options.batchMax);
      if (batch === queue) this.queues.delete(key);
      else this.queues.set(key, queue.slice(this.options.batchMax));
      this.queued -= batch.length;
      this.busy.add(key);
      this.running++;
      this.observer?.batch(batch.length);
      void this.run(batch).finally(() => {
        this.running--;
        this.busy.delete(key);
        if (this.queues.has(key)) this.ready.push(key);
        this.pump();
      });
    }
    this.observer?.queued(this.queued);
  }

  /** Runs one batch and answers each of its events; never throws. */
  private async run(batch: Waiting[]): Promise<void> {
    const params = batch.map((w) => w.params);
    let results: Array<RecordResult | { error: unknown }>;
    try {
      results = await this.decide(params);
    } catch (error) {
      try {
        results = await this.recover(params, error, this.decide);
      } catch (recoveryError) {
        results = params.map(() => ({ error: recoveryError }));
      }
    }
    batch.forEach((waiting, i) => {
      const result = results[i];
      if (result === undefined) waiting.reject(new Error('the batch answered fewer events than it held'));
      else if ('error' in result) waiting.reject(result.error);
      else waiting.resolve(result);
    });
    // After the answers: a notice never delays a decision. The batch's transaction has committed (decide returned).
    const decided = this.observer?.decided;
    if (!decided) return;
    results.forEach((result, i) => {
      if (result !== undefined && 'outcome' in result && result.outcome === 'decided') {
        try {
          decided(result.decision, params[i]!.eventId);
        } catch {
          // An observer must not throw; if it does, the decisions stand and the next batch runs.
        }
      }
    });
  }
}
