// Embedded PostgreSQL for `npm start` without DATABASE_URL: PGlite (PostgreSQL compiled to WebAssembly) with its
// data under DATA_DIR, served on a loopback port so that MikroORM talks to it like to any PostgreSQL server.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string, port = 0): Promise<EmbeddedPostgres> {
  const pgDir = join(dataDir, 'pglite');
  mkdirSync(pgDir, { recursive: true });
  const db = await PGlite.create(pgDir);
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
