// Smart batching of events per key (issue #17; TigerBeetle's lesson, DESIGN.md "The hot path"), one algorithm for
// the ingest edge (RecordEvents requests to the ledger: services/ingest/src/routes/event-batcher.ts) and the ledger
// (calls of ledger.record_events: services/ledger/src/events/batcher.ts). What a call is sent to and what becomes of
// a batch whose call failed are the caller's BatchPolicy; the batcher only decides which events travel together.
//
// Events queue per key (a key hash: a key belongs to one game), in arrival order. At most `concurrencyMax` calls are
// out at once. No timer waits for a batch to fill: the events submitted while a call slot is free leave together
// at the end of the current synchronous run (`leave: 'microtask'`, the ledger: the events of one RecordEvents
// request) or of the current event-loop turn (`leave: 'turn'`, the edge: the events of the requests read in that
// turn); events that arrive while every slot is taken wait, and each call that ends sends the next one (`turn`: at
// the end of the turn in which it ended). At low load
// a call holds one event and latency does not grow; under load the queues that formed meanwhile are the next calls.
//
// Whole keys per call: a call holds the waiting events of the key first in line (at most `batchMax`, oldest first)
// and, behind it, the whole queues of the next keys in line as long as they fit: at most `keysMax` keys and
// `batchMax` events together. Keys are in line in the order they began to wait (first come, first served), so one
// hot key cannot starve the others. A key's events never split over calls that leave together; a key whose queue
// was longer than `batchMax` keeps its older events first.
//
// `eagerCallsMax` (the ledger: 1): while that many calls are out, the next leaves only if the keys in line fill a call
// (`keysMax` keys or `batchMax` events); otherwise they wait for a call to end and go together, group commit's rule. A
// free slot's call of one or two events costs the database almost what a full call costs (the statement, the round
// trip, the commit); the events it held would wait only until the call out ends, and at end-to-end rates they join a
// call several times larger (docs/benchmarks.md, "One call at a time until a call is full"). When the line fills a
// call, the free slots send as before, so a backlog of many games still has every connection working.
//
// `oneCallPerKey` (the ledger): a key with a call out waits for it to end before its next batch leaves, so the
// events that arrive meanwhile gather into that key's next batch and a key's batches are decided one after the other;
// the key then goes to the back of the line. Without it (the edge) a key may have several calls out, and the rest of
// a key longer than `batchMax` stays first in line.

/**
 * The answer to one event that has no result: the error its caller receives. Told apart from a result by instanceof;
 * `rejected` keeps a plain `{ error }` object from passing for one where the types are checked.
 */
export class Rejected {
  readonly rejected = true;
  readonly error: unknown;

  constructor(error: unknown) {
    this.error = error;
  }
}

/** What one event gets: its result, or the error it is rejected with. */
export type Outcome<R> = R | Rejected;

/** Where a call goes, and what becomes of the events of a batch whose call failed. */
export interface BatchPolicy<T, R> {
  /**
   * Sends one call: the batches of its keys (each in arrival order), in the order given. Answers an outcome per event,
   * batch by batch; throws when the call failed as a whole.
   */
  send(batches: T[][]): Promise<Array<Array<Outcome<R>>>>;
  /**
   * What becomes of the events of one key's batch whose call failed (each batch of a failed call is recovered as if
   * it had failed alone, one after the other). Throwing answers that error to each event of the batch.
   */
  recover(batch: T[], error: unknown): Promise<Array<Outcome<R>>>;
}

export interface KeyedBatcherOptions<T = unknown> {
  /** Most events in one call. */
  batchMax: number;
  /** Calls out at once. */
  concurrencyMax: number;
  /** Most keys in one call. */
  keysMax: number;
  /** A key's next batch waits until its call ends (see the file's header). */
  oneCallPerKey: boolean;
  /** When the events submitted while a slot is free leave: at the end of the synchronous run, or of the loop turn. */
  leave: 'microtask' | 'turn';
  /**
   * Calls that leave whenever a slot is free; while this many are out, another leaves only when the keys in line fill
   * one (`keysMax` keys or `batchMax` events), and fewer wait for a call to end and leave together (see the file's
   * header). Default `concurrencyMax`: a free slot always sends.
   */
  eagerCallsMax?: number | undefined;
  /** Most events waiting in all queues together; beyond it submit rejects with QueueFullError. Default: no bound. */
  queuedMax?: number | undefined;
  /** The QueueFullError's message (default: `more than <queuedMax> events wait`). */
  queueFullMessage?: string | undefined;
  /**
   * Events with a deadline (performance.now() time; the ledger: its request's, transport/deadline.ts): an event whose
   * deadline has passed when its key is taken from the line is not sent but rejected with `error()`, nothing done.
   */
  late?: { deadlineOf(item: T): number | undefined; error(): unknown } | undefined;
}

