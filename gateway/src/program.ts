// gateway: the developer console's edge. REST console, records and access adapters, the GraphQL console and the
// operator API; every rule lives in a state owner, reached over the transport.
import type Router from '@koa/router';
import type { EnvReader } from '../../services/runtime/src/config.ts';
import { identityOps } from '../../services/runtime/src/contracts/operations.ts';
import { relabelUnavailable } from '../../services/runtime/src/errors.ts';
import { platformGate } from '../../services/runtime/src/http/platform-gate.ts';
import type { ProgramDeps, ProgramModule } from '../../services/runtime/src/program.ts';

export interface GatewayConfig {
  adminToken: string | undefined;
}

export const gateway: ProgramModule<GatewayConfig> = {
  name: 'gateway',
  readConfig(reader: EnvReader): GatewayConfig {
    const adminToken = reader.string('ADMIN_TOKEN');
    reader.check(adminToken === undefined || adminToken.length >= 32, 'ADMIN_TOKEN must be at least 32 characters');
    return { adminToken };
  },
  async create(deps: ProgramDeps) {
    const { transport, platform } = deps;
    return {
      name: 'gateway',
      routes(router: Router) {
        router.get('/api/developer/v1/access', platformGate(platform), async (ctx) => {
          const reply = await transport
            .call(
              identityOps.admitDeveloper,
              { authorization: ctx.get('Authorization'), origin: ctx.get('Origin') },
              ctx.state.call,
            )
            .catch((error) => {
              throw relabelUnavailable(error, 'AUTH_UNAVAILABLE', 'The identity service is temporarily unavailable.');
            });
          ctx.set('Cache-Control', 'no-store');
          ctx.body = { data: { authorized: true, email: reply.principal?.email ?? '', mode: 'sandbox' } };
        });
      },
    };
  },
};
