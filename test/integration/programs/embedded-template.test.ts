// The embedded database's first start (services/runtime/src/db/embedded.ts): a new DATA_DIR is made from the template
// of the installed PGlite version that `npm ci` built (the `prepare` script: npm run embedded:template), not by
// initdb; the folder is renamed into place only when complete, a half-made one is made again, and a second start
// opens the same data. The built template is current (every migration in it: after adding one, npm run
// embedded:template) and holds the one database PGlite serves; its archive format round-trips.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { startEmbeddedPostgres } from '#runtime/db/embedded.ts';
import {
  assertEmbeddedTemplate,
  EmbeddedTemplateMissingError,
  embeddedTemplatePath,
  pgliteVersion,
  unpackTemplate,
  unpackTemplateInWorker,
} from '#runtime/db/embedded-data.ts';
import { repeatableSql } from '#runtime/db/repeatable.ts';
import { packTemplate } from '../../../services/all-in-one/src/embedded-template-pack.ts';
import { migrationsOf } from '../../../services/launcher/src/in-process.ts';
import { sql } from '../../support/database.ts';

describe('the embedded database from its template', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-embedded-template-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('has a template built for the installed PGlite version (npm ci builds it; else npm run embedded:template)', () => {
    expect(embeddedTemplatePath()).toMatch(new RegExp(`embedded-template/pglite-${pgliteVersion()}\\.tar\\.gz$`));
    expect(() => assertEmbeddedTemplate(join(dataDir, 'pglite'))).not.toThrow();
  });

  it('says how to build the template when a new folder needs one that is not built', () => {
    const error = new EmbeddedTemplateMissingError('/x/pglite-0.0.0.tar.gz');
    expect(error.message).toContain('/x/pglite-0.0.0.tar.gz is missing');
    expect(error.message).toContain('npm run embedded:template');
  });

  it('holds every migration and SQL function of the state owners (after adding one: npm run embedded:template)', async () => {
    const embedded = await startEmbeddedPostgres(dataDir);
    try {
      for (const set of migrationsOf()) {
        const applied = await sql<{ name: string }>(
          embedded.url,
          `select name from ${set.schema}.mikro_orm_migrations order by id`,
        );
        expect({ schema: set.schema, migrations: applied.map((row) => row.name) }).toEqual({
          schema: set.schema,
          migrations: set.migrations.map((migration) => migration.name),
        });
        if (!set.repeatables?.length) continue;
        const functions = await sql<{ name: string; checksum: string }>(
          embedded.url,
          `select name, checksum from ${set.schema}.repeatable_migrations order by name`,
        );
        expect(functions).toEqual(
          set.repeatables
            .map((repeatable) => ({ name: repeatable.name, checksum: repeatableSql(repeatable).checksum }))
            .sort((a, b) => a.name.localeCompare(b.name)),
        );
      }
    } finally {
      await embedded.stop();
    }
  }, 120_000);

  it('holds only the database PGlite serves, so that a first start writes half the files', async () => {
    const embedded = await startEmbeddedPostgres(dataDir);
    try {
      expect(await sql(embedded.url, 'select datname from pg_database')).toEqual([{ datname: 'postgres' }]);
      expect(await sql(embedded.url, 'select current_database() as name')).toEqual([{ name: 'postgres' }]);
    } finally {
      await embedded.stop();
    }
    expect(readdirSync(join(dataDir, 'pglite', 'base'))).toEqual(['5']);
  }, 120_000);

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

describe('the embedded template archive', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'rewards-embedded-archive-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('unpacks what it packed: folders, empty files, files of one block and more, owner-only', async () => {
    const source = join(work, 'source');
    const files: Record<string, Buffer> = {
      PG_VERSION: Buffer.from('18\n'),
      'base/5/112': Buffer.alloc(8192, 7),
      'base/5/113': Buffer.alloc(0),
      'base/5/2691_fsm': Buffer.from('x'.repeat(513)),
      'global/pg_control': Buffer.alloc(512, 1),
    };
    mkdirSync(join(source, 'pg_tblspc'), { recursive: true });
    for (const [path, data] of Object.entries(files)) {
      mkdirSync(join(source, path, '..'), { recursive: true });
      writeFileSync(join(source, path), data);
    }
    const target = join(work, 'target');
    unpackTemplate(packTemplate(source), target);
    expect(readdirSync(target).sort()).toEqual(['PG_VERSION', 'base', 'global', 'pg_tblspc']);
    expect(readdirSync(join(target, 'pg_tblspc'))).toEqual([]);
    for (const [path, data] of Object.entries(files)) {
      expect({ path, data: readFileSync(join(target, path)) }).toEqual({ path, data });
      expect({ path, mode: statSync(join(target, path)).mode & 0o777 }).toEqual({ path, mode: 0o600 });
    }
    expect(statSync(join(target, 'base', '5')).mode & 0o777).toBe(0o700);
  });

  it('refuses an entry that leaves its folder or is not a file or folder, also in its worker thread', async () => {
    const source = join(work, 'source');
    mkdirSync(source);
    writeFileSync(join(source, 'PG_VERSION'), '18\n');
    const changed = (at: number, value: string) => {
      const tar = gunzipSync(packTemplate(source));
      tar.write(value, at, 'latin1');
      return gzipSync(tar);
    };
    const link = changed(156, '2'); // the type of the first entry: a symbolic link
    const escaping = changed(0, '../PG_VERSION\0');
    expect(() => unpackTemplate(link, join(work, 'a'))).toThrow('is of type "2", not a file or folder');
    expect(() => unpackTemplate(escaping, join(work, 'b'))).toThrow('leaves its folder');
    writeFileSync(join(work, 'link.tar.gz'), link);
    await expect(unpackTemplateInWorker(join(work, 'link.tar.gz'), join(work, 'c'))).rejects.toThrow(
      'not a file or folder',
    );
    expect(existsSync(join(work, '..', 'PG_VERSION'))).toBe(false);
  });
});
