import type { Migration } from '@mikro-orm/migrations';
import type { RepeatableMigration } from './repeatable.ts';

export type MigrationClass = new (...args: ConstructorParameters<typeof Migration>) => Migration;

/** The ordered, committed migrations of one schema. Names are stable: they are recorded in the database. */
export interface MigrationSet {
  schema: 'ledger' | 'identity';
  migrations: Array<{ name: string; class: MigrationClass }>;
  /** SQL files applied after the versioned migrations whenever they change (repeatable.ts), in this order. */
  repeatables?: RepeatableMigration[];
}
