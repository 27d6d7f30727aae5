// `npm run migrate`: applies the committed migrations of both schemas to DATABASE_URL and exits.
import { EnvReader } from '#runtime/config.ts';
import { migrate } from '#runtime/db/database.ts';
import { readDatabaseUrl } from '#runtime/db/url.ts';
import { createLogger } from '#runtime/logger.ts';
import { migrationsOf } from '../../launcher/src/in-process.ts';

const reader = new EnvReader();
// libpq's form, a multi-host URL included (the hosts are tried for the one that accepts writes: db/url.ts).
const url = readDatabaseUrl(reader);
reader.check(url !== undefined, 'DATABASE_URL is required: the PostgreSQL server to migrate');
const logger = createLogger({ process: 'migrate' }, reader.string('LOG_LEVEL', 'info'));
try {
  reader.done();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
await migrate(url as string, migrationsOf(), logger);
