// `node embedded-initdb.ts <folder>`: creates a new PGlite data folder (initdb) and exits. Run as a short-lived child
// process by startEmbeddedPostgres, so that the memory initdb grows (WebAssembly memory never shrinks) is returned to
// the system when it exits instead of staying with the server for the life of the process.
import { PGlite } from '@electric-sql/pglite';

const folder = process.argv[2];
if (!folder) {
  process.stderr.write('usage: node embedded-initdb.ts <folder>\n');
  process.exit(2);
}
const db = await PGlite.create(folder, { postgresqlconf: ['shared_buffers = 16MB', 'maintenance_work_mem = 16MB'] });
await db.query('select 1');
await db.close();
