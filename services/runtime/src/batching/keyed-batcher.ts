// Smart batching of events per key (TigerBeetle's lesson, DESIGN.md "The hot path"), one algorithm for
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
// Fair calls: a call takes events from the keys in line in turn, one event of each key, then a second of
// each, ... (round robin), from at most `keysMax` keys, until it holds `batchMax` events or the keys have no more; so
// a hot key with thousands waiting and a quiet key with one share a call, the quiet key's event in the first round.
// Keys are in line in the order they began to wait; a key that still has events after its share goes to the back of
// the line, behind every key that waited meanwhile, so one hot key cannot take the calls that follow either. A key's
// events keep their arrival order.
//
// `keyInFlightMax` (the edge): most events of one key in calls out at once; a key at its bound is passed over (it
// keeps its place in line) until a call of it ends. A flooding key then holds at most that many events in the next
// stage (the ledger's queue and its transactions), whatever its number of waiting events.
//
// `eagerCallsMax` (the ledger: 1): while that many calls are out, the next leaves only if the keys in line fill a call
// (`keysMax` keys or `batchMax` events); otherwise they wait for a call to end and go together, group commit's rule. A
// free slot's call of one or two events costs the database almost what a full call costs (the statement, the round
// trip, the commit); the events it held would wait only until the call out ends, and at end-to-end rates they join a
// call several times larger (docs/benchmarks.md, "One call at a time until a call is full"). When the line fills a
// call, the free slots send as before, so a backlog of many games still has every connection working.
//
// `longBatchMin` (both): a key's batch of at least that many events is a flood's backlog, tens of milliseconds in the
// database; it goes in a call of its own (with the other long batches in line), on any free slot, and a call out with
// one does not count towards `eagerCallsMax`. So the short batches of other keys neither ride in a flood's call
// (their answers would wait for all of it: the ledger answers a RecordEvents request as a whole) nor wait for it to
// end; they take a free slot. Short batches still share calls with each other and wait for a short call out (group
// commit); a long batch never waits for them (short keys arriving all the time cannot starve a flood).
//
// `pacer` (the edge: flood-pacer.ts): a key it holds back keeps its place in line and is passed over until the time
// the pacer names; a timer then sends what waits. The pacer may also bound a key's events in flight below
// `keyInFlightMax` (a paced flood: one long batch at a time).
//
// `oneCallPerKey` (the ledger): a key with a call out waits for it to end before its next batch leaves, so the
// events that arrive meanwhile gather into that key's next batch and a key's batches are decided one after the other;
// the key then goes to the back of the line. Without it (the edge) a key may have several calls out (up to
// `keyInFlightMax` events).
//
// `late`: a key's late events are found without reading its whole queue at every call. While its events' deadlines
// come in arrival order (the usual case: one timeout for every request) the late ones are the queue's head; otherwise
// the queue is read only once the earliest deadline it may hold has passed.
//
// The counters (`queued`, `inLine`, `running`) are asserted where they change (invariant.ts); `close()` rejects what
// waits and stops the pause timer, which never keeps the process alive on its own.

import { invariant, reportBroken } from '../invariant.ts';
import type { KeyPacer } from './key-pacer.ts';

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
  /** A key's batch of at least this many events goes in a call of its own (see the file's header). Default: none. */
  longBatchMin?: number | undefined;
  /** Most events of one key in calls out at once (see the file's header). Default: no bound. */
  keyInFlightMax?: number | undefined;
  /** Holds a key's next call back until a time it names, told of every call that ended (see the file's header). */
  pacer?: KeyPacer | undefined;
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

/** What an event gets that waits when the batcher closes, or that is submitted after. */
export class BatcherClosedError extends Error {
  constructor() {
    super('the batcher is closed');
    this.name = 'BatcherClosedError';
  }
}

/** A key hash as a Map key (its bytes as a latin1 string). */
export function batchKey(hash: Uint8Array): string {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('latin1');
}

