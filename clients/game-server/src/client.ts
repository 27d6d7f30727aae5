// The game server's client: events go into a pipeline that groups them by size (at most 100 events and 1 MiB per
// batch request) and by time (a linger after the first one waits), sends at most a few requests at once, and makes
// `record()` wait while too many events are unsettled (backpressure). Each event is serialized once and every send
// of it carries those bytes. What is retried is what the service's contract allows: a 503 (the whole request's, after
// its Retry-After; a batch item's, alone, backing off from 1 s), a gateway's 502/504 or 429, and a request that got no
// answer (its outcome is unknown: the same eventId answers the stored decision if one was made). A decision
// (accepted or rejected) and a 4xx are final. `RateLimit` r=0 holds the game's events until its t seconds passed,
// instead of sending events the service would store as `rate_limited`. flush() and close() settle every event.
import {
  BATCH_BODY_BYTES_MAX,
  BATCH_EVENTS_MAX,
  batchBody,
  batchBodyBytes,
  type GameEventInput,
  parseSerializedEvent,
  type SerializedEvent,
  serializeEvent,
} from './event.ts';
import { type HeaderReader, parseQuota, type Quota, retryAfterMs } from './quota.ts';

export const EVENTS_PATH = '/api/game-sdk/v2/events';
export const EVENTS_BATCH_PATH = '/api/game-sdk/v2/events/batch';

/** A decision of the service (`GameEventResult`): `status` and `reason` say whether it paid. */
export interface GameEventResult {
  id: string;
  eventId: string;
  gameId: string;
  organizationId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: number;
  createdAt: string;
  /** True when this answers an earlier send of the same event (a retry whose first send had been decided). */
  replayed: boolean;
  mode: 'sandbox';
}

/** What became of one event. */
export type EventOutcome =
  /** Decided (accepted or rejected): final; a rejection stays a rejection. */
  | { kind: 'decided'; eventId: string; decision: GameEventResult; attempts: number }
  /** A final error for this payload (4xx: `invalid_event`, `invalid_player`, `event_conflict`, `invalid_key`...). */
  | { kind: 'failed'; eventId: string; status: number; code: string; message: string; attempts: number }
  /**
   * No answer that settles it before the retries stopped (the retry period ended, or close() gave up): it may or may
   * not have been decided. Resend `body` later (parseSerializedEvent): it answers the stored decision if one was made.
   */
  | { kind: 'unknown'; eventId: string; body: string; lastError: string; attempts: number };

/** What record() answers once the event is in the pipeline. */
export interface RecordedEvent {
  readonly eventId: string;
  /** The exact body every send of this event carries. */
  readonly body: string;
  /** Resolves once the event is settled; never rejects. */
  readonly outcome: Promise<EventOutcome>;
}

/** The part of a fetch response the client reads. */
export interface FetchResponseLike {
  status: number;
  headers: HeaderReader;
  text(): Promise<string>;
}

/** The part of fetch the client calls (globalThis.fetch by default). */
export type FetchLike = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<FetchResponseLike>;

export interface RetryNotice {
  eventIds: readonly string[];
  baseUrl: string;
  /** `transport` (no answer: refused, reset, timed out), `status` (a retryable status), `item` (a batch item's 503). */
  cause: 'transport' | 'status' | 'item';
  status: number | undefined;
  error: string;
  delayMs: number;
}

export interface HoldNotice {
  /** Until when the game's events are held (epoch milliseconds). */
  untilMs: number;
  eventsWaiting: number;
  quota: Quota;
}

