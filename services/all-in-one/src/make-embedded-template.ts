// `npm run embedded:template`: makes the shipped data folder of a new embedded database for the installed PGlite
// version (services/runtime/src/db/embedded-template/pglite-<version>.tar.gz, read by initializeEmbeddedData): initdb
// in a child process (embedded-new-data.ts), every migration of the state owners applied (as `npm start` applies
// them), checkpointed, dumped as a gzipped tarball. A first start then applies only the migrations added since
// (docs/decisions.md, "The embedded template archive"). Run it after upgrading @electric-sql/pglite
// (test/integration/programs/embedded-template.test.ts fails until then; delete the previous version's file) and,
// to keep first starts short, after adding migrations.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { migrate } from '#runtime/db/database.ts';
import { EMBEDDED_POSTGRESQL_CONF, startEmbeddedPostgres } from '#runtime/db/embedded.ts';
import { embeddedDataFolder, initdbInChild, pgliteVersion } from '#runtime/db/embedded-data.ts';
import { createLogger } from '#runtime/logger.ts';
import { migrationsOf } from '../../launcher/src/in-process.ts';

const work = mkdtempSync(join(tmpdir(), 'embedded-template-'));
try {
  const folder = embeddedDataFolder(work);
  await initdbInChild(folder);
  const server = await startEmbeddedPostgres(work);
  try {
    await migrate(server.url, migrationsOf(), createLogger({ process: 'embedded-template' }, 'warn'));
  } finally {
    await server.stop();
  }
  const db = await PGlite.create(folder, { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
  await db.query('checkpoint');
  const tarball = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
  await db.close();
  const target = fileURLToPath(
    new URL(`../../runtime/src/db/embedded-template/pglite-${pgliteVersion()}.tar.gz`, import.meta.url),
  );
  writeFileSync(target, tarball);
  process.stdout.write(`${target}: ${(tarball.length / 1048576).toFixed(1)} MiB\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
