// `node embedded-new-data.ts <folder>`: makes a new PGlite data folder by initdb and exits. Run as a short-lived child
// process by initdbInChild (`npm run embedded:template`, which `npm ci` runs), so that the memory initdb grows (WebAssembly memory never shrinks: about 560 MiB)
// goes back to the system when it exits instead of staying with the server for the life of the process.
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_POSTGRESQL_CONF } from './embedded.ts';

const [folder] = process.argv.slice(2);
if (!folder) {
  process.stderr.write('usage: node embedded-new-data.ts <folder>\n');
  process.exit(2);
}
const db = await PGlite.create(folder, { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
await db.query('select 1');
await db.close();
