// `npm run embedded:template` (run by `npm ci` and `npm install` through the `prepare` script, and by the image's
// template stage): builds the data folder of a new embedded database for the installed PGlite version
// (services/runtime/src/db/embedded-template/pglite-<version>.tar.gz, not in git, read by initializeEmbeddedData):
// initdb in a child process (embedded-new-data.ts), every migration of the state owners applied (as `npm start`
// applies them), the template databases dropped (a first start writes every file of the folder, and PGlite serves
// one database), shut down cleanly (a first start then needs no recovery) and packed as a gzipped tarball
// (docs/decisions.md, "The embedded template is built, not committed"). Run it again after adding a migration
// (test/integration/programs/embedded-template.test.ts fails until then) or after `npm install <package>` upgraded
// @electric-sql/pglite (a first start on a new DATA_DIR fails until then); other versions' files are deleted.
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { migrate } from '#runtime/db/database.ts';
import { EMBEDDED_POSTGRESQL_CONF, startEmbeddedPostgres } from '#runtime/db/embedded.ts';
import { embeddedDataFolder, embeddedTemplateFile, initdbInChild } from '#runtime/db/embedded-data.ts';
import { createLogger } from '#runtime/logger.ts';
import { migrationsOf } from '../../launcher/src/in-process.ts';
import { packTemplate } from './embedded-template-pack.ts';

/**
 * template0 and template1 (about 600 of the folder's 1,100 files) serve only CREATE DATABASE, and a database made in
 * PGlite could not be reached: PGlite runs one session on the database `postgres`, whatever a client names.
 */
const TEMPLATE_DATABASES_DROPPED = [
  `update pg_database set datistemplate = false where datname in ('template0', 'template1')`,
  'drop database template0', // each outside a transaction block
  'drop database template1',
];

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
  for (const statement of TEMPLATE_DATABASES_DROPPED) await db.exec(statement);
  await db.close();
  const tarball = packTemplate(folder);
  const target = embeddedTemplateFile();
  const targetFolder = dirname(target);
  mkdirSync(targetFolder, { recursive: true });
  // Written beside and renamed into place: an interrupted build leaves no half-written template for a start to use.
  writeFileSync(`${target}.partial`, tarball);
  renameSync(`${target}.partial`, target);
  for (const name of readdirSync(targetFolder)) {
    if (name !== basename(target) && name.startsWith('pglite-')) rmSync(join(targetFolder, name), { force: true });
  }
  process.stdout.write(`${target}: ${(tarball.length / 1048576).toFixed(1)} MiB\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
