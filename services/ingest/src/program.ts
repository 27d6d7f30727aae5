// ingest: the game SDK's edge for events and public configuration, the product's hot path.
import type Router from '@koa/router';
import type { ProgramModule } from '../../runtime/src/program.ts';

export const ingest: ProgramModule<Record<string, never>> = {
  name: 'ingest',
  readConfig: () => ({}),
  async create() {
    return { name: 'ingest', routes: (_router: Router) => {} };
  },
};