export interface GameServerClientOptions {
  /** The service's base URL, or several (replicas or regions): requests go round robin; one that fails rests. */
  baseUrl: string | readonly string[];
  /** The game's secret key (`cr_sk_sandbox_...`). Never ship it in a game client. */
  secretKey: string;
  /** Events in one batch request at most (1 to 100; default 100). */
  maxBatchEvents?: number;
  /** A batch request's body at most, in bytes (default 1,048,576; lower it to fit a proxy's body limit). */
  maxBatchBytes?: number;
  /** How long the first event of a group waits for others before the group leaves (default 20 ms; 0: at once). */
  lingerMs?: number;
  /** Events recorded and not yet settled at most; record() waits while the bound is reached (default 1,000). */
  maxPendingEvents?: number;
  /** Requests in flight at once (default 4). */
  maxRequestsInFlight?: number;
  /** A request without an answer after this is abandoned and its events retried (default 30,000 ms). */
  requestTimeoutMs?: number;
  /** The first retry's delay where no Retry-After says one (default 1,000 ms); doubled each retry. */
  retryDelayMinMs?: number;
  /** The retry delay at most (default 30,000 ms). */
  retryDelayMaxMs?: number;
  /** An event is retried for at most this long after it was recorded, then settles `unknown` (default 600,000 ms). */
  retryForMs?: number;
  /** Hold events while `RateLimit` says r=0, until its t seconds passed (default true). */
  holdOnRateLimit?: boolean;
  /** Each answer's quota fields, as they arrive. */
  onQuota?: (quota: Quota) => void;
  /** Each time events start being held for the rate limit. */
  onHold?: (hold: HoldNotice) => void;
  /** Each retry being scheduled. */
  onRetry?: (retry: RetryNotice) => void;
  fetch?: FetchLike;
}

/** record() after close(). */
export class ClientClosedError extends Error {
  override readonly name = 'ClientClosedError';
}

interface Pending {
  readonly event: SerializedEvent;
  readonly recordedAtMs: number;
  /** When it entered the ready queue; 0 for a retry (it waited already: no linger). */
  readyAtMs: number;
  attempts: number;
  /** The next retry's number for a batch item's 503 or a failed request (the backoff's exponent). */
  retries: number;
  lastError: string;
  settled: boolean;
  resolve(outcome: EventOutcome): void;
}

interface ServiceError {
  code: string;
  message: string;
}

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

export class GameServerClient {
  private readonly baseUrls: readonly string[];
  private readonly secretKey: string;
  private readonly maxBatchEvents: number;
  private readonly maxBatchBytes: number;
  private readonly lingerMs: number;
  private readonly maxPendingEvents: number;
  private readonly maxRequestsInFlight: number;
  private readonly requestTimeoutMs: number;
  private readonly retryDelayMinMs: number;
  private readonly retryDelayMaxMs: number;
  private readonly retryForMs: number;
  private readonly holdOnRateLimit: boolean;
  private readonly options: GameServerClientOptions;
  private readonly fetch: FetchLike;

  /** Events ready to leave, oldest first (retries go to the front). */
  private readonly ready: Pending[] = [];
  /** Every unsettled event: ready, in flight or waiting for a retry. */
  private readonly unsettled = new Set<Pending>();
  private readonly roomWaiters: Array<() => void> = [];
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly aborts = new AbortController();
  private requestsInFlight = 0;
  private eventsInFlight = 0;
  private nextBaseUrl = 0;
  private readonly restingUntilMs = new Map<string, number>();
  private readonly consecutiveFailures = new Map<string, number>();
  private lingerTimer: ReturnType<typeof setTimeout> | undefined;
  private lingerDueMs = 0;
  private flushing = 0;
  private closed = false;
  private lastQuota: Quota | undefined;
  /** Fresh events that may still be sent in the rate limit's current window (undefined: not known). */
  private allowance: number | undefined;
  private allowanceResetsAtMs = 0;
  private holdNoticeFor = 0;
  private readonly counters = { requests: 0, transportFailures: 0, retries: 0, holds: 0 };

  constructor(options: GameServerClientOptions) {
    const urls = typeof options.baseUrl === 'string' ? [options.baseUrl] : [...options.baseUrl];
    if (urls.length === 0) throw new TypeError('baseUrl: at least one URL');
    this.baseUrls = urls.map((url) => url.replace(/\/+$/, ''));
    if (!options.secretKey) throw new TypeError('secretKey is required');
    this.secretKey = options.secretKey;
    this.maxBatchEvents = bounded('maxBatchEvents', options.maxBatchEvents ?? BATCH_EVENTS_MAX, 1, BATCH_EVENTS_MAX);
    this.maxBatchBytes = bounded(
      'maxBatchBytes',
      options.maxBatchBytes ?? BATCH_BODY_BYTES_MAX,
      1,
      BATCH_BODY_BYTES_MAX,
    );
    this.lingerMs = bounded('lingerMs', options.lingerMs ?? 20, 0, 60_000);
    this.maxPendingEvents = bounded('maxPendingEvents', options.maxPendingEvents ?? 1_000, 1, 10_000_000);
    this.maxRequestsInFlight = bounded('maxRequestsInFlight', options.maxRequestsInFlight ?? 4, 1, 1_000);
    this.requestTimeoutMs = bounded('requestTimeoutMs', options.requestTimeoutMs ?? 30_000, 1, 3_600_000);
    this.retryDelayMinMs = bounded('retryDelayMinMs', options.retryDelayMinMs ?? 1_000, 0, 3_600_000);
    this.retryDelayMaxMs = bounded(
      'retryDelayMaxMs',
      options.retryDelayMaxMs ?? 30_000,
      this.retryDelayMinMs,
      3_600_000,
    );
    this.retryForMs = bounded('retryForMs', options.retryForMs ?? 600_000, 0, 86_400_000);
    this.holdOnRateLimit = options.holdOnRateLimit ?? true;
    this.options = options;
    this.fetch = options.fetch ?? (globalThis.fetch as unknown as FetchLike);
  }

