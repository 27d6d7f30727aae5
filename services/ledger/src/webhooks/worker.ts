// The webhook delivery worker: a role of every ledger process (docs/decisions.md, "Webhooks"). Every
// WEBHOOK_POLL_INTERVAL_MS (sooner after a claim or a finished attempt) it makes the messages of the decisions made
// since (repository.ts expandDecisionBatches: ledger.record_events writes them as rows of pairs), claims due
// messages (repository.ts claim: FOR UPDATE SKIP LOCKED under a lease, at most WEBHOOK_IN_FLIGHT_PER_ENDPOINT in
// flight per endpoint across every replica), sends each once (sender.ts), and records the attempt and what follows
// in one transaction (finish): delivered on a 2xx; otherwise due again after an exponential backoff with jitter
// (WEBHOOK_RETRY_BASE_MS doubling per attempt, at most WEBHOOK_RETRY_DELAY_MAX_MS (4 hours), times 0.5..1.5) until
// 24 hours after its retries began, then failed. An endpoint whose attempts have all failed for
// WEBHOOK_DISABLE_AFTER_HOURS is disabled (reason `failing`, shown by the console's reads). And every
// BACKLOG_CHECK_INTERVAL_MS, an endpoint with more than WEBHOOK_PENDING_PER_ENDPOINT_MAX messages pending (made since
// it was last changed) is disabled (reason `backlog`): its outbox stops growing instead of filling the database, and
// the developer sees why and enables it again once its receiver keeps up (its pending messages are still delivered
// meanwhile, and the count starts again from the change).
import { Counter, Histogram } from 'prom-client';
import { invariant } from '#runtime/invariant.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { messageBody } from './body.ts';
import type { AttemptNext, ClaimedMessage, WebhookRepository } from './repository.ts';
import { decryptSecret, signWebhook } from './secrets.ts';
import { type SendResult, sendWebhook, WEBHOOK_TIMEOUT_MS } from './sender.ts';

/** Retries go on until this long after they began (CONTRACT section 11.1: at least 24 hours). */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3600_000;
/** The longest pause between two attempts (the default of WEBHOOK_RETRY_DELAY_MAX_MS). */
export const WEBHOOK_RETRY_DELAY_MAX_MS = 4 * 3600_000;
/**
 * Rows of decision pairs (one per call of ledger.record_events) made into messages per poll: a poll that took this
 * many is followed at once by the next, so a backlog drains in statements of a bounded size.
 */
const DECISION_BATCHES_PER_POLL = 50;
/** How often a worker looks for endpoints past WEBHOOK_PENDING_PER_ENDPOINT_MAX. */
export const BACKLOG_CHECK_INTERVAL_MS = 30_000;
/** The default of WEBHOOK_PENDING_PER_ENDPOINT_MAX: messages pending for one endpoint before it is disabled. */
export const WEBHOOK_PENDING_PER_ENDPOINT_MAX_DEFAULT = 50_000;
/** A claim lasts the timeout plus a margin: no replica sends the message again meanwhile. */
const LEASE_MARGIN_MS = 15_000;

export interface WebhookWorkerOptions {
  pollIntervalMs: number;
  inFlightPerEndpoint: number;
  /** Most messages in flight in this process. */
  inFlightMax: number;
  /**
   * Most messages of one organization in flight in this process (default half of inFlightMax): a tenant whose
   * receivers are slow can hold no more, so the others' deliveries always find room.
   */
  inFlightPerOrganization?: number;
  retryBaseMs: number;
  /** The longest pause between two attempts (default WEBHOOK_RETRY_DELAY_MAX_MS). */
  retryDelayMaxMs?: number;
  disableAfterMs: number;
  /** Messages pending for one endpoint past which it is disabled (reason `backlog`). Default 50,000. */
  pendingPerEndpointMax?: number;
  /** How often to look for such endpoints (default BACKLOG_CHECK_INTERVAL_MS). */
  backlogCheckIntervalMs?: number;
  allowPrivateAddresses: boolean;
  /** 443, 80 and WEBHOOK_ALLOWED_PORTS (default: 443 and 80). */
  allowedPorts?: readonly number[];
  timeoutMs?: number;
}

/** The pause after failed attempt number `attempt` (1-based): exponential, capped, with jitter. */
export function retryDelayMs(
  attempt: number,
  baseMs: number,
  random: () => number = Math.random,
  maxMs = WEBHOOK_RETRY_DELAY_MAX_MS,
): number {
  const exponential = Math.min(baseMs * 2 ** Math.min(attempt - 1, 40), maxMs);
  return Math.round(exponential * (0.5 + random()));
}