export interface KeyedBatchObserver<T> {
  /** A call left with these batches (one per key, in the call's order). */
  sent?(batches: readonly (readonly T[])[]): void;
  /** Events now waiting (not yet in a call); reported whenever the number changes. */
  queued?(depth: number): void;
  /** This many events of a key were rejected when it was taken, their deadline passed (`late`). */
  dropped?(count: number): void;
}

export class QueueFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QueueFullError';
  }
}

/** A key hash as a Map key (its bytes as a latin1 string). */
export function batchKey(hash: Uint8Array): string {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('latin1');
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

interface Taken<T, R> {
  key: string;
  batch: Array<Waiting<T, R>>;
}

export class KeyedBatcher<T, R> {
  private readonly policy: BatchPolicy<T, R>;
  private readonly options: KeyedBatcherOptions<T>;
  private readonly queuedMax: number;
  private readonly eagerCallsMax: number;
  private readonly observer: KeyedBatchObserver<T> | undefined;
  /** The keys in line with their waiting events, in the order they became ready (a Map iterates in that order). */
  private readonly line = new Map<string, Array<Waiting<T, R>>>();
  /** oneCallPerKey: the keys with a call out, with the events that arrived meanwhile (they join the line after it). */
  private readonly out = new Map<string, Array<Waiting<T, R>>>();
  private running = 0;
  private queued = 0;
  /** Events of the keys in line (queued less those that wait for their key's call: `out`). */
  private inLine = 0;
  private scheduled = false;

  constructor(policy: BatchPolicy<T, R>, options: KeyedBatcherOptions<T>, observer?: KeyedBatchObserver<T>) {
    const queuedMax = options.queuedMax ?? Number.POSITIVE_INFINITY;
    const eagerCallsMax = options.eagerCallsMax ?? options.concurrencyMax;
    const counts = [options.batchMax, options.concurrencyMax, options.keysMax, queuedMax, eagerCallsMax];
    if (!counts.every((count) => count >= 1)) throw new Error(`invalid batcher options ${JSON.stringify(options)}`);
    this.policy = policy;
    this.options = options;
    this.queuedMax = queuedMax;
    this.eagerCallsMax = eagerCallsMax;
    this.observer = observer;
  }

  /** Queues one event of a key (batchKey); resolves with its result, or rejects, once its call is done. */
  submit(key: string, item: T): Promise<R> {
    if (this.queued >= this.queuedMax) {
      return Promise.reject(
        new QueueFullError(this.options.queueFullMessage ?? `more than ${this.queuedMax} events wait`),
      );
    }
    return new Promise<R>((resolve, reject) => {
      const waiting = { item, resolve, reject };
      const meanwhile = this.out.get(key);
      if (meanwhile) meanwhile.push(waiting);
      else {
        const queue = this.line.get(key);
        if (queue) queue.push(waiting);
        else this.line.set(key, [waiting]); // behind every key in line already
        this.inLine++;
      }
      this.queued++;
      this.observer?.queued?.(this.queued);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.concurrencyMax) return;
    this.scheduled = true;
    const dispatch = () => {
      this.scheduled = false;
      this.dispatch();
    };
    if (this.options.leave === 'microtask') queueMicrotask(dispatch);
    else setImmediate(dispatch);
  }

  /** The batch of the key first in line, if it fits in `room` events; undefined otherwise (it stays first). */
  private take(room: number): Taken<T, R> | undefined {
    let first = this.line.entries().next();
    // A key whose every event is late leaves the line: the next key is first.
    while (!first.done && this.dropLate(first.value[0], first.value[1])) first = this.line.entries().next();
    if (first.done) return undefined;
    const [key, queue] = first.value;
    const size = Math.min(queue.length, this.options.batchMax);
    if (size > room) return undefined;
    let batch = queue;
    let rest: Array<Waiting<T, R>> = [];
    if (size === queue.length) this.line.delete(key);
    else if (this.options.oneCallPerKey) {
      batch = queue.slice(0, size);
      rest = queue.slice(size);
      this.line.delete(key);
    } else batch = queue.splice(0, size); // the key's older events stay first in line
    if (this.options.oneCallPerKey) this.out.set(key, rest);
    this.queued -= size;
    this.inLine -= batch.length + rest.length;
    return { key, batch };
  }

  /**
   * Rejects the events of a key in line whose deadline has passed (`late`), in place; true when none is left (the key
   * then left the line).
   */
  private dropLate(key: string, queue: Array<Waiting<T, R>>): boolean {
    const late = this.options.late;
    if (late === undefined) return false;
    const now = performance.now();
    const isLate = (waiting: Waiting<T, R>) => (late.deadlineOf(waiting.item) ?? Number.POSITIVE_INFINITY) <= now;
    if (!queue.some(isLate)) return false;
    const kept = queue.filter((waiting) => !isLate(waiting));
    const dropped = queue.filter(isLate);
    queue.splice(0, queue.length, ...kept);
    this.queued -= dropped.length;
    this.inLine -= dropped.length;
    if (kept.length === 0) this.line.delete(key);
    this.observer?.dropped?.(dropped.length);
    for (const waiting of dropped) waiting.reject(late.error());
    return kept.length === 0;
  }

  /** Fewer than eagerCallsMax calls are out, or the keys in line fill a call. */
  private mayCall(): boolean {
    return (
      this.running < this.eagerCallsMax ||
      this.line.size >= this.options.keysMax ||
      this.inLine >= this.options.batchMax
    );
  }

  private dispatch(): void {
    while (this.running < this.options.concurrencyMax && this.mayCall()) {
      const first = this.take(this.options.batchMax);
      if (first === undefined) break;
      const call = [first];
      let events = first.batch.length;
      // The keys in line behind it join this call, as many as fit.
      while (call.length < this.options.keysMax) {
        const next = this.take(this.options.batchMax - events);
        if (next === undefined) break;
        call.push(next);
        events += next.batch.length;
      }
      this.running++;
      void this.run(call).finally(() => {
        this.running--;
        if (this.options.oneCallPerKey) {
          for (const { key } of call) {
            const meanwhile = this.out.get(key) as Array<Waiting<T, R>>;
            this.out.delete(key);
            if (meanwhile.length > 0) {
              this.line.set(key, meanwhile);
              this.inLine += meanwhile.length;
            }
          }
        }
        // `turn`: the freed slot's next call leaves at the end of this turn too, with every event that arrives in it
        // (the edge: the HTTP requests read in the same poll phase as the reply), not with those queued so far.
        if (this.options.leave === 'turn') this.schedule();
        else this.dispatch();
      });
    }
    this.observer?.queued?.(this.queued);
  }

  /** Sends one call and answers each of its events; never throws. */
  private async run(call: Array<Taken<T, R>>): Promise<void> {
    const batches = call.map(({ batch }) => batch.map((waiting) => waiting.item));
    this.observer?.sent?.(batches);
    let outcomes: Array<Array<Outcome<R>>>;
    try {
      outcomes = await this.policy.send(batches);
    } catch (error) {
      // Each key's batch meets the call's failure as if it had failed alone, one after the other.
      for (const [i, { batch }] of call.entries()) {
        this.answer(batch, await this.recovered(batches[i] as T[], error));
      }
      return;
    }
    call.forEach(({ batch }, i) => {
      this.answer(batch, outcomes[i] ?? []);
    });
  }

  /** What the policy makes of a batch whose call failed; never throws. */
  private async recovered(batch: T[], error: unknown): Promise<Array<Outcome<R>>> {
    try {
      return await this.policy.recover(batch, error);
    } catch (recoveryError) {
      return batch.map(() => new Rejected(recoveryError));
    }
  }

  /** Answers each event of a batch with its outcome. */
  private answer(batch: Array<Waiting<T, R>>, outcomes: Array<Outcome<R>>): void {
    batch.forEach((waiting, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined) waiting.reject(new Error('the batch answered fewer events than it held'));
      else if (outcome instanceof Rejected) waiting.reject(outcome.error);
      else waiting.resolve(outcome);
    });
  }
}
