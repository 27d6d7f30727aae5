// Embedded PostgreSQL for `npm start` without DATABASE_URL: PGlite (PostgreSQL compiled to WebAssembly) with its
// data under DATA_DIR, served on a loopback port so that MikroORM talks to it like to any PostgreSQL server.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PostgreSQL settings of the embedded server, written to the folder's postgresql.conf at every open. PGlite's
 * WebAssembly memory only grows, so every buffer PostgreSQL touches once stays for the life of the process: the
 * defaults' shared_buffers of 128 MB alone keep far more resident than 16 MB do (docs/benchmarks.md, "Memory"), for a
 * database that one developer's `npm start` fills with a few thousand
 * rows; maintenance_work_mem bounds what an index build of a migration or a VACUUM may grow it by (64 MB by
 * default). Results and plans do not change; the embedded default is not the production database.
 */
export const EMBEDDED_POSTGRESQL_CONF = ['shared_buffers = 16MB', 'maintenance_work_mem = 16MB'];

export interface EmbeddedPostgres {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * The data folder of a new database, made once by PGlite's initdb and shipped as a tarball for the PGlite version it
 * was made with (`npm run embedded:template` makes it again: services/runtime/src/db/make-embedded-template.ts).
 * Unpacking it takes a fraction of initdb's time and memory: PGlite runs initdb in a second PostgreSQL instance
 * beside the first (figures: docs/benchmarks.md, "The embedded database's first start").
 */
export function embeddedTemplatePath(): string | undefined {
  const path = fileURLToPath(new URL(`./embedded-template/pglite-${pgliteVersion()}.tar.gz`, import.meta.url));
  return existsSync(path) ? path : undefined;
}

/** The installed PGlite's version (its package.json). */
export function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const manifest = join(dirname(entry), '..', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Makes the PGlite data folder `folder` when it holds none yet (no PG_VERSION: new, or left half-made by an
 * interrupted first start, which is made again), in a short-lived child process (embedded-new-data.ts), so that the
 * memory it grows (WebAssembly memory never shrinks) goes back to the system when it exits: from the shipped template
 * of this PGlite version, or by initdb when there is none (a PGlite upgrade whose template was not made yet). The
 * child writes a sibling folder, renamed into place only when complete.
 */
export async function initializeEmbeddedData(folder: string): Promise<void> {
  if (existsSync(join(folder, 'PG_VERSION'))) return;
  rmSync(folder, { recursive: true, force: true });
  await newDataInChild(folder, embeddedTemplatePath());
}

/** initdb of a new PGlite data folder `folder`, in a child process, whether or not there is a template. */
export async function initdbInChild(folder: string): Promise<void> {
  await newDataInChild(folder, undefined);
}

async function newDataInChild(folder: string, template: string | undefined): Promise<void> {
  const making = `${folder}.new`;
  rmSync(making, { recursive: true, force: true });
  mkdirSync(making, { recursive: true });
  const script = new URL('./embedded-new-data.ts', import.meta.url).pathname;
  await new Promise<void>((resolve, reject) => {
    // --liftoff-only: no optimizing compiles of PGlite's WebAssembly (they held about 500 MiB at initdb's peak).
    const child = spawn(process.execPath, ['--liftoff-only', script, making, ...(template ? [template] : [])], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0 && existsSync(join(making, 'PG_VERSION'))) resolve();
      else reject(new Error(`the embedded PostgreSQL's new folder ${making} failed (exit ${code}): ${stderr}`));
    });
  });
  renameSync(making, folder);
}

export async function startEmbeddedPostgres(dataDir: string, port = 0): Promise<EmbeddedPostgres> {
  const pgDir = join(dataDir, 'pglite');
  await initializeEmbeddedData(pgDir);
  const db = await PGlite.create(pgDir, { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
  // PGlite runs ONE session: every connection shares it, so a transaction on one connection would see queries of
  // another. The process therefore keeps exactly one pooled connection at a time (Database poolMax 1); the server
  // allows a few so that a pool being closed and the next one being opened may briefly overlap.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port, maxConnections: 4 });
  await server.start();
  const conn = server.getServerConn();
  return {
    url: `postgres://postgres@${conn}/postgres?sslmode=disable`,
    dataDir: pgDir,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}
