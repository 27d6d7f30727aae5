// The native session of an edge request (CONTRACT section 5), admitted by identity-admission. The edge passes the
// headers exactly as received; identity-admission runs the five checks in the contract's order. The links service
// calls this before it looks at a link token, so a country denial (GEO_BLOCKED) comes first.
import type Koa from 'koa';
import type { NativePrincipal } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import type { Transport } from '#runtime/transport/operation.ts';

export const NATIVE_HEADERS = {
  country: 'X-Client-Country',
  build: 'X-Client-Build',
  capabilities: 'X-Client-Capabilities',
} as const;

/** An unreachable identity-admission means the account's status cannot be checked: 503 ACCOUNT_STATUS_UNAVAILABLE. */
export const NATIVE_UNAVAILABLE_CODE = 'ACCOUNT_STATUS_UNAVAILABLE';

export async function admitNative(transport: Transport, ctx: Koa.Context): Promise<NativePrincipal> {
  const reply = await transport
    .call(
      identityOps.admitNative,
      {
        authorization: ctx.get('Authorization'),
        country: ctx.get(NATIVE_HEADERS.country),
        build: ctx.get(NATIVE_HEADERS.build),
        capabilities: ctx.get(NATIVE_HEADERS.capabilities),
      },
      ctx.state.call,
    )
    .catch((error) => {
      throw relabelUnavailable(error, NATIVE_UNAVAILABLE_CODE, 'The account status cannot be checked right now.');
    });
  if (!reply.principal) throw new AppError('UNAUTHORIZED', 'A native session token is required.');
  return reply.principal;
}
