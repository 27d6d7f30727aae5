// The developer session of a gateway request, admitted by identity-admission (CONTRACT section 4).
import type Koa from 'koa';
import type { DeveloperPrincipal } from '../../../services/runtime/src/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '../../../services/runtime/src/contracts/operations.ts';
import { AppError, relabelUnavailable } from '../../../services/runtime/src/errors.ts';
import type { Transport } from '../../../services/runtime/src/transport/operation.ts';

export async function admitDeveloper(transport: Transport, ctx: Koa.Context): Promise<DeveloperPrincipal> {
  const reply = await transport
    .call(
      identityOps.admitDeveloper,
      { authorization: ctx.get('Authorization'), origin: ctx.get('Origin') },
      ctx.state.call,
    )
    .catch((error) => {
      throw relabelUnavailable(error, 'AUTH_UNAVAILABLE', 'The identity service is temporarily unavailable.');
    });
  if (!reply.principal) throw new AppError(401, 'UNAUTHORIZED', 'A valid developer session token is required.');
  return reply.principal;
}
