// ingest: the game SDK's edge for events and public configuration, the product's hot path. Stateless: it checks
// shapes and limits, and asks the ledger over the transport.
import type Router from '@koa/router';
import { Counter } from 'prom-client';
import type { ProgramModule } from '../../runtime/src/program.ts';
import { addConfigRoutes } from './routes/config.ts';
import { addEventRoutes } from './routes/events.ts';

export const ingest: ProgramModule<Record<string, never>> = {
  name: 'ingest',
  readConfig: () => ({}),
  async create(deps) {
    const { transport, platform } = deps;
    const decisions = new Counter({
      name: 'event_decisions_total',
      help: 'Event decisions answered by ingest, by status, reason (none for acceptances) and replayed',
      labelNames: ['status', 'reason', 'replayed'],
      registers: [deps.metrics.registry],
    });
    return {
      name: 'ingest',
      routes: (router: Router) => {
        addEventRoutes(router, { transport, platform, decisions });
        addConfigRoutes(router, { transport, platform });
      },
    };
  },
};
