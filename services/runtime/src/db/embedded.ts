// Embedded PostgreSQL for `npm start` without DATABASE_URL: PGlite (PostgreSQL compiled to WebAssembly) with its
// data under DATA_DIR, served on a loopback port so that MikroORM talks to it like to any PostgreSQL server.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { embeddedDataFolder, initializeEmbeddedData } from './embedded-data.ts';

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

export async function startEmbeddedPostgres(dataDir: string, port = 0): Promise<EmbeddedPostgres> {
  const pgDir = embeddedDataFolder(dataDir);
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
