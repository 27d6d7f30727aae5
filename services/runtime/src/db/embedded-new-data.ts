// `node embedded-new-data.ts <folder> [template.tar.gz]`: makes a new PGlite data folder and exits: from the template
// tarball when one is given (PGlite's loadDataDir), else by initdb. Run as a short-lived child process by
// initializeEmbeddedData (embedded.ts), so that the memory it grows (WebAssembly memory never shrinks: initdb's
// 560 MiB, or the 265 MiB of the instance that unpacks a template) goes back to the system when it exits instead of
// staying with the server for the life of the process.
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_POSTGRESQL_CONF } from './embedded.ts';

const [folder, template] = process.argv.slice(2);
if (!folder) {
  process.stderr.write('usage: node embedded-new-data.ts <folder> [template.tar.gz]\n');
  process.exit(2);
}
const db = await PGlite.create(folder, {
  postgresqlconf: EMBEDDED_POSTGRESQL_CONF,
  ...(template ? { loadDataDir: new Blob([readFileSync(template)]) } : {}),
});
await db.query('select 1');
await db.close();
