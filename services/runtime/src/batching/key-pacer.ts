// What the keyed batcher (keyed-batcher.ts) asks of a pacer: when a key's next call may leave, and how many of its
// events may be out at once. The batcher is shared; the pacer it is given is its program's own (ingest's flood pacer).

/** When a key's next call may leave, and what the calls that ended took. */
export interface KeyPacer {
  /** performance.now() time before which the key's next call may not leave; at or before `now`: it may. */
  notBefore(key: string, now: number): number;
  /**
   * The most events the key may have in calls out now, if the pacer bounds it below the batcher's own bound;
   * undefined: the batcher's bound.
   */
  inFlightMax?(key: string, now: number): number | undefined;
  /** A call ended: each key's events in it, when it left and when its answer came (performance.now() times). */
  ended(batches: ReadonlyArray<{ key: string; size: number }>, sentAt: number, endedAt: number): void;
}
