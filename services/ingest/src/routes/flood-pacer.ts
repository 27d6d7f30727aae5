// Pacing a flood while other keys need the service: the keyed batcher's non-work-conserving share.
//
// Round robin and the per-key in-flight bound (keyed-batcher.ts) give another game its turn in every queue; they
// cannot give it the CPU. On a saturated machine a flooding game's events keep every process busy (the edge's HTTP
// requests, NATS, the ledger, PostgreSQL), and another game's event then waits in each one's run queue on its way:
// its median doubled beside a flood with no queue of ours holding it (docs/reliability.md, "Fair ingest").
//
// The pacer leaves that CPU to the other keys, and only while they need it. The signal is the round trip of the
// short calls (the other keys' events: a flood travels in long batches of its own, `longBatchMin` events of one key)
// against the quiet round trip, the lowest one seen in the last `floorWindowMs` or the one before. While the short
// calls take more than `target` times the quiet round trip, the pace grows; while they take less it shrinks. A flood
// is a key whose last `floodCalls` calls all held `floodBatchMin` events of it, its in-flight bound's worth (a backlog
// that lasts: a game server's batch requests, or two of them meeting in one call, are not one), and it then waits
// `pace` times each call's duration after it before its next call leaves, so a flood runs at a duty cycle of
// 1 / (1 + pace), at least 1 / (1 + paceMax); and its calls are one long batch at a time (`inFlightMax`). Measured: a
// uniform load of batch requests was slowed by pacing every long batch, not by pacing floods only. With no short call
// for `quietMs` the pace is 0: a flood alone, or several floods together (every call long), are never paced, and the
// machine is given back as soon as nobody else is waiting for it. The events a paced key holds wait in its queue, as
// past its in-flight bound: nothing is refused, and each answer is the decision it would have had.
//
// What the pacer keeps per key (a flood's run of calls, a paced key's time to resume) is forgotten once the key has had
// no call for `forgetMs`: keys that flooded once, or that were rotated, do not stay for ever.

import type { KeyPacer } from '#runtime/batching/key-pacer.ts';
import { invariant } from '#runtime/invariant.ts';

export interface FloodPacerOptions {
  /** A key's batch of at least this many events is a long one (the batcher's `longBatchMin`). */
  longBatchMin: number;
  /**
   * A call with at least this many events of one key (its in-flight bound's worth: a backlog that fills its bound) is
   * a flood's; a batch between `longBatchMin` and this (a game server's batch request) is not, unless the key is a
   * flood already (a paced flood's calls: `inFlightMax`).
   */
  floodBatchMin: number;
  /** A key whose last this many calls were a flood's (`floodBatchMin`) is a flood. */
  floodCalls: number;
  /**
   * The short calls may take up to this many times the quiet round trip before floods are paced (1 or less: a flood is
   * paced whenever other keys send).
   */
  target: number;
  /** The most a flood waits after a call, in that call's durations. */
  paceMax: number;
  /** How much the pace changes with each short call that was slow (and half of it with each that was not). */
  paceStep: number;
  /** No short call for this long: nobody else waits, the pace is 0. */
  quietMs: number;
  /** The quiet round trip is the lowest of this window's short calls or of the window before. */
  floorWindowMs: number;
  /**
   * A key with no call ended for this long is forgotten (its run of flood calls, its pending wait): a flood is a
   * backlog that lasts, whose calls follow each other within its calls' durations times `paceMax`.
   */
  forgetMs: number;
}

/** What the pacer did, for metrics. */
export interface FloodPacerObserver {
  /** A flood's call ended and its key's next call waits. */
  paused?(): void;
}

export const FLOOD_PACER_DEFAULTS: Omit<FloodPacerOptions, 'longBatchMin' | 'floodBatchMin' | 'target'> = {
  floodCalls: 8,
  paceMax: 2,
  paceStep: 0.25,
  quietMs: 1_000,
  floorWindowMs: 10_000,
  forgetMs: 10_000,
};

export class FloodPacer implements KeyPacer {
  private readonly options: FloodPacerOptions;
  private readonly observer: FloodPacerObserver | undefined;
  /** Waits of a flood after a call, in that call's durations. */
  private pace = 0;
  /** The short calls' round trip over the quiet one, smoothed over the last few calls. */
  private slowness = 1;
  private lastShortAt = Number.NEGATIVE_INFINITY;
  private floorNow = Number.POSITIVE_INFINITY;
  private floorBefore = Number.POSITIVE_INFINITY;
  private floorSince = Number.NEGATIVE_INFINITY;
  /** Paced keys: when their next call may leave. */
  private readonly resumeAt = new Map<string, number>();
  /** Keys whose last call was a flood's (see ended): how many of their calls in a row were, and when the last ended. */
  private readonly floodRuns = new Map<string, { calls: number; endedAt: number }>();
  /** When the keys not seen for `forgetMs` were last forgotten. */
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(options: FloodPacerOptions, observer?: FloodPacerObserver) {
    const counts = [options.longBatchMin, options.floodCalls];
    const valid =
      options.target > 0 &&
      options.paceMax > 0 &&
      options.paceStep > 0 &&
      options.forgetMs > 0 &&
      counts.every((n) => n >= 1);
    if (!valid || options.floodBatchMin < options.longBatchMin) {
      throw new Error(`invalid flood pacer options ${JSON.stringify(options)}`);
    }
    this.options = options;
    this.observer = observer;
  }

