// The operator's platform switch as the edges see it: while disabled, every non-operator API route answers
// 503 PLATFORM_DISABLED. The state lives in identity-admission; edges cache it for at most one second.

import { identityOps } from './contracts/operations.ts';
import { AppError } from './errors.ts';
import type { CallContext, Transport } from './transport/operation.ts';

export const PLATFORM_CACHE_MS = 1000;

export class PlatformSwitch {
  private readonly transport: Transport;
  private readonly now: () => number;
  private cached: { enabled: boolean; at: number } | undefined;
  private pending: Promise<boolean> | undefined;
  private generation = 0;

  constructor(transport: Transport, now: () => number = Date.now) {
    this.transport = transport;
    this.now = now;
  }

  /** Throws 503 PLATFORM_DISABLED while the platform is off; PLATFORM_UNAVAILABLE if its state cannot be read. */
  async assertEnabled(ctx: CallContext): Promise<void> {
    if (!(await this.isEnabled(ctx))) {
      throw new AppError(503, 'PLATFORM_DISABLED', 'The sandbox platform is disabled by its operator.');
    }
  }

  async isEnabled(ctx: CallContext): Promise<boolean> {
    const cached = this.cached;
    if (cached && this.now() - cached.at < PLATFORM_CACHE_MS) return cached.enabled;
    // One refresh at a time; concurrent requests share it. The value is as old as the moment it was asked for.
    if (!this.pending) {
      const askedAt = this.now();
      const generation = this.generation;
      const pending: Promise<boolean> = this.transport
        .call(identityOps.getPlatformState, {}, ctx)
        .then((reply) => {
          // A change made through this process after the question was asked makes the answer stale: drop it.
          if (generation === this.generation) this.cached = { enabled: reply.enabled, at: askedAt };
          return reply.enabled;
        })
        .finally(() => {
          if (this.pending === pending) this.pending = undefined;
        });
      this.pending = pending;
    }
    return this.pending;
  }

  /** Forgets the cached value (the operator API calls it after a change made through this process). */
  invalidate(): void {
    this.generation++;
    this.cached = undefined;
    this.pending = undefined;
  }
}
