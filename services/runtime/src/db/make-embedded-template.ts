// `npm run embedded:template`: makes the shipped data folder of a new embedded database for the installed PGlite
// version (embedded-template/pglite-<version>.tar.gz, read by initializeEmbeddedData): initdb in a child process
// (embedded-new-data.ts), opened once with the embedded settings, checkpointed, dumped as a gzipped tarball. Run it
// after upgrading @electric-sql/pglite (test/integration/programs/embedded-template.test.ts fails until then) and
// delete the previous version's file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_POSTGRESQL_CONF, initdbInChild, pgliteVersion } from './embedded.ts';

const work = mkdtempSync(join(tmpdir(), 'embedded-template-'));
try {
  const folder = join(work, 'pglite');
  await initdbInChild(folder);
  const db = await PGlite.create(folder, { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
  await db.query('checkpoint');
  const tarball = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
  await db.close();
  const target = fileURLToPath(new URL(`./embedded-template/pglite-${pgliteVersion()}.tar.gz`, import.meta.url));
  writeFileSync(target, tarball);
  process.stdout.write(`${target}: ${(tarball.length / 1048576).toFixed(1)} MiB\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
