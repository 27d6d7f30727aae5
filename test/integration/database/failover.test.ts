// Following a failover with a libpq multi-host DATABASE_URL (services/runtime/src/db/failover.ts) on two real,
// independent PostgreSQL clusters standing in for a primary and a standby: "read-only" is made with
// default_transaction_read_only (libpq's read-write check counts such a server as read-only), flipped with
// ALTER SYSTEM + pg_reload_conf(). Each cluster has the same databases, migrated, so either can serve.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { Database, migrate } from '#runtime/db/database.ts';
import { classifyDatabaseFailure, sqlStateOf } from '#runtime/db/failures.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { type StartedPostgres, startPostgres } from '../../support/servers.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

const logger = pino({ level: 'silent' });

function withDatabase(url: string, database: string): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
}

/** Makes a cluster's sessions read-only by default (or not), and waits until a new session sees it. */
async function setReadOnly(cluster: StartedPostgres, readOnly: boolean): Promise<void> {
  await sql(
    cluster.url,
    readOnly
      ? 'alter system set default_transaction_read_only = on'
      : 'alter system reset default_transaction_read_only',
  );
  await sql(cluster.url, 'select pg_reload_conf()');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [row] = await sql<{ ro: string }>(
      cluster.url,
      `select current_setting('default_transaction_read_only') as ro`,
    );
    if (row?.ro === (readOnly ? 'on' : 'off')) break;
    if (Date.now() > deadline) throw new Error('the reload was not seen');
    await new Promise((r) => setTimeout(r, 20));
  }
  // Nothing more to wait for: the postmaster signals its sessions (SIGHUP) before it forks a new one, and a session
  // takes a pending reload before it runs its next command, so every existing session now sees the setting too.
}

describe('a multi-host DATABASE_URL (target_session_attrs=read-write) over two clusters', () => {
  let a: StartedPostgres;
  let b: StartedPostgres;
  /** `postgres://A,B/<database>?target_session_attrs=read-write` */
  let multiUrl: (database: string) => string;

  beforeAll(async () => {
    [a, b] = await Promise.all([startPostgres(), startPostgres()]);
    for (const cluster of [a, b]) {
      for (const database of ['writes', 'service']) await sql(cluster.url, `create database ${database}`);
      await sql(withDatabase(cluster.url, 'writes'), 'create table failover_writes (port int not null)');
    }
    multiUrl = (database) =>
      `postgres://postgres@127.0.0.1:${a.port},127.0.0.1:${b.port}/${database}?target_session_attrs=read-write`;
    // A is the standby at first: migrated while it could still take writes (as a replica would have them).
    await migrate(withDatabase(a.url, 'service'), [identityMigrations, ledgerMigrations], logger);
    await setReadOnly(a, true);
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('migrations reach the writable server of the list', async () => {
    await migrate(multiUrl('service'), [identityMigrations, ledgerMigrations], logger);
    const [row] = await sql<{ n: number }>(
      withDatabase(b.url, 'service'),
      'select count(*)::int as n from ledger.mikro_orm_migrations',
    );
    expect(row!.n).toBeGreaterThan(0);
  }, 120_000);

  it('writes go to B; after the flip the next writes fail at most once, classified, then go to A', async () => {
    const database = await Database.open({ url: multiUrl('writes'), poolMax: 4, logger });
    const write = async (): Promise<number | Error> => {
      try {
        const rows = await database.query<{ port: number }>(
          `insert into failover_writes (port) select current_setting('port')::int returning port`,
        );
        return rows[0]!.port;
      } catch (error) {
        return error as Error;
      }
    };
    try {
      // Concurrent writes fill the pool with connections to B.
      const before = await Promise.all(Array.from({ length: 12 }, write));
      expect(before).toEqual(Array(12).fill(b.port));

      await setReadOnly(b, true);
      await setReadOnly(a, false);
      const after: Array<number | Error> = [];
      for (let i = 0; i < 6; i++) after.push(await write());

      const failures = after.filter((r): r is Error => r instanceof Error);
      expect(failures.length).toBeLessThanOrEqual(1);
      for (const failure of failures) {
        expect([sqlStateOf(failure), classifyDatabaseFailure(failure)]).toEqual(['25006', 'unavailable']);
      }
      // No write reached B after the flip; once the failure (if any) is behind, every write is A's.
      expect(after.filter((r) => !(r instanceof Error))).toEqual(Array(6 - failures.length).fill(a.port));
      if (failures.length === 1) expect(after[0]).toBeInstanceOf(Error);
      const [rows] = await sql<{ n: number }>(
        withDatabase(a.url, 'writes'),
        'select count(*)::int as n from failover_writes',
      );
      expect(rows!.n).toBe(6 - failures.length);
    } finally {
      await database.close();
      await setReadOnly(a, true);
      await setReadOnly(b, false);
    }
  });

  describe('the event path over HTTP', () => {
    let system: TestSystem;

    beforeAll(async () => {
      system = await startTestSystem({ env: { DATABASE_URL: multiUrl('service') } });
    }, 60_000);
    afterAll(async () => system?.stop());

    it('a read-only server is an honest 503 retry_later with Retry-After (nothing stored), then writes resume', async () => {
      const onB = withDatabase(b.url, 'service');
      const world = await createEventWorld(onB);
      const first = expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
      expect(first.status).toBe('accepted');

      // B refuses writes now (and A still does): the decision's transaction meets 25006 on a pooled connection.
      await setReadOnly(b, true);
      const refused = eventBody(world, { eventId: randomUUID() });
      const answer = await postEvent(system.url, world.key.value, refused);
      expectError(answer, 503, 'retry_later');
      expect(answer.body.error.message).toMatch(/Nothing was stored/);
      expect(answer.headers.get('retry-after')).toBe('1');
      // No server takes writes: refused before anything is sent.
      const none = await postEvent(system.url, world.key.value, eventBody(world));
      expectError(none, 503, 'retry_later');
      expect(none.headers.get('retry-after')).toBe('1');

      // B takes writes again: the next event finds it, and the refused one decides once when retried.
      await setReadOnly(b, false);
      const retried = expectDecision(await postEvent(system.url, world.key.value, refused));
      expect(retried).toMatchObject({ status: 'accepted', replayed: false });
      const [row] = await sql<{ n: number }>(onB, 'select count(*)::int as n from ledger.events where game_id = $1', [
        world.game.gameId,
      ]);
      expect(row!.n).toBe(2);
    });
  });
});

describe('a lost primary connection', () => {
  it('is dropped, not given back to the pool; the next unit of work gets a new connection', async () => {
    const cluster = await startPostgres();
    const database = await Database.open({ url: `${cluster.url}?target_session_attrs=read-write`, poolMax: 2, logger });
    try {
      const pid = async () => (await database.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
      const first = await pid();
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [first]);
      await admin.end();
      // The terminated connection is gone from the pool (its error was seen while idle, or on the next use).
      let next: number | undefined;
      for (let i = 0; i < 3 && next === undefined; i++) {
        try {
          next = await pid();
        } catch (error) {
          expect(classifyDatabaseFailure(error)).toBe('connection_lost');
        }
      }
      expect(next).toBeDefined();
      expect(next).not.toBe(first);
    } finally {
      await database.close();
      await cluster.stop();
    }
  }, 120_000);
});
