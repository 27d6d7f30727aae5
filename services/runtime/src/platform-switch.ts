// The operator's platform switch as the edges see it: while disabled, every non-operator API route answers
// 503 PLATFORM_DISABLED. The state lives in identity-admission; edges cache it for at most one second. While
// identity-admission cannot answer (no responders, a timeout, its own 503), an edge goes on serving on the last state it
// read for at most PLATFORM_STALE_MAX_MS after reading it, then fails closed (docs/decisions.md, "The platform switch
// while identity-admission is down").

import { identityOps } from './contracts/operations.ts';
import { AppError } from './errors.ts';
import type { CallContext, Transport } from './transport/operation.ts';

export const PLATFORM_CACHE_MS = 1000;
/**
 * A request for the state younger than this is shared by the requests that need the state; an older one is not joined
 * (it may be lost: an identity-admission replica that died after receiving it), a new one is sent instead. The state
 * normally answers in about a millisecond, so under load this costs at most a few extra requests per second while one
 * is stuck. Requests lost with a NATS connection are rejected by the transport when the connection drops.
 */
export const PLATFORM_SHARE_MS = 250;
/**
 * The most staleness served: while identity-admission cannot answer, the last state read serves until it is this old;
 * past it the state is unknown (503, fail closed). So an operator's switch-off reaches every edge within this bound
 * even when identity-admission fails right after it (within PLATFORM_CACHE_MS while it answers).
 */
export const PLATFORM_STALE_MAX_MS = 30_000;

/** identity-admission could not say (unreachable, or its store down): not an answer about the switch. */
function cannotAnswer(error: unknown): boolean {
  return error instanceof AppError && error.status === 503 && error.code !== 'PLATFORM_DISABLED';
}

export class PlatformSwitch {
  private readonly transport: Transport;
  private readonly now: () => number;
  private cached: { enabled: boolean; at: number } | undefined;
  private pending: { promise: Promise<boolean>; askedAt: number } | undefined;
  private generation = 0;
  /** The last refresh failed because identity-admission could not answer (cleared by an answer). */
  private failing = false;

  constructor(transport: Transport, now: () => number = Date.now) {
    this.transport = transport;
    this.now = now;
  }

  /**
   * True while the cached state (at most PLATFORM_CACHE_MS old) says enabled: the common case, answered without a
   * promise. False when the state is disabled, unknown or stale: assertEnabled then decides (and refreshes it).
   */
  knownEnabled(): boolean {
    const cached = this.cached;
    return cached?.enabled === true && this.now() - cached.at < PLATFORM_CACHE_MS;
  }

  /** Throws 503 PLATFORM_DISABLED while the platform is off; PLATFORM_UNAVAILABLE if its state cannot be read. */
  async assertEnabled(ctx: CallContext): Promise<void> {
    if (!(await this.isEnabled(ctx))) {
      throw new AppError('PLATFORM_DISABLED', 'The sandbox platform is disabled by its operator.');
    }
  }

  /**
   * The state: the cached one while fresh; otherwise identity-admission's answer. When it cannot answer, the last state
   * read while it is younger than PLATFORM_STALE_MAX_MS; after such a failure, or while the transport is not
   * connected, that state is answered at once while the next refresh runs (the requests do not each wait for a
   * refresh to fail). Past the bound the failure is thrown.
   */
  async isEnabled(ctx: CallContext): Promise<boolean> {
    const cached = this.cached;
    const now = this.now();
    if (cached && now - cached.at < PLATFORM_CACHE_MS) return cached.enabled;
    const refresh = this.refresh(ctx, now);
    if (!cached || now - cached.at >= PLATFORM_STALE_MAX_MS) return refresh;
    // identity-admission failed to answer lately, or this edge's own connection is down: answered at once, so that a
    // request does not wait for a refresh that fails first and then for its own call.
    if (this.failing || !this.transport.isReady()) {
      refresh.catch(() => undefined);
      return cached.enabled;
    }
    return refresh.catch((error: unknown) => {
      if (cannotAnswer(error) && this.now() - cached.at < PLATFORM_STALE_MAX_MS) return cached.enabled;
      throw error;
    });
  }

  /** Asks identity-admission for the state (sharing a recent request) and caches its answer. */
  private refresh(ctx: CallContext, now: number): Promise<boolean> {
    // Concurrent requests share one recent refresh. The value is as old as the moment it was asked for.
    const shared = this.pending;
    if (shared && now - shared.askedAt < PLATFORM_SHARE_MS) return shared.promise;
    const askedAt = now;
    const generation = this.generation;
    const promise: Promise<boolean> = this.transport
      .call(identityOps.getPlatformState, {}, ctx)
      .then((reply) => {
        // A change made through this process after the question was asked makes the answer stale: drop it. So is an
        // answer older than the cached one (a slow request overtaken by a newer one).
        if (generation === this.generation && !(this.cached && this.cached.at > askedAt)) {
          this.cached = { enabled: reply.enabled, at: askedAt };
        }
        this.failing = false;
        return reply.enabled;
      })
      .catch((error: unknown) => {
        if (cannotAnswer(error)) this.failing = true;
        throw error;
      })
      .finally(() => {
        if (this.pending?.promise === promise) this.pending = undefined;
      });
    this.pending = { promise, askedAt };
    return promise;
  }

  /** Forgets the cached value (the operator API calls it after a change made through this process). */
  invalidate(): void {
    this.generation++;
    this.cached = undefined;
    this.pending = undefined;
    this.failing = false;
  }
}