/**
 * Where one waiting event's outcome goes: the promise of a single submit, or a slot of a group's outcomes
 * (submitAll). Settled exactly once.
 */
interface Settlement<R> {
  settle(index: number, outcome: Outcome<R>): void;
}

interface Waiting<T, R> {
  item: T;
  to: Settlement<R>;
  /** The event's place in its group (0 for a single submit). */
  index: number;
  /** `late`: the event's deadline (performance.now() time; infinite without one or without `late`). */
  deadline: number;
}

/** A key's waiting events in arrival order, with what finds its late ones without reading them all (`late`). */
type KeyQueue<T, R> = Array<Waiting<T, R>> & {
  /** No waiting event's deadline is before this (a lower bound: it may be an event's that left since). */
  earliest: number;
  /** The events' deadlines do not decrease from the head to the tail: the late ones are the head. */
  ordered: boolean;
};

function keyQueue<T, R>(): KeyQueue<T, R> {
  return Object.assign([] as Array<Waiting<T, R>>, { earliest: Number.POSITIVE_INFINITY, ordered: true });
}

/** A single submit's promise as a Settlement. */
class OnePromise<R> implements Settlement<R> {
  readonly promise: Promise<R>;
  private resolve!: (result: R) => void;
  private reject!: (error: unknown) => void;

  constructor() {
    this.promise = new Promise<R>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  settle(_index: number, outcome: Outcome<R>): void {
    if (outcome instanceof Rejected) this.reject(outcome.error);
    else this.resolve(outcome);
  }
}

/** A group's outcomes (submitAll): one promise, resolved once every event of the group has its outcome. */
class GroupPromise<R> implements Settlement<R> {
  readonly promise: Promise<Array<Outcome<R>>>;
  readonly outcomes: Array<Outcome<R>>;
  private left: number;
  private resolve!: (outcomes: Array<Outcome<R>>) => void;

  constructor(size: number) {
    this.outcomes = new Array<Outcome<R>>(size);
    this.left = size;
    this.promise = new Promise<Array<Outcome<R>>>((resolve) => {
      this.resolve = resolve;
    });
  }

  settle(index: number, outcome: Outcome<R>): void {
    this.outcomes[index] = outcome;
    if (--this.left === 0) this.resolve(this.outcomes);
  }
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
  private readonly keyInFlightMax: number;
  private readonly longBatchMin: number;
  private readonly observer: KeyedBatchObserver<T> | undefined;
  /** The keys in line with their waiting events, in the order they became ready (a Map iterates in that order). */
  private readonly line = new Map<string, KeyQueue<T, R>>();
  /** oneCallPerKey: the keys with a call out, with the events that arrived meanwhile (they join the line after it). */
  private readonly out = new Map<string, KeyQueue<T, R>>();
  /** keyInFlightMax: events of each key in calls out (keys with none are absent). */
  private readonly keyInFlight = new Map<string, number>();
  private running = 0;
  /** Calls out that hold a long batch (`longBatchMin`); they do not count towards eagerCallsMax. */
  private runningLong = 0;
  private queued = 0;
  /** Events of the keys in line (queued less those that wait for their key's call: `out`). */
  private inLine = 0;
  private scheduled = false;
  /** pacer: the earliest time a key passed over in the last dispatch may send, and the timer set for it. */
  private pausedUntil = Number.POSITIVE_INFINITY;
  private pauseTimer: NodeJS.Timeout | undefined;
  private pauseTimerAt = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(policy: BatchPolicy<T, R>, options: KeyedBatcherOptions<T>, observer?: KeyedBatchObserver<T>) {
    const queuedMax = options.queuedMax ?? Number.POSITIVE_INFINITY;
    const eagerCallsMax = options.eagerCallsMax ?? options.concurrencyMax;
    const keyInFlightMax = options.keyInFlightMax ?? Number.POSITIVE_INFINITY;
    const longBatchMin = options.longBatchMin ?? Number.POSITIVE_INFINITY;
    const counts = [
      options.batchMax,
      options.concurrencyMax,
      options.keysMax,
      queuedMax,
      eagerCallsMax,
      keyInFlightMax,
      longBatchMin,
    ];
    if (!counts.every((count) => count >= 1)) throw new Error(`invalid batcher options ${JSON.stringify(options)}`);
    this.policy = policy;
    this.options = options;
    this.queuedMax = queuedMax;
    this.eagerCallsMax = eagerCallsMax;
    this.keyInFlightMax = keyInFlightMax;
    this.longBatchMin = longBatchMin;
    this.observer = observer;
  }

