// The embedded database's first start (services/runtime/src/db/embedded.ts): a new DATA_DIR is made from the shipped
// template of the installed PGlite version, not by initdb; the folder is renamed into place only when complete, a
// half-made one is made again, and a second start opens the same data.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '#runtime/db/embedded.ts';
import { embeddedTemplatePath, pgliteVersion } from '#runtime/db/embedded-data.ts';
import { sql } from '../../support/database.ts';

describe('the embedded database from its template', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-embedded-template-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('ships a template for the installed PGlite version (after an upgrade: npm run embedded:template)', () => {
    expect(embeddedTemplatePath()).toMatch(new RegExp(`embedded-template/pglite-${pgliteVersion()}\\.tar\\.gz$`));
  });

  it('makes a new folder from it, with the embedded settings, and opens the same data on the next start', async () => {
    const first = await startEmbeddedPostgres(dataDir);
    try {
      expect(await sql(first.url, `select current_setting('shared_buffers') as b`)).toEqual([{ b: '16MB' }]);
      await sql(first.url, 'create table kept (id int primary key)');
      await sql(first.url, 'insert into kept values (7)');
    } finally {
      await first.stop();
    }
    expect(readdirSync(dataDir)).toEqual(['pglite']);
    expect(existsSync(join(dataDir, 'pglite', 'PG_VERSION'))).toBe(true);
    const second = await startEmbeddedPostgres(dataDir);
    try {
      expect(await sql(second.url, 'select id from kept')).toEqual([{ id: 7 }]);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('makes a half-made folder (an interrupted first start) again', async () => {
    mkdirSync(join(dataDir, 'pglite', 'base'), { recursive: true });
    writeFileSync(join(dataDir, 'pglite', 'base', 'partial'), 'x');
    mkdirSync(join(dataDir, 'pglite.new'));
    const embedded = await startEmbeddedPostgres(dataDir);
    try {
      expect(await sql(embedded.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    } finally {
      await embedded.stop();
    }
    expect(readdirSync(dataDir)).toEqual(['pglite']);
    expect(existsSync(join(dataDir, 'pglite', 'base', 'partial'))).toBe(false);
  }, 120_000);
});
