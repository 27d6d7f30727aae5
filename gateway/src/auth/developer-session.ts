// The developer session of a gateway request, admitted by identity-admission (CONTRACT section 4).
import type Koa from 'koa';
import type { DeveloperPrincipal } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import {
  type DeveloperLease,
  type DeveloperLimits,
  type RateLimitFields,
  TooManyRequestsError,
} from './developer-limits.ts';

/**
 * The Origin admission checks against ALLOWED_ORIGINS. A browser request from the gateway's own origin (the console
 * it serves at /console/: Origin equals the request's scheme://Host) is same-origin, not cross-origin, so it is
 * admitted like a request without Origin; every other Origin must be in ALLOWED_ORIGINS (docs/console-ui.md).
 */
export function admissionOrigin(ctx: Koa.Context): string {
  const origin = ctx.get('Origin');
  // The request's own scheme://host (ctx.origin is not that in Koa 3: it reflects the Origin header).
  return sameOriginAs(origin, `${ctx.protocol}://${ctx.host}`) ? '' : origin;
}

/** An Origin header equal to the request's own scheme://host (a WebSocket upgrade's too: graphql/live.ts). */
export function sameOriginAs(origin: string, own: string): boolean {
  return origin !== '' && origin.toLowerCase() === own.toLowerCase();
}

export async function admitDeveloper(transport: Transport, ctx: Koa.Context): Promise<DeveloperPrincipal> {
  const reply = await transport
    .call(
      identityOps.admitDeveloper,
      { authorization: ctx.get('Authorization'), origin: admissionOrigin(ctx) },
      ctx.state.call,
    )
    .catch((error) => {
      throw relabelUnavailable(error, 'AUTH_UNAVAILABLE', 'The identity service is temporarily unavailable.');
    });
  if (!reply.principal) throw new AppError('UNAUTHORIZED', 'A valid developer session token is required.');
  return reply.principal;
}

/** The admitted developer of a request and its hold on the developer's limits (set by `admittedWithinLimits`). */
export interface AdmittedDeveloper {
  principal: DeveloperPrincipal;
  lease: DeveloperLease;
}

declare module 'koa' {
  interface DefaultState {
    developer?: AdmittedDeveloper;
  }
}

/** The request's admitted developer (routes behind `admittedWithinLimits` only). */
export function developerOf(ctx: Koa.Context): AdmittedDeveloper {
  const developer = ctx.state.developer;
  if (!developer) throw new Error('the route is not behind admittedWithinLimits');
  return developer;
}

/** Writes the bucket's RateLimit-Policy and RateLimit fields, and Retry-After for a refusal. */
export function setRateLimitFields(ctx: Koa.Context, fields: RateLimitFields, retryAfterSeconds?: number): void {
  ctx.res.setHeader('RateLimit-Policy', fields.policy);
  ctx.res.setHeader('RateLimit', fields.state);
  if (retryAfterSeconds !== undefined) ctx.res.setHeader('Retry-After', String(retryAfterSeconds));
}

/** An admission refused for the credential itself (401, 403): a remembered Authorization value is forgotten. */
export function refusesCredential(error: unknown): boolean {
  return error instanceof AppError && (error.status === 401 || error.status === 403);
}

/**
 * Developer admission within the developer's limits (developer-limits.ts), as a middleware. The credential is checked
 * before the developer's budget is charged: a request whose Authorization value was admitted before pays that value's
 * own bucket first (refused there, 429, without asking the identity service); then the identity service admits it
 * (401/403 charge the developer nothing, and the value is forgotten); only then are the developer's bucket and an
 * in-flight slot taken. The request holds its in-flight slot until the rest of the chain is done (or until a
 * streamed response ends: DeveloperLease.handOver).
 */
export function admittedWithinLimits(transport: Transport, limits: DeveloperLimits, cost: number): Koa.Middleware {
  return async (ctx, next) => {
    const authorization = ctx.get('Authorization');
    let lease: DeveloperLease | undefined;
    try {
      const known = limits.beforeAdmission(authorization, cost);
      const principal = await admitDeveloper(transport, ctx).catch((error: unknown) => {
        if (refusesCredential(error)) limits.forget(authorization);
        throw error;
      });
      const token =
        known?.subject === principal.identityUserId
          ? known
          : limits.remember(authorization, principal.identityUserId, cost);
      lease = limits.acquire(principal.identityUserId, cost, token);
      setRateLimitFields(ctx, lease.fields());
      ctx.state.developer = { principal, lease };
      await next();
    } catch (error) {
      if (error instanceof TooManyRequestsError) {
        setRateLimitFields(ctx, error.fields, error.retryAfterSeconds);
        await error.held();
      }
      throw error;
    } finally {
      lease?.release();
    }
  };
}
