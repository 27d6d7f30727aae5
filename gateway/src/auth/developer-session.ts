// The developer session of a gateway request, admitted by identity-admission (CONTRACT section 4).
import type Koa from 'koa';
import type { DeveloperPrincipal } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import type { Transport } from '#runtime/transport/operation.ts';

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
