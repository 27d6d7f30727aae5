// links: the edge for link intents (game servers and native apps) and player reads. Stateless: it checks
// credentials' shapes, bodies and limits, admits native sessions through identity-admission, and asks the ledger.
import type Router from '@koa/router';
import type { ProgramModule } from '#runtime/program.ts';
import { addGameServerRoutes } from './routes/game-server.ts';
import { addNativeRoutes } from './routes/native.ts';

export const links: ProgramModule<Record<string, never>> = {
  name: 'links',
  readConfig: () => ({}),
  async create(deps) {
    const { transport, platform } = deps;
    return {
      name: 'links',
      routes: (router: Router) => {
        addGameServerRoutes(router, { transport, platform });
        addNativeRoutes(router, { transport, platform });
      },
    };
  },
};