/** What follows an attempt's result. */
export function nextAfter(
  result: SendResult,
  message: { attempt: number; retryStartedAtMs: number },
  nowMs: number,
  baseMs: number,
  maxMs = WEBHOOK_RETRY_DELAY_MAX_MS,
): AttemptNext {
  if (result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300)
    return { kind: 'delivered' };
  if (nowMs - message.retryStartedAtMs >= WEBHOOK_RETRY_WINDOW_MS) return { kind: 'failed' };
  return { kind: 'retry', retryInMs: retryDelayMs(message.attempt, baseMs, Math.random, maxMs) };
}

export class WebhookWorker {
  private readonly repository: WebhookRepository;
  private readonly secretKey: () => Promise<Buffer>;
  private readonly options: WebhookWorkerOptions;
  private readonly logger: Logger;
  private readonly attempts: Counter<'outcome'> | undefined;
  private readonly latency: Histogram | undefined;
  private readonly disabledForBacklog: Counter | undefined;
  /** When this worker last looked for endpoints past their backlog bound (performance.now()). */
  private backlogCheckedAt = Number.NEGATIVE_INFINITY;
  private readonly inFlight = new Set<Promise<void>>();
  /** Messages in flight in this process, by organization (the keys are removed at zero). */
  private readonly inFlightByOrganization = new Map<string, number>();
  /** The last endpoint claimed: the next claim's round robin starts after it. */
  private lastEndpoint: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<unknown> | undefined;
  private stopped = false;

  /** Organizations with messages in flight (its map's entries) and messages in flight. */
  get sizes(): { organizationsInFlight: number; inFlight: number } {
    return { organizationsInFlight: this.inFlightByOrganization.size, inFlight: this.inFlight.size };
  }

  constructor(
    repository: WebhookRepository,
    secretKey: () => Promise<Buffer>,
    options: WebhookWorkerOptions,
    logger: Logger,
    metrics?: Metrics,
  ) {
    this.repository = repository;
    this.secretKey = secretKey;
    this.options = options;
    this.logger = logger;
    this.attempts = metrics
      ? new Counter({
          name: 'ledger_webhook_attempts_total',
          help: 'Webhook delivery attempts, by outcome (delivered, retry, failed)',
          labelNames: ['outcome'],
          registers: [metrics.registry],
        })
      : undefined;
    this.latency = metrics
      ? new Histogram({
          name: 'ledger_webhook_attempt_seconds',
          help: 'Webhook delivery attempts from request to answer',
          buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
          registers: [metrics.registry],
        })
      : undefined;
    this.disabledForBacklog = metrics
      ? new Counter({
          name: 'ledger_webhook_endpoints_disabled_backlog_total',
          help: 'Webhook endpoints disabled because their pending messages passed WEBHOOK_PENDING_PER_ENDPOINT_MAX',
          registers: [metrics.registry],
        })
      : undefined;
  }

  start(): void {
    this.schedule(0);
  }

