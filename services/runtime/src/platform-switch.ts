// The operator's platform switch as the edges see it: while disabled, every non-operator API route answers
// 503 PLATFORM_DISABLED. The state lives in identity-admission; edges cache it for at most one second.

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

export class PlatformSwitch {
  private readonly transport: Transport;
  private readonly now: () => number;
  private cached: { enabled: boolean; at: number } | undefined;
  private pending: { promise: Promise<boolean>; askedAt: number } | undefined;
  private generation = 0;

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

  async isEnabled(ctx: CallContext): Promise<boolean> {
    const cached = this.cached;
    const now = this.now();
    if (cached && now - cached.at < PLATFORM_CACHE_MS) return cached.enabled;
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
        return reply.enabled;
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
  }
}
