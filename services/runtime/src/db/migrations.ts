// The migrations' shapes and the rules they follow (docs/operations.md, "Migration rules"). Every migration runs in a
// transaction of its own, or outside any transaction when it builds or drops an index concurrently; every DDL
// statement waits for a lock at most MIGRATION_LOCK_TIMEOUT_MS, so a migration never holds up the event path for
// longer, and the migrator (database.ts migrate) tries it again.
import { Migration } from '@mikro-orm/migrations';
import type { RepeatableMigration } from './repeatable.ts';

export type MigrationClass = new (...args: ConstructorParameters<typeof Migration>) => Migration;

/** The ordered, committed migrations of one schema. Names are stable: they are recorded in the database. */
export interface MigrationSet {
  schema: 'ledger' | 'identity';
  migrations: Array<{ name: string; class: MigrationClass }>;
  /** SQL files applied after the versioned migrations whenever they change (repeatable.ts), in this order. */
  repeatables?: RepeatableMigration[];
}

/**
 * The reason a migration of the first release keeps a statement that blocks (.ci/lint-migrations.ts): every installation
 * that can upgrade has applied it, so rewriting it would change no database.
 */
export const APPLIED_BY_EVERY_RELEASE =
  'applied by every installation of v0.1.0, the first release: no database that can upgrade runs it again';

/** An index a ConcurrentIndexMigration builds: its schema, its name, and the statement's definition. */
export interface ConcurrentIndex {
  schema: string;
  name: string;
  /** `on <schema>.<table> (...) [where ...]`: what follows the index name in CREATE INDEX. */
  definition: string;
  unique?: boolean;
}

/**
 * A migration that builds (CREATE INDEX CONCURRENTLY) or drops (DROP INDEX CONCURRENTLY) indexes without blocking the
 * table's writes, so it runs outside a transaction, one statement at a time. It can be run again after any failure:
 * an index left INVALID by an interrupted build is dropped first and built anew; a valid one is kept (IF NOT EXISTS).
 */
export abstract class ConcurrentIndexMigration extends Migration {
  /** The indexes built, in order. */
  protected abstract readonly builds: ConcurrentIndex[];
  /** Schema-qualified indexes dropped after the builds. */
  protected readonly drops: string[] = [];

  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    for (const index of this.builds) {
      const invalid = await this.execute(
        `select 1 from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = ? and c.relname = ? and not i.indisvalid`,
        [index.schema, index.name],
      );
      if (invalid.length > 0) this.addSql(`drop index concurrently if exists ${index.schema}.${index.name}`);
      this.addSql(
        `create ${index.unique ? 'unique ' : ''}index concurrently if not exists ${index.name} ${index.definition}`,
      );
    }
    for (const name of this.drops) this.addSql(`drop index concurrently if exists ${name}`);
  }
}