  /**
   * Puts an event in the pipeline; waits first while `maxPendingEvents` events are unsettled. Throws
   * InvalidEventError for an event no send could get through, ClientClosedError after close().
   */
  async record(event: GameEventInput | Pick<SerializedEvent, 'body'>): Promise<RecordedEvent> {
    if (this.closed) throw new ClientClosedError('the client is closed');
    const serialized =
      'body' in event && typeof event.body === 'string'
        ? parseSerializedEvent(event.body)
        : serializeEvent(event as GameEventInput);
    while (this.unsettled.size >= this.maxPendingEvents) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (this.closed) throw new ClientClosedError('the client is closed');
    }
    let resolve!: (outcome: EventOutcome) => void;
    const outcome = new Promise<EventOutcome>((r) => (resolve = r));
    const now = Date.now();
    const pending: Pending = {
      event: serialized,
      recordedAtMs: now,
      readyAtMs: now,
      attempts: 0,
      retries: 0,
      lastError: '',
      settled: false,
      resolve,
    };
    this.unsettled.add(pending);
    this.ready.push(pending);
    this.pump();
    return { eventId: serialized.eventId, body: serialized.body, outcome };
  }

  /** record() and its outcome. */
  async send(event: GameEventInput | Pick<SerializedEvent, 'body'>): Promise<EventOutcome> {
    return (await this.record(event)).outcome;
  }

  /** Sends what waits without lingering and resolves once every event recorded so far is settled. */
  async flush(): Promise<void> {
    if (this.unsettled.size === 0) return;
    const waiting = [...this.unsettled].map(
      (pending) => new Promise<void>((resolve) => this.onSettled(pending, resolve)),
    );
    this.flushing++;
    try {
      this.pump();
      await Promise.all(waiting);
    } finally {
      this.flushing--;
    }
  }

  /**
   * Refuses new events, then flushes. With `timeoutMs`, events still unsettled then (in flight, held, waiting for a
   * retry) settle `unknown` with their bodies, to be resent by the next process.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    this.closed = true;
    for (const wake of this.roomWaiters.splice(0)) wake();
    if (options.timeoutMs === undefined) {
      await this.flush();
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
    });
    const done = await Promise.race([this.flush().then(() => 'flushed' as const), gaveUp]);
    clearTimeout(timer);
    if (done === 'timeout') {
      this.aborts.abort(new ClientClosedError('closed before an answer'));
      for (const pending of [...this.unsettled]) this.settleUnknown(pending, 'closed before the event was settled');
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.clearLinger();
    }
  }

  /** The quota fields of the last answer that carried them (a fresh decision's). */
  get quota(): Quota | undefined {
    return this.lastQuota;
  }

  /** Events recorded and not yet settled. */
  get pendingEvents(): number {
    return this.unsettled.size;
  }

  /** Counts since the client was made: requests sent, requests without an answer, retries scheduled, holds. */
  get stats(): { requests: number; transportFailures: number; retries: number; holds: number } {
    return { ...this.counters };
  }

  // ---- the pipeline

  /** Sends every group that is due, as far as the bounds let it; arms a timer for the rest. */
  private pump(): void {
    if (this.aborts.signal.aborted) return;
    for (;;) {
      if (this.ready.length === 0) {
        // Nothing waits: no timer keeps the process alive for it.
        this.clearLinger();
        return;
      }
      if (this.requestsInFlight >= this.maxRequestsInFlight) return;
      const now = Date.now();
      const limit = this.sendableNow(now);
      if (limit === 0) return;
      const head = this.ready[0] as Pending;
      const due =
        this.flushing > 0 ||
        this.closed ||
        this.ready.length >= Math.min(this.maxBatchEvents, limit) ||
        this.readyBytesReach(this.maxBatchBytes) ||
        now - head.readyAtMs >= this.lingerMs;
      if (!due) {
        this.armLinger(head.readyAtMs + this.lingerMs);
        return;
      }
      void this.sendGroup(this.takeGroup(limit));
    }
  }

  /** How many fresh events may leave now (Infinity: no bound known); 0 holds them, with a timer to look again. */
  private sendableNow(now: number): number {
    if (this.allowance !== undefined && now >= this.allowanceResetsAtMs) {
      // A new window: the policy's limit, less what is already on its way (those may count in it).
      const limit = this.lastQuota?.limit;
      this.allowance = limit === undefined ? undefined : Math.max(0, limit - this.eventsInFlight);
      this.allowanceResetsAtMs = now + (this.lastQuota?.windowSeconds ?? 60) * 1000;
    }
    if (!this.holdOnRateLimit || this.allowance === undefined) return Number.POSITIVE_INFINITY;
    if (this.allowance > 0) return this.allowance;
    const until = this.allowanceResetsAtMs;
    if (this.holdNoticeFor !== until && this.lastQuota) {
      this.holdNoticeFor = until;
      this.counters.holds++;
      this.options.onHold?.({ untilMs: until, eventsWaiting: this.ready.length, quota: this.lastQuota });
    }
    this.armLinger(until);
    return 0;
  }

  private readyBytesReach(bytes: number): boolean {
    let total = 0;
    let count = 0;
    for (const pending of this.ready) {
      total += pending.event.bytes;
      count++;
      if (batchBodyBytes(total, count) >= bytes) return true;
      if (count >= this.maxBatchEvents) return false;
    }
    return false;
  }

  private clearLinger(): void {
    if (this.lingerTimer === undefined) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
  }

  private armLinger(atMs: number): void {
    if (this.lingerTimer !== undefined && this.lingerDueMs <= atMs) return;
    if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
    this.lingerDueMs = atMs;
    this.lingerTimer = setTimeout(
      () => {
        this.lingerTimer = undefined;
        this.pump();
      },
      Math.max(0, atMs - Date.now()),
    );
  }

  private takeGroup(limit: number): Pending[] {
    const group: Pending[] = [];
    let bytes = 0;
    while (this.ready.length > 0 && group.length < Math.min(this.maxBatchEvents, limit)) {
      const next = this.ready[0] as Pending;
      if (group.length > 0 && batchBodyBytes(bytes + next.event.bytes, group.length + 1) > this.maxBatchBytes) break;
      bytes += next.event.bytes;
      group.push(this.ready.shift() as Pending);
    }
    return group;
  }

  private pickBaseUrl(now: number): string {
    let best: string | undefined;
    for (let i = 0; i < this.baseUrls.length; i++) {
      const url = this.baseUrls[(this.nextBaseUrl + i) % this.baseUrls.length] as string;
      if ((this.restingUntilMs.get(url) ?? 0) <= now) {
        this.nextBaseUrl = (this.nextBaseUrl + i + 1) % this.baseUrls.length;
        return url;
      }
      if (best === undefined || (this.restingUntilMs.get(url) ?? 0) < (this.restingUntilMs.get(best) ?? 0)) best = url;
    }
    return best as string;
  }

  private anotherUrlAnswers(failed: string, now: number): boolean {
    return this.baseUrls.some((url) => url !== failed && (this.restingUntilMs.get(url) ?? 0) <= now);
  }

  /** One request: a group of one to the single endpoint, more to the batch endpoint; the same event bytes either way. */
  private async sendGroup(group: Pending[]): Promise<void> {
    const now = Date.now();
    const baseUrl = this.pickBaseUrl(now);
    const single = group.length === 1;
    const body = single ? (group[0] as Pending).event.body : batchBody(group.map((pending) => pending.event));
    this.requestsInFlight++;
    this.eventsInFlight += group.length;
    if (this.allowance !== undefined) this.allowance = Math.max(0, this.allowance - group.length);
    for (const pending of group) pending.attempts++;
    this.counters.requests++;
    let status: number;
    let headers: HeaderReader;
    let text: string;
    try {
      const response = await this.fetch(`${baseUrl}${single ? EVENTS_PATH : EVENTS_BATCH_PATH}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.secretKey}`, 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.any([this.aborts.signal, AbortSignal.timeout(this.requestTimeoutMs)]),
      });
      status = response.status;
      headers = response.headers;
      text = await response.text();
    } catch (error) {
      this.finishRequest(group.length);
      this.transportFailed(baseUrl, group, describe(error));
      return;
    }
    this.finishRequest(group.length);
    this.consecutiveFailures.delete(baseUrl);
    this.restingUntilMs.delete(baseUrl);
    const receivedAt = Date.now();
    const quota = parseQuota(headers, receivedAt);
    if (quota) this.quotaReceived(quota);
    try {
      if (status === 200) this.decided(baseUrl, group, single, text);
      else if (RETRYABLE_STATUSES.has(status)) {
        const error = serviceError(text, status);
        const delay = retryAfterMs(headers, receivedAt);
        this.retry(baseUrl, group, 'status', status, `${status} ${error.code}: ${error.message}`, delay);
      } else {
        const error = serviceError(text, status);
        for (const pending of group) this.settleFailed(pending, status, error);
      }
    } catch (error) {
      // An answer that is not what the service writes (a proxy's page, a cut body): nothing settles on it.
      this.retry(baseUrl, group, 'transport', status, `unreadable answer: ${describe(error)}`, undefined);
    }
    this.pump();
  }

  private finishRequest(events: number): void {
    this.requestsInFlight--;
    this.eventsInFlight -= events;
  }

  private decided(baseUrl: string, group: Pending[], single: boolean, text: string): void {
    const parsed = JSON.parse(text) as { data?: unknown };
    if (single) {
      const decision = asDecision(parsed.data);
      this.settleDecided(group[0] as Pending, decision);
      return;
    }
    const results = (parsed.data as { results?: unknown } | undefined)?.results;
    if (!Array.isArray(results) || results.length !== group.length) {
      throw new Error(`expected ${group.length} batch results`);
    }
    const decisions = results.map((result: { status?: unknown; data?: unknown; error?: unknown }) =>
      result.status === 200 ? asDecision(result.data) : undefined,
    );
    const again: Pending[] = [];
    let lastError = '';
    group.forEach((pending, i) => {
      const result = results[i] as { status: number; error?: ServiceError };
      const decision = decisions[i];
      if (decision) this.settleDecided(pending, decision);
      else if (result.status === 503) {
        lastError = `503 ${result.error?.code}: ${result.error?.message}`;
        again.push(pending);
      } else {
        this.settleFailed(pending, result.status, {
          code: result.error?.code ?? `http_${result.status}`,
          message: result.error?.message ?? '',
        });
      }
    });
    // A 200 carries no Retry-After: each item backs off on its own, from retryDelayMinMs.
    for (const pending of again) this.retry(baseUrl, [pending], 'item', 503, lastError, undefined);
  }

  private transportFailed(baseUrl: string, group: Pending[], error: string): void {
    this.counters.transportFailures++;
    const failures = (this.consecutiveFailures.get(baseUrl) ?? 0) + 1;
    this.consecutiveFailures.set(baseUrl, failures);
    const now = Date.now();
    this.restingUntilMs.set(baseUrl, now + this.backoffMs(failures));
    // No answer: the outcome is unknown. Another base URL that answers gets the same bytes at once; else back off.
    const delay = this.anotherUrlAnswers(baseUrl, now) ? 0 : undefined;
    this.retry(baseUrl, group, 'transport', undefined, error, delay);
    this.pump();
  }

  private backoffMs(retry: number): number {
    const base = Math.min(this.retryDelayMaxMs, this.retryDelayMinMs * 2 ** Math.max(0, retry - 1));
    return Math.min(this.retryDelayMaxMs, base * (1 + Math.random() * 0.5));
  }

  /** Puts events back after `delayMs` (undefined: their own backoff), unless their retry period is over. */
  private retry(
    baseUrl: string,
    group: Pending[],
    cause: RetryNotice['cause'],
    status: number | undefined,
    error: string,
    delayMs: number | undefined,
  ): void {
    const now = Date.now();
    const again: Pending[] = [];
    let delay = 0;
    for (const pending of group) {
      if (pending.settled) continue;
      pending.lastError = error;
      pending.retries++;
      const wait = delayMs ?? this.backoffMs(pending.retries);
      if (this.closed && this.aborts.signal.aborted) this.settleUnknown(pending, error);
      else if (now + wait > pending.recordedAtMs + this.retryForMs) this.settleUnknown(pending, error);
      else {
        again.push(pending);
        delay = Math.max(delay, wait);
      }
    }
    if (again.length === 0) return;
    this.counters.retries += again.length;
    this.options.onRetry?.({
      eventIds: again.map((pending) => pending.event.eventId),
      baseUrl,
      cause,
      status,
      error,
      delayMs: delay,
    });
    const requeue = () => {
      for (const pending of again) pending.readyAtMs = 0;
      this.ready.unshift(...again.filter((pending) => !pending.settled));
      this.pump();
    };
    if (delay === 0) {
      requeue();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      requeue();
    }, delay);
    this.timers.add(timer);
  }

  private quotaReceived(quota: Quota): void {
    // What may still be sent in this window: r, less the events on their way that it may not have counted yet. Answers
    // of one window may arrive out of order: within it, the lowest estimate stands.
    const estimate = Math.max(0, quota.remaining - this.eventsInFlight);
    const resetsAtMs = quota.receivedAtMs + quota.resetSeconds * 1000;
    const sameWindow = this.allowance !== undefined && Math.abs(resetsAtMs - this.allowanceResetsAtMs) < 1_000;
    this.allowance = sameWindow ? Math.min(this.allowance as number, estimate) : estimate;
    this.allowanceResetsAtMs = resetsAtMs;
    this.lastQuota = quota;
    this.options.onQuota?.(quota);
  }

  // ---- settling

  private settleDecided(pending: Pending, decision: GameEventResult): void {
    this.settle(pending, { kind: 'decided', eventId: pending.event.eventId, decision, attempts: pending.attempts });
  }

  private settleFailed(pending: Pending, status: number, error: ServiceError): void {
    this.settle(pending, {
      kind: 'failed',
      eventId: pending.event.eventId,
      status,
      code: error.code,
      message: error.message,
      attempts: pending.attempts,
    });
  }

  private settleUnknown(pending: Pending, error: string): void {
    this.settle(pending, {
      kind: 'unknown',
      eventId: pending.event.eventId,
      body: pending.event.body,
      lastError: error,
      attempts: pending.attempts,
    });
  }

  private readonly settledCallbacks = new Map<Pending, Array<() => void>>();

  private onSettled(pending: Pending, callback: () => void): void {
    const callbacks = this.settledCallbacks.get(pending);
    if (callbacks) callbacks.push(callback);
    else this.settledCallbacks.set(pending, [callback]);
  }

  private settle(pending: Pending, outcome: EventOutcome): void {
    if (pending.settled) return;
    pending.settled = true;
    this.unsettled.delete(pending);
    const index = this.ready.indexOf(pending);
    if (index >= 0) this.ready.splice(index, 1);
    pending.resolve(outcome);
    for (const callback of this.settledCallbacks.get(pending) ?? []) callback();
    this.settledCallbacks.delete(pending);
    this.roomWaiters.shift()?.();
  }
}

function bounded(name: string, value: number, min: number, max: number): number {
  if (!Number.isFinite(value) || value < min || value > max) throw new RangeError(`${name}: ${min} to ${max}`);
  return value;
}

function describe(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (a VM context), where instanceof Error is false.
  const message = (value: unknown): string | undefined =>
    typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string'
      ? (value as { message: string }).message
      : undefined;
  const own = message(error) ?? String(error);
  const cause = message((error as { cause?: unknown } | null)?.cause);
  return cause === undefined ? own : `${own}: ${cause}`;
}

function serviceError(text: string, status: number): ServiceError {
  try {
    const error = (JSON.parse(text) as { error?: Partial<ServiceError> }).error;
    if (error && typeof error.code === 'string') return { code: error.code, message: error.message ?? '' };
  } catch {
    // not the service's envelope (a proxy's answer)
  }
  return { code: `http_${status}`, message: text.slice(0, 200) };
}

function asDecision(data: unknown): GameEventResult {
  const decision = data as Partial<GameEventResult> | undefined;
  if (
    !decision ||
    typeof decision.eventId !== 'string' ||
    (decision.status !== 'accepted' && decision.status !== 'rejected')
  ) {
    throw new Error('not a decision');
  }
  return decision as GameEventResult;
}
