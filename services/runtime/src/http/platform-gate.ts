// The platform switch's gate: the first check of every non-operator API route, and its 503 when it cannot be read.
import type Koa from 'koa';
import type { ErrorCode } from '../contracts/error-codes.ts';
import { AppError } from '../errors.ts';
import type { PlatformSwitch } from '../platform-switch.ts';

/**
 * Route middleware: the platform switch is the first check of every non-operator API route. The switch lives in
 * identity-admission; when it cannot be read, the route answers its own 503 code (`AUTH_UNAVAILABLE` on developer
 * routes, `retry_later` on game SDK routes, ...), as it would for any other unreachable dependency. "Cannot be read"
 * is identity-admission unreachable (no responders, timeout) or answering a 503 itself (its store is down).
 */
export function platformGate(
  platform: PlatformSwitch,
  unavailableCode: ErrorCode = 'PLATFORM_UNAVAILABLE',
): Koa.Middleware {
  // The platform known to be on (its cached state, the common case) passes on without an async step of its own.
  const check: Koa.Middleware = async (ctx, next) => {
    try {
      await platform.assertEnabled(ctx.state.call);
    } catch (error) {
      if (error instanceof AppError && error.status === 503 && error.code !== 'PLATFORM_DISABLED') {
        throw AppError.withStatus(503, unavailableCode, 'A dependency is temporarily unavailable; retry later.');
      }
      throw error;
    }
    await next();
  };
  return (ctx, next) => (platform.knownEnabled() ? next() : check(ctx, next));
}
