// `npm run migrate`: applies the committed migrations of both schemas to DATABASE_URL and exits.
import { EnvReader } from '#runtime/config.ts';
import { migrate } from '#runtime/db/database.ts';
import { createLogger } from '#runtime/logger.ts';
import { stateOwners } from './programs.ts';

const reader = new EnvReader();
const url = reader.url('DATABASE_URL', ['postgres:', 'postgresql:']);
reader.check(url !== undefined, 'DATABASE_URL is required: the PostgreSQL server to migrate');
const logger = createLogger({ process: 'migrate' }, reader.string('LOG_LEVEL', 'info'));
try {
  reader.done();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
await migrate(
  url as string,
  stateOwners.map((m) => m.database!.migrations),
  logger,
);
