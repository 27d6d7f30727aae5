// links: the edge for link intents (game servers and native apps) and player reads.
import type Router from '@koa/router';
import type { ProgramModule } from '../../runtime/src/program.ts';

export const links: ProgramModule<Record<string, never>> = {
  name: 'links',
  readConfig: () => ({}),
  async create() {
    return { name: 'links', routes: (_router: Router) => {} };
  },
};
