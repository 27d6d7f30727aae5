// Repeatable migrations (as Flyway's `R__` files): the current body of each SQL function lives in one readable `.sql`
// file, applied after the versioned migrations whenever the file's SHA-256 differs from the one recorded for it in
// `<schema>.repeatable_migrations`. One transaction per file, serialized across processes by an advisory lock and
// checked again under it, so replicas starting together apply a file once. A file must therefore be re-runnable
// (`create or replace`, or `drop ... if exists` then `create`). A program older than the database's schema (it does
// not know every versioned migration applied) applies none: during a rolling upgrade or a rollback an old pod must
// not put back function bodies that the newer schema no longer fits.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from '../logger.ts';
import type { MigrationSet } from './migrations.ts';

export interface RepeatableMigration {
  /** Stable name, recorded in `<schema>.repeatable_migrations` (the file's base name without `.sql`). */
  name: string;
  /** The `.sql` file. */
  file: URL;
}

export function repeatableSql(migration: RepeatableMigration): { text: string; checksum: string } {
  const text = readFileSync(migration.file, 'utf8');
  return { text, checksum: createHash('sha256').update(text).digest('hex') };
}

/**
 * The versioned migrations the database has applied that this program does not know: it is an older version than
 * the schema (a pod of the previous release restarting mid-rollout, or a rollback of the Deployment). Such a program
 * must not put its older function bodies back over the newer ones, which the newer schema may need.
 */
async function migrationsNewerThanThisProgram(client: PoolClient, set: MigrationSet): Promise<string[]> {
  const tracking = `${set.schema}.mikro_orm_migrations`;
  const exists = await client.query<{ t: string | null }>('select to_regclass($1)::text as t', [tracking]);
  if (!exists.rows[0]?.t) return [];
  const known = new Set(set.migrations.map((m) => m.name));
  const recorded = await client.query<{ name: string }>(`select name from ${tracking}`);
  return recorded.rows.map((row) => row.name).filter((name) => !known.has(name));
}

/**
 * Applies the set's repeatable migrations whose file changed; returns the names applied. Applies none when the
 * database's schema is newer than this program (migrationsNewerThanThisProgram): the newer program's files stay.
 */
export async function applyRepeatables(pool: Pool, set: MigrationSet, logger: Logger): Promise<string[]> {
  const repeatables = set.repeatables ?? [];
  if (repeatables.length === 0) return [];
  const table = `${set.schema}.repeatable_migrations`;
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    const newer = await migrationsNewerThanThisProgram(client, set);
    if (newer.length > 0) {
      logger.warn(
        { schema: set.schema, newer },
        'the database schema is newer than this program: its SQL functions are left as the newer release wrote them',
      );
      return [];
    }
    await client.query(`create table if not exists ${table} (
      name text primary key check (name ~ '^[a-z0-9_]+$'),
      checksum text not null check (checksum ~ '^[0-9a-f]{64}$'),
      applied_at timestamptz not null default now())`);
    for (const migration of repeatables) {
      const { text, checksum } = repeatableSql(migration);
      await client.query('begin');
      try {
        await client.query('select pg_advisory_xact_lock(hashtext($1))', [`${table}:${migration.name}`]);
        const current = await client.query<{ checksum: string }>(`select checksum from ${table} where name = $1`, [
          migration.name,
        ]);
        if (current.rows[0]?.checksum === checksum) {
          await client.query('commit');
          continue;
        }
        // No parameters: the simple query protocol, which runs every statement of the file.
        await client.query(text);
        await client.query(
          `insert into ${table} (name, checksum) values ($1, $2)
           on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`,
          [migration.name, checksum],
        );
        await client.query('commit');
        applied.push(migration.name);
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw new Error(`repeatable migration ${set.schema}/${migration.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
  } finally {
    client.release();
  }
  logger.info({ schema: set.schema, applied }, 'repeatable migrations applied');
  return applied;
}
