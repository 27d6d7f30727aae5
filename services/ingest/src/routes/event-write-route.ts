// Which subject the edge's event writes take. The edge proposes each event's decision id and sends its event writes
// on the ledger's proposed-id subjects (RecordEventWithProposedId, RecordEventsWithProposedIds), which only ledgers
// that decide with those ids serve; the transport copies them after a per-try timeout (transport/deadline.ts). A
// ledger of an earlier release serves only RecordEvent(s): it would decide under an id of its own, and another copy
// finding that decision would answer the request as a replay. So while no ledger serves the proposed-id subjects (an
// upgrade's first moments, a rollback), event writes go to RecordEvent(s), never copied: for FALLBACK_MS after a
// request found no responders, then the proposed-id subject is tried again.
import type { CallOptions } from '#runtime/transport/operation.ts';

/** How long event writes go uncopied to RecordEvent(s) after the proposed-id subject found no responders. */
export const FALLBACK_MS = 5000;

export class EventWriteRoute {
  private fallbackUntil = Number.NEGATIVE_INFINITY;
  private readonly onFallback: (() => void) | undefined;

  /** `onFallback`: called each time event writes begin FALLBACK_MS on RecordEvent(s). */
  constructor(onFallback?: () => void) {
    this.onFallback = onFallback;
  }

  /**
   * `send(true)` (the proposed-id subject, copies allowed), or `send(false)` (RecordEvent(s), uncopied) when no ledger
   * serves the first lately or this request finds none; `options` is the call's (its `copied` answer is kept).
   */
  async send<T>(options: CallOptions, send: (proposedIds: boolean) => Promise<T>): Promise<T> {
    if (performance.now() >= this.fallbackUntil) {
      options.failNoResponders = true;
      try {
        return await send(true);
      } catch (error) {
        // Delivered to no one: nothing was decided, so the request is free to go elsewhere.
        if (!options.noResponders) throw error;
        // Requests out together may each find none: one fallback, told once.
        const now = performance.now();
        if (now >= this.fallbackUntil) this.onFallback?.();
        this.fallbackUntil = now + FALLBACK_MS;
      } finally {
        options.failNoResponders = false;
        options.noResponders = false;
      }
    }
    return await send(false);
  }
}