  /** Entries of its per-key maps (keys in line, keys with a call out, keys with events in flight) and events queued. */
  get sizes(): { line: number; out: number; keyInFlight: number; queued: number } {
    return { line: this.line.size, out: this.out.size, keyInFlight: this.keyInFlight.size, queued: this.queued };
  }

  /** Queues one event of a key (batchKey); resolves with its result, or rejects, once its call is done. */
  submit(key: string, item: T): Promise<R> {
    if (this.closed) return Promise.reject(new BatcherClosedError());
    if (this.queued >= this.queuedMax) return Promise.reject(this.queueFull());
    const one = new OnePromise<R>();
    this.enqueue(key, item, one, 0);
    this.checkCounters();
    this.observer?.queued?.(this.queued);
    this.schedule();
    return one.promise;
  }

  /**
   * Queues several events of one key, in order, as `submit` of each one after the other in one synchronous run would
   * (the same queue, the same calls, the same outcomes, QueueFullError for those beyond `queuedMax`), with one promise
   * for all of them instead of one each: it resolves, never rejects, with each event's outcome in their order (a
   * Rejected for an event that has no result) once every one of them has its own.
   */
  submitAll(key: string, items: readonly T[]): Promise<Array<Outcome<R>>> {
    const group = new GroupPromise<R>(items.length);
    if (items.length === 0) return Promise.resolve(group.outcomes);
    items.forEach((item, index) => {
      if (this.closed) group.settle(index, new Rejected(new BatcherClosedError()));
      else if (this.queued >= this.queuedMax) group.settle(index, new Rejected(this.queueFull()));
      else this.enqueue(key, item, group, index);
    });
    this.checkCounters();
    this.observer?.queued?.(this.queued);
    this.schedule();
    return group.promise;
  }

  private queueFull(): QueueFullError {
    return new QueueFullError(this.options.queueFullMessage ?? `more than ${this.queuedMax} events wait`);
  }

  /** One event into its key's queue (behind its key's call out with oneCallPerKey, else in line). */
  private enqueue(key: string, item: T, to: Settlement<R>, index: number): void {
    const deadline = this.options.late?.deadlineOf(item) ?? Number.POSITIVE_INFINITY;
    let queue = this.out.get(key);
    if (queue === undefined) {
      queue = this.line.get(key);
      if (queue === undefined) {
        queue = keyQueue();
        this.line.set(key, queue); // behind every key in line already
      }
      this.inLine++;
    }
    const last = queue[queue.length - 1];
    if (last === undefined) {
      queue.earliest = deadline;
      queue.ordered = true;
    } else {
      if (deadline < last.deadline) queue.ordered = false;
      if (deadline < queue.earliest) queue.earliest = deadline;
    }
    queue.push({ item, to, index, deadline });
    this.queued++;
  }

  /**
   * The counters where they change: never negative, within their bounds, and consistent with the queues as far as
   * that is seen without reading them (assertConsistent reads them).
   */
  private checkCounters(): void {
    invariant(
      this.inLine >= this.line.size &&
        this.queued >= this.inLine &&
        this.running >= this.runningLong &&
        this.runningLong >= 0 &&
        this.running <= this.options.concurrencyMax &&
        (!this.options.oneCallPerKey || this.out.size >= this.running),
      'keyed_batcher_counters',
      () => ({
        queued: this.queued,
        inLine: this.inLine,
        keysInLine: this.line.size,
        running: this.running,
        runningLong: this.runningLong,
        keysOut: this.out.size,
      }),
    );
  }

