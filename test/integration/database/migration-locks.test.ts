// Migrations never hold up the event path: a migration that cannot take its lock gives up within the lock timeout
// and is tried again, so a writer queued behind it goes through while the migration waits; a concurrent index build
// left INVALID by an interruption is dropped and built again.
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import type { MigrationSet } from '#runtime/db/migrations.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { until } from '../../support/ingest.ts';

/** The ledger's migrations up to and including `last`, without the repeatable SQL functions. */
function ledgerUpTo(last: string): MigrationSet {
  const end = ledgerMigrations.migrations.findIndex((m) => m.name === last);
  return { schema: 'ledger', migrations: ledgerMigrations.migrations.slice(0, end + 1) };
}

function capturingLogger() {
  const lines: Array<{ msg: string; level: number }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('migrations under live locks', () => {
  const clients: pg.Client[] = [];
  const client = async (url: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    clients.push(c);
    return c;
  };
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  });

  it('give up a lock within the lock timeout, let the queued writers through, and finish once it is free', async () => {
    const url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerUpTo('0013-tenant-first-reads')], pino({ level: 'silent' }));

    // A long event transaction holds games as the event path does (FOR UPDATE takes ROW SHARE on the table).
    const event = await client(url);
    await event.query('begin');
    await event.query('lock table ledger.games in row share mode');

    // 0014 attaches games_organization: ACCESS EXCLUSIVE on games, which waits for the open event transaction.
    const { logger, lines } = capturingLogger();
    const migration = migrate(url, [identityMigrations, ledgerMigrations], logger, { lockTimeoutMs: 200 });
    const retried = () =>
      lines.some((line) => line.msg === 'a migration did not get its locks in time: trying it again');
    await until('the migration gave up its lock once', async () => retried(), 30_000);

    // Another event's transaction: behind a waiting ACCESS EXCLUSIVE request it would wait for the first event to end;
    // the migration gives its place up within the lock timeout, so this one goes through while the first is open.
    const other = await client(url);
    await other.query('begin');
    await other.query('lock table ledger.games in row share mode');
    await other.query('commit');
    const firstStillOpen = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
       where c.relname = 'games' and l.mode = 'RowShareLock' and l.granted`,
    );
    expect(firstStillOpen[0]?.n).toBe(1);

    await event.query('commit');
    await migration;
    const applied = await sql<{ name: string }>(url, 'select name from ledger.mikro_orm_migrations order by id');
    expect(applied.map((r) => r.name)).toEqual(ledgerMigrations.migrations.map((m) => m.name));
    const constraint = await sql<{ contype: string }>(
      url,
      `select contype from pg_constraint where conname = 'games_organization'`,
    );
    expect(constraint).toEqual([{ contype: 'u' }]);
  }, 120_000);

  it('run one at a time when two processes migrate the same database together', async () => {
    const url = await createTestDatabase();
    const silent = pino({ level: 'silent' });
    await Promise.all([
      migrate(url, [identityMigrations, ledgerMigrations], silent),
      migrate(url, [identityMigrations, ledgerMigrations], silent),
    ]);
    const applied = await sql<{ name: string }>(url, 'select name from ledger.mikro_orm_migrations order by id');
    expect(applied.map((r) => r.name)).toEqual(ledgerMigrations.migrations.map((m) => m.name));
  }, 120_000);

  it('drop an index an interrupted concurrent build left INVALID, and build it again', async () => {
    const url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    // As an interrupted CREATE INDEX CONCURRENTLY leaves it, with its migration not recorded.
    await sql(url, `update pg_index set indisvalid = false where indexrelid = 'ledger.events_by_player'::regclass`);
    await sql(url, `delete from ledger.mikro_orm_migrations where name = '0009-events-by-player'`);
    await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    const index = await sql<{ valid: boolean }>(
      url,
      `select indisvalid as valid from pg_index where indexrelid = 'ledger.events_by_player'::regclass`,
    );
    expect(index).toEqual([{ valid: true }]);
    const recorded = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from ledger.mikro_orm_migrations where name = '0009-events-by-player'`,
    );
    expect(recorded[0]?.n).toBe(1);
  }, 120_000);
});
