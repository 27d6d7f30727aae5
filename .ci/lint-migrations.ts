// Lints every committed migration's SQL with squawk (squawk-cli, a devDependency), as docs/operations.md's
// "Migration rules" ask: each migration's statements are written to a file of their own, preceded by the lock
// timeout the migrator sets on its session (runtime/db/database.ts migrate), and linted as the migrator runs them
// (in a transaction, or not for a ConcurrentIndexMigration). A migration may name rules it breaks, each with its
// reason, in a static `lintExceptions`; the rules excluded for all are below, with theirs.
//
//   node .ci/lint-migrations.ts          # exit 1 on any finding
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATION_LOCK_TIMEOUT_MS } from '../services/runtime/src/db/database.ts';
import type { MigrationSet } from '../services/runtime/src/db/migrations.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';

/** Rules no migration is held to, and why. */
const EXCLUDED_FOR_ALL: Record<string, string> = {
  'require-statement-timeout':
    'the migrator bounds lock waits (lock_timeout); a statement timeout would abort a long concurrent index build, ' +
    'which blocks no writer',
  'prefer-robust-stmts':
    'a transactional migration is rolled back whole and tried again; a ConcurrentIndexMigration drops an INVALID ' +
    'leftover and uses IF NOT EXISTS',
};

const sets: MigrationSet[] = [identityMigrations, ledgerMigrations];
const dir = mkdtempSync(join(tmpdir(), 'lint-migrations-'));
/** Enough of a driver for up(): a ConcurrentIndexMigration asks for INVALID indexes (none here). */
const driver = { execute: async () => [] };
let failed = 0;
let checked = 0;
try {
  for (const set of sets) {
    for (const { name, class: MigrationClass } of set.migrations) {
      // biome-ignore lint/suspicious/noExplicitAny: the lint needs only up()'s SQL, not a live connection.
      const migration = new MigrationClass(driver as any, {} as any);
      await migration.up();
      const statements = migration.getQueries().map((query) => String(query).trim().replace(/;$/, ''));
      const file = join(dir, `${set.schema}-${name}.sql`);
      writeFileSync(file, `set lock_timeout = '${MIGRATION_LOCK_TIMEOUT_MS}ms';\n${statements.join(';\n')};\n`);
      const own = (MigrationClass as unknown as { lintExceptions?: Record<string, string> }).lintExceptions ?? {};
      const exclude = [...Object.keys(EXCLUDED_FOR_ALL), ...Object.keys(own)];
      const args = [file, `--exclude=${exclude.join(',')}`, '--pg-version=15.0', '--reporter=gcc'];
      if (migration.isTransactional()) args.push('--assume-in-transaction');
      const result = spawnSync('node_modules/.bin/squawk', args, { encoding: 'utf8' });
      checked++;
      if (result.status !== 0) {
        failed++;
        process.stdout.write(`${set.schema}/${name}:\n${result.stdout}${result.stderr}\n`);
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed > 0) {
  console.error(
    `squawk: ${failed} of ${checked} migrations have findings; fix them, or name the rule with its reason in the ` +
      "migration's static lintExceptions (docs/operations.md, \"Migration rules\")",
  );
  process.exit(1);
}
console.log(`squawk: ${checked} migrations linted, no findings beyond their named exceptions`);
