// Embedded PostgreSQL for `npm start` without DATABASE_URL: PGlite (PostgreSQL compiled to WebAssembly) with its
// data under DATA_DIR, served on a loopback port so that MikroORM talks to it like to any PostgreSQL server.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PostgreSQL settings of the embedded server, written to the folder's postgresql.conf at every open. PGlite's
 * WebAssembly memory only grows, so every buffer PostgreSQL touches once stays for the life of the process: the
 * defaults' shared_buffers of 128 MB alone keep about 100 MiB more resident than 16 MB do (measured: 358 against
 * 256 MiB right after opening a folder), for a database that one developer's `npm start` fills with a few thousand
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
 * Creates the PGlite data folder `folder` (initdb) in a short-lived child process, when it holds none yet. A folder
 * left half-made by an interrupted first start (no PG_VERSION) is made again.
 */
export async function initializeEmbeddedData(folder: string): Promise<void> {
  if (existsSync(join(folder, 'PG_VERSION'))) return;
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const script = new URL('./embedded-initdb.ts', import.meta.url).pathname;
  await new Promise<void>((resolve, reject) => {
    // --liftoff-only: no optimizing compiles of PGlite's WebAssembly (they held about 500 MiB at initdb's peak).
    const child = spawn(process.execPath, ['--liftoff-only', script, folder], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0 && existsSync(join(folder, 'PG_VERSION'))) resolve();
      else reject(new Error(`initdb of the embedded PostgreSQL in ${folder} failed (exit ${code}): ${stderr}`));
    });
  });
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