  /**
   * Every counter against the queues it counts, read in full (O(events waiting)): for tests, which call it between
   * steps. Throws (through invariant) when one differs.
   */
  assertConsistent(): void {
    let inLine = 0;
    for (const queue of this.line.values()) inLine += queue.length;
    let behind = 0;
    for (const queue of this.out.values()) behind += queue.length;
    const emptyKey = [...this.line.values()].some((queue) => queue.length === 0);
    const inFlight = [...this.keyInFlight.values()];
    invariant(
      inLine === this.inLine &&
        inLine + behind === this.queued &&
        !emptyKey &&
        inFlight.every((events) => events > 0 && events <= this.keyInFlightMax) &&
        (this.keyInFlight.size === 0 || this.running > 0),
      'keyed_batcher_queues',
      () => ({ inLine, behind, emptyKey, inFlight, counted: { queued: this.queued, inLine: this.inLine } }),
    );
    this.checkCounters();
  }

  private schedule(): void {
    if (this.scheduled || this.closed || this.running >= this.options.concurrencyMax) return;
    this.scheduled = true;
    const dispatch = () => {
      this.scheduled = false;
      this.dispatch();
    };
    if (this.options.leave === 'microtask') queueMicrotask(dispatch);
    else setImmediate(dispatch);
  }

  /**
   * The next call, formed round robin (see the file's header): the first `keysMax` keys in line below their in-flight
   * bound give one event each in turn until the call holds `batchMax` events or they have no more. When some of those
   * batches are long (`longBatchMin`) and some short, the call takes the short ones if they may go (`shortMayGo`:
   * mayCall), else the long ones; the others keep their place in line. Undefined when no key in line may send.
   */
  private take(shortMayGo: boolean): Array<Taken<T, R>> | undefined {
    if (!shortMayGo && this.longBatchMin === Number.POSITIVE_INFINITY) return undefined;
    const keys: Array<{ key: string; queue: KeyQueue<T, R>; most: number; size: number }> = [];
    const pacer = this.options.pacer;
    const now = pacer === undefined ? 0 : performance.now();
    for (const [key, queue] of this.line) {
      // A key whose every event is late leaves the line (dropLate): the next key takes its place.
      if (this.dropLate(key, queue)) continue;
      let bound = this.keyInFlightMax;
      if (pacer !== undefined) {
        const at = pacer.notBefore(key, now);
        if (at > now) {
          this.pausedUntil = Math.min(this.pausedUntil, at);
          continue;
        }
        bound = Math.min(bound, pacer.inFlightMax?.(key, now) ?? bound);
      }
      const most = Math.min(queue.length, bound - (this.keyInFlight.get(key) ?? 0));
      if (most <= 0) continue;
      keys.push({ key, queue, most, size: 0 });
      if (keys.length === this.options.keysMax) break;
    }
    if (keys.length === 0) return undefined;
    // Round robin, a round at a time: every key still with events gets min(its rest, the room shared) per round.
    let room = this.options.batchMax;
    for (let open = keys; room > 0 && open.length > 0; open = open.filter((k) => k.size < k.most)) {
      const share = Math.max(1, Math.floor(room / open.length));
      for (const k of open) {
        const more = Math.min(share, k.most - k.size, room);
        k.size += more;
        room -= more;
      }
    }
    const short = keys.filter((k) => k.size > 0 && k.size < this.longBatchMin);
    const taken = shortMayGo && short.length > 0 ? short : keys.filter((k) => k.size >= this.longBatchMin);
    if (taken.length === 0) return undefined;
    const call: Array<Taken<T, R>> = [];
    for (const { key, queue, size } of taken) {
      if (size === 0) continue;
      const batch = queue.splice(0, size);
      if (queue.ordered) queue.earliest = queue[0]?.deadline ?? Number.POSITIVE_INFINITY;
      this.line.delete(key);
      if (this.options.oneCallPerKey) {
        this.out.set(key, queue); // the rest waits for this call with the events that arrive meanwhile
        this.inLine -= queue.length;
      } else if (queue.length > 0) this.line.set(key, queue); // the rest goes to the back of the line
      this.inLine -= size;
      this.queued -= size;
      if (this.keyInFlightMax !== Number.POSITIVE_INFINITY) {
        this.keyInFlight.set(key, (this.keyInFlight.get(key) ?? 0) + size);
      }
      call.push({ key, batch });
    }
    this.checkCounters();
    return call;
  }