  /**
   * The next poll after `delayMs`. A poll that claimed something is followed at once by the next (a backlog drains
   * at the pace of the sends, not of the interval), and every finished attempt asks for a poll at once (nudge): an
   * endpoint at its in-flight bound gets its next delivery as soon as one of its attempts ends.
   */
  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.polling = this.poll().then(
        (claimed) => this.schedule(claimed > 0 ? 0 : this.options.pollIntervalMs),
        () => this.schedule(this.options.pollIntervalMs),
      );
    }, delayMs);
    this.timer.unref();
  }

  /** A poll at once, unless one is running (it schedules the next itself) or already due at once. */
  private nudge(): void {
    if (this.stopped || this.timer === undefined) return;
    this.schedule(0);
  }

  /** At most every backlogCheckIntervalMs: disables the endpoints past their backlog bound (see the top). */
  private async checkBacklogs(): Promise<void> {
    const now = performance.now();
    if (now - this.backlogCheckedAt < (this.options.backlogCheckIntervalMs ?? BACKLOG_CHECK_INTERVAL_MS)) return;
    this.backlogCheckedAt = now;
    const pendingMax = this.options.pendingPerEndpointMax ?? WEBHOOK_PENDING_PER_ENDPOINT_MAX_DEFAULT;
    try {
      for (const endpoint of await this.repository.disableBackloggedEndpoints(pendingMax)) {
        this.disabledForBacklog?.inc();
        this.logger.warn(
          {
            webhookEndpointId: endpoint.id,
            gameId: endpoint.gameId,
            organizationId: endpoint.organizationId,
            pendingMax,
          },
          'webhook endpoint disabled: more messages pending than WEBHOOK_PENDING_PER_ENDPOINT_MAX',
        );
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook backlogs not checked; the next check tries again');
    }
  }

  /**
   * The decision pairs written since the last poll made into messages, then one claim and the sends it starts (not
   * awaited: they finish on their own, each recording its attempt). How many rows and messages it took.
   */
  async poll(): Promise<number> {
    let expanded = 0;
    try {
      expanded = await this.repository.expandDecisionBatches(DECISION_BATCHES_PER_POLL);
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook messages of new decisions not made; the next poll tries again');
    }
    await this.checkBacklogs();
    const room = this.options.inFlightMax - this.inFlight.size;
    if (room <= 0) return expanded;
    const perOrganization = this.organizationInFlightMax();
    const organizationRoom: Record<string, number> = {};
    for (const [organizationId, count] of this.inFlightByOrganization) {
      organizationRoom[organizationId] = Math.max(0, perOrganization - count);
    }
    let claimed: ClaimedMessage[];
    try {
      claimed = await this.repository.claim({
        endpointsMax: Math.max(1, Math.floor(room / this.options.inFlightPerEndpoint)),
        inFlightMax: Math.min(this.options.inFlightPerEndpoint, room),
        leaseMs: (this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS) + LEASE_MARGIN_MS,
        after: this.lastEndpoint,
        organizationRoom,
        organizationInFlightMax: perOrganization,
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook claim failed; the next poll tries again');
      return expanded;
    }
    this.lastEndpoint = lastInRoundRobin(
      claimed.map((m) => m.endpointId),
      this.lastEndpoint,
    );
    for (const message of claimed) {
      const organizationId = message.organizationId;
      this.inFlightByOrganization.set(organizationId, (this.inFlightByOrganization.get(organizationId) ?? 0) + 1);
      const send = this.attempt(message).catch((error: unknown) => {
        // The claim's lease runs out and the message is claimed again (the same webhook-id).
        this.logger.warn({ err: error, messageId: message.id }, 'webhook attempt not recorded');
      });
      this.inFlight.add(send);
      void send.finally(() => {
        this.inFlight.delete(send);
        const left = (this.inFlightByOrganization.get(organizationId) ?? 0) - 1;
        invariant(left >= 0, 'webhook_in_flight_by_organization', () => ({ organizationId, left }));
        if (left <= 0) this.inFlightByOrganization.delete(organizationId);
        else this.inFlightByOrganization.set(organizationId, left);
        this.nudge();
      });
    }
    return expanded + claimed.length;
  }

  private organizationInFlightMax(): number {
    return this.options.inFlightPerOrganization ?? Math.max(1, Math.floor(this.options.inFlightMax / 2));
  }

  private async attempt(message: ClaimedMessage): Promise<void> {
    const body = messageBody(message);
    const startedAt = new Date();
    let result: SendResult;
    try {
      const key = await this.secretKey();
      const secret = decryptSecret(key, message.secretCiphertext);
      const previous =
        message.previousSecretCiphertext === undefined
          ? undefined
          : decryptSecret(key, message.previousSecretCiphertext);
      const timestamp = Math.floor(startedAt.getTime() / 1000);
      // During a rotation's overlap: `v1,<new> v1,<old>` (Standard Webhooks allows several, space-separated).
      const signature = [secret, ...(previous === undefined ? [] : [previous])]
        .map((raw) => signWebhook(raw, message.id, timestamp, body))
        .join(' ');
      result = await sendWebhook(
        message.url,
        {
          'webhook-id': message.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
          'user-agent': 'sandbox-rewards-webhooks',
        },
        body,
        {
          allowPrivateAddresses: this.options.allowPrivateAddresses,
          ...(this.options.allowedPorts ? { allowedPorts: this.options.allowedPorts } : {}),
          timeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
        },
      );
    } catch (error) {
      result = {
        statusCode: undefined,
        error: `the secret could not be read (rotate it): ${(error as Error).message}`,
        responseExcerpt: '',
      };
    }
    const latencyMs = Date.now() - startedAt.getTime();
    const next = nextAfter(result, message, Date.now(), this.options.retryBaseMs, this.options.retryDelayMaxMs);
    this.attempts?.inc({ outcome: next.kind });
    this.latency?.observe(latencyMs / 1000);
    await this.repository.finish(message, { startedAt, latencyMs, ...result }, next, this.options.disableAfterMs);
  }

  /** Stops claiming and waits for the sends in progress (each ends within the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }
}

/**
 * Where the next round robin starts: the last endpoint served in the order the claim took them (ids after `after`
 * first, then from the smallest). Unchanged when nothing was claimed.
 */
export function lastInRoundRobin(endpointIds: string[], after: string | undefined): string | undefined {
  if (endpointIds.length === 0) return after;
  const sorted = [...new Set(endpointIds)].sort();
  const wrapped = after === undefined ? [] : sorted.filter((id) => id <= after);
  const following = after === undefined ? sorted : sorted.filter((id) => id > after);
  return (wrapped.length > 0 ? wrapped : following).at(-1);
}