  /** The current pace (a flood's wait after a call, in that call's durations); 0 when nobody else is waiting. */
  currentPace(now: number): number {
    return now - this.lastShortAt > this.options.quietMs ? 0 : this.pace;
  }

  notBefore(key: string, now: number): number {
    const at = this.resumeAt.get(key);
    if (at === undefined) return now;
    if (at <= now || this.currentPace(now) === 0) {
      this.resumeAt.delete(key);
      return now;
    }
    return at;
  }

  /**
   * A paced flood's calls are one long batch at a time, the shortest there is (`longBatchMin` events): each of its
   * calls is a burst of work in every process on its way (its HTTP answers and its client's next requests at the
   * edge, its decisions in the ledger and PostgreSQL), and another key's event that meets one waits for that CPU on
   * two shared cores. A shorter burst shortens another game's wait behind it (measured: docs/reliability.md, "Fair
   * ingest"). A flood nobody else waits for keeps the batcher's bound.
   */
  inFlightMax(key: string, now: number): number | undefined {
    if (this.currentPace(now) === 0) return undefined;
    return (this.floodRuns.get(key)?.calls ?? 0) >= this.options.floodCalls ? this.options.longBatchMin : undefined;
  }

  /** Keys remembered (a flood's run, a pending wait): for tests. */
  get keysKept(): number {
    return new Set([...this.floodRuns.keys(), ...this.resumeAt.keys()]).size;
  }

  /** Entries of its per-key maps: paced keys' times to resume, floods' runs of calls. */
  get sizes(): { resumeAt: number; floodRuns: number } {
    return { resumeAt: this.resumeAt.size, floodRuns: this.floodRuns.size };
  }

  ended(batches: ReadonlyArray<{ key: string; size: number }>, sentAt: number, endedAt: number): void {
    const ms = endedAt - sentAt;
    this.forgetIdle(endedAt);
    let long = false;
    for (const { key, size } of batches) {
      if (size < this.options.longBatchMin) {
        this.floodRuns.delete(key);
        continue;
      }
      long = true;
      const run = this.floodRuns.get(key);
      const before = run?.calls ?? 0;
      // A long batch short of a backlog: a game server's batch request, unless the key is a flood already.
      if (size < this.options.floodBatchMin && before < this.options.floodCalls) {
        this.floodRuns.delete(key);
        continue;
      }
      const calls = before + 1;
      if (run === undefined) this.floodRuns.set(key, { calls, endedAt });
      else {
        run.calls = calls;
        run.endedAt = Math.max(run.endedAt, endedAt);
      }
      const pace = this.currentPace(endedAt);
      if (pace > 0 && calls >= this.options.floodCalls) {
        const at = endedAt + ms * pace;
        invariant(pace <= this.options.paceMax && at >= endedAt, 'flood_pacer_resume_at', () => ({
          pace,
          ms,
          endedAt,
          at,
        }));
        this.resumeAt.set(key, at);
        this.observer?.paused?.();
      }
    }
    if (!long) this.short(ms, endedAt);
  }

  /**
   * Forgets the keys with no call ended for `forgetMs` and the waits that have passed, at most once per `forgetMs`
   * (each entry is read once per sweep: a constant cost per call ended).
   */
  private forgetIdle(now: number): void {
    const { forgetMs } = this.options;
    if (now - this.sweptAt < forgetMs) return;
    this.sweptAt = now;
    for (const [key, run] of this.floodRuns) if (now - run.endedAt >= forgetMs) this.floodRuns.delete(key);
    for (const [key, at] of this.resumeAt) if (at <= now) this.resumeAt.delete(key);
  }

  /** A call without a flood's batch took `ms`: the other keys' round trip against the quiet one. */
  private short(ms: number, now: number): void {
    const { quietMs, floorWindowMs, target, paceStep, paceMax } = this.options;
    if (now - this.lastShortAt > quietMs) {
      this.pace = 0;
      this.slowness = 1;
    }
    this.lastShortAt = now;
    if (now - this.floorSince >= floorWindowMs) {
      this.floorBefore = this.floorNow;
      this.floorNow = Number.POSITIVE_INFINITY;
      this.floorSince = now;
    }
    this.floorNow = Math.min(this.floorNow, ms);
    const floor = Math.max(Math.min(this.floorNow, this.floorBefore), 0.1);
    this.slowness = 0.8 * this.slowness + 0.2 * (ms / floor);
    if (this.slowness > target) this.pace = Math.min(paceMax, this.pace + paceStep);
    else this.pace = Math.max(0, this.pace - paceStep / 2);
    invariant(this.pace >= 0 && this.pace <= paceMax, 'flood_pacer_pace', () => ({ pace: this.pace, paceMax }));
  }
}
