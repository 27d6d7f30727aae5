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
    // One refresh at a time; concurrent requests share it.
    this.pending ??= this.transport
      .call(identityOps.getPlatformState, {}, ctx)
      .then((reply) => {
        this.cached = { enabled: reply.enabled, at: this.now() };
        return reply.enabled;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** Forgets the cached value (the operator API calls it after a change made through this process). */
  invalidate(): void {
    this.cached = undefined;
  }
}