  /**
   * Rejects the events of a key in line whose deadline has passed (`late`), in place; true when none is left (the key
   * then left the line). Reads no event while the earliest deadline the queue may hold is still ahead, and only the
   * late head while its deadlines are in arrival order (see the file's header).
   */
  private dropLate(key: string, queue: KeyQueue<T, R>): boolean {
    const late = this.options.late;
    if (late === undefined || queue.earliest === Number.POSITIVE_INFINITY) return false;
    const now = performance.now();
    if (queue.earliest > now) return false;
    let dropped: Array<Waiting<T, R>>;
    if (queue.ordered) {
      let count = 0;
      while (count < queue.length && (queue[count] as Waiting<T, R>).deadline <= now) count++;
      dropped = queue.splice(0, count);
      queue.earliest = queue[0]?.deadline ?? Number.POSITIVE_INFINITY;
    } else {
      // Compacted in place; the kept events' earliest deadline and their order are learnt on the way.
      dropped = [];
      let kept = 0;
      let earliest = Number.POSITIVE_INFINITY;
      let ordered = true;
      for (const waiting of queue) {
        if (waiting.deadline <= now) {
          dropped.push(waiting);
          continue;
        }
        if (kept > 0 && waiting.deadline < (queue[kept - 1] as Waiting<T, R>).deadline) ordered = false;
        earliest = Math.min(earliest, waiting.deadline);
        queue[kept++] = waiting;
      }
      queue.length = kept;
      queue.earliest = earliest;
      queue.ordered = ordered;
    }
    if (dropped.length === 0) return false;
    this.queued -= dropped.length;
    this.inLine -= dropped.length;
    if (queue.length === 0) this.line.delete(key);
    this.checkCounters();
    this.observer?.dropped?.(dropped.length);
    for (const waiting of dropped) waiting.to.settle(waiting.index, new Rejected(late.error()));
    return queue.length === 0;
  }

  /** Fewer than eagerCallsMax calls without a long batch are out, or the keys in line fill a call. */
  private mayCall(): boolean {
    return (
      this.running - this.runningLong < this.eagerCallsMax ||
      this.line.size >= this.options.keysMax ||
      this.inLine >= this.options.batchMax
    );
  }

