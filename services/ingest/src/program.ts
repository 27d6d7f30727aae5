// ingest: the game SDK's edge for events and public configuration, the product's hot path. Stateless: it checks
// shapes and limits, and asks the ledger over the transport.
import type Router from '@koa/router';
import type { ProgramModule } from '../../runtime/src/program.ts';
import { addConfigRoutes } from './routes/config.ts';
import { addEventRoutes } from './routes/events.ts';

export const ingest: ProgramModule<Record<string, never>> = {
  name: 'ingest',
  readConfig: () => ({}),
  async create(deps) {
    const { transport, platform } = deps;
    return {
      name: 'ingest',
      routes: (router: Router) => {
        addEventRoutes(router, { transport, platform });
        addConfigRoutes(router, { transport, platform });
      },
    };
  },
};