  private dispatch(): void {
    this.pausedUntil = Number.POSITIVE_INFINITY;
    while (this.running < this.options.concurrencyMax) {
      const call = this.take(this.mayCall());
      if (call === undefined) break;
      const long = call.some(({ batch }) => batch.length >= this.longBatchMin);
      this.running++;
      if (long) this.runningLong++;
      void this.run(call).finally(() => {
        this.running--;
        if (long) this.runningLong--;
        for (const { key, batch } of call) {
          if (this.options.oneCallPerKey) {
            const meanwhile = this.out.get(key) as KeyQueue<T, R>;
            this.out.delete(key);
            if (meanwhile.length > 0) {
              this.line.set(key, meanwhile);
              this.inLine += meanwhile.length;
            }
          }
          const inFlight = this.keyInFlight.get(key);
          invariant(
            inFlight === undefined ? this.keyInFlightMax === Number.POSITIVE_INFINITY : inFlight >= batch.length,
            'keyed_batcher_key_in_flight',
            () => ({ inFlight, batch: batch.length }),
          );
          if (inFlight === batch.length) this.keyInFlight.delete(key);
          else if (inFlight !== undefined) this.keyInFlight.set(key, inFlight - batch.length);
        }
        this.checkCounters();
        // `turn`: the freed slot's next call leaves at the end of this turn too, with every event that arrives in it
        // (the edge: the HTTP requests read in the same poll phase as the reply), not with those queued so far.
        if (this.options.leave === 'turn') this.schedule();
        else this.dispatch();
      });
    }
    if (this.pausedUntil < this.pauseTimerAt && !this.closed) {
      clearTimeout(this.pauseTimer);
      this.pauseTimerAt = this.pausedUntil;
      this.pauseTimer = setTimeout(
        () => {
          this.pauseTimer = undefined;
          this.pauseTimerAt = Number.POSITIVE_INFINITY;
          this.schedule();
        },
        Math.max(0, this.pausedUntil - performance.now()),
      );
      // Only what waits for it needs it; the process's own handles (its server, its connections) keep it alive.
      this.pauseTimer.unref();
    }
    this.observer?.queued?.(this.queued);
  }

  /**
   * Closes the batcher: every event still waiting (in line, or behind its key's call) is rejected with
   * BatcherClosedError, and so is every event submitted from now on; the pause timer stops. The calls out end as they
   * would, each answering its own events.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.pauseTimer);
    this.pauseTimer = undefined;
    this.pauseTimerAt = Number.POSITIVE_INFINITY;
    const waiting: Array<Waiting<T, R>> = [];
    for (const queue of [...this.line.values(), ...this.out.values()]) {
      for (const event of queue) waiting.push(event);
      queue.length = 0;
    }
    this.line.clear();
    this.inLine = 0;
    this.queued -= waiting.length;
    invariant(this.queued === 0, 'keyed_batcher_closed_empty', () => ({ queued: this.queued }));
    this.observer?.queued?.(this.queued);
    const error = new BatcherClosedError();
    for (const { to, index } of waiting) to.settle(index, new Rejected(error));
  }

  /** Sends one call and answers each of its events; never throws. */
  private async run(call: Array<Taken<T, R>>): Promise<void> {
    const batches = call.map(({ batch }) => batch.map((waiting) => waiting.item));
    try {
      this.observer?.sent?.(batches);
    } catch (error) {
      // The observer's fault (metrics) must not cost the call's events their answers, nor the process its life.
      reportBroken('keyed_batcher_observer_threw', () => ({ error: String(error) }));
    }
    const pacer = this.options.pacer;
    const sentAt = pacer === undefined ? 0 : performance.now();
    let outcomes: Array<Array<Outcome<R>>> = [];
    let failure: { error: unknown } | undefined;
    try {
      outcomes = await this.policy.send(batches);
    } catch (error) {
      failure = { error };
    }
    const endedAt = pacer === undefined ? 0 : performance.now();
    if (failure === undefined) {
      for (const [i, { batch }] of call.entries()) this.answer(batch, outcomes[i] ?? []);
    } else {
      // Each key's batch meets the call's failure as if it had failed alone, one after the other.
      for (const [i, { batch }] of call.entries()) {
        this.answer(batch, await this.recovered(batches[i] as T[], failure.error));
      }
    }
    // After the answers (a pacer's fault cannot make a call look failed), before the freed slot's next call is formed
    // (`finally` in dispatch); a failed call ended too, when its failure came.
    if (pacer === undefined) return;
    try {
      pacer.ended(
        call.map(({ key, batch }) => ({ key, size: batch.length })),
        sentAt,
        endedAt,
      );
    } catch (error) {
      reportBroken('keyed_batcher_pacer_threw', () => ({ error: String(error) }));
    }
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
      const outcome = outcomes[i] ?? new Rejected(new Error('the batch answered fewer events than it held'));
      waiting.to.settle(waiting.index, outcome);
    });
  }
}
