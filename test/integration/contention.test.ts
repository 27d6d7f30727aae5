// Serialization failures and deadlocks are retried inside the state owner a bounded number of times; past the bound
// they answer 503 with the route's code, the same in every owner (db/failures.ts). PostgreSQL is made to raise a
// deadlock (SQLSTATE 40P01) on the first N inserts into a table, N chosen per test, by a trigger.

import { randomBytes, randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { identityOps, ledgerOps } from '#runtime/contracts/operations.ts';
import { issueLinkToken, sha256 } from '#runtime/credentials/keys.ts';
import { migrate } from '#runtime/db/database.ts';
import { CONTENTION_ATTEMPTS } from '#runtime/db/failures.ts';
import type { AppError } from '#runtime/errors.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../support/compose.ts';
import { createTestDatabase, sql } from '../support/database.ts';
import { createEventWorld, type EventWorld } from '../support/ledger-fixtures.ts';
import { startNats } from '../support/servers.ts';

const ctx = { requestId: 'contention-test' };

describe('deadlocks and serialization failures', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let system: Composed;

  /** The next `failures` inserts into `table` fail with a deadlock. */
  const deadlocks = async (failures: number) => {
    await sql(db, 'update public.contention_plan set failures = $1', [failures]);
    await sql(db, 'alter sequence public.contention_seq restart with 1');
  };
  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: AppError) => ({ status: error.status, code: error.code }),
    );

  beforeAll(async () => {
    nats = await startNats();
    db = await createTestDatabase();
    await migrate(db, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    world = await createEventWorld(db);
    await sql(db, 'create table public.contention_plan (failures int not null)');
    await sql(db, 'insert into public.contention_plan values (0)');
    await sql(db, 'create sequence public.contention_seq');
    await sql(
      db,
      `create function public.simulate_deadlock() returns trigger language plpgsql as $$
       begin
         if nextval('public.contention_seq') <= (select failures from public.contention_plan) then
           raise exception 'simulated deadlock' using errcode = '40P01';
         end if;
         return new;
       end $$`,
    );
    for (const table of ['ledger.organizations', 'ledger.link_intents', 'identity.invitations', 'ledger.events']) {
      await sql(
        db,
        `create trigger simulate_deadlock before insert on ${table} for each row execute function public.simulate_deadlock()`,
      );
    }
    system = await compose({ natsUrl: nats.url, identityDatabaseUrl: db, ledgerDatabaseUrl: db });
  });
  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  const createOrganization = () =>
    system.edgeTransport.call(
      ledgerOps.consoleAction,
      {
        principal: { identityUserId: 'contention|owner' },
        action: { case: 'createOrganization', value: { name: 'Contended' } },
      },
      ctx,
    );
  const createLinkIntent = () =>
    system.edgeTransport.call(
      ledgerOps.createLinkIntent,
      { keyHash: sha256(world.key.value), externalPlayerId: 'contended-player', tokenHash: issueLinkToken().hash },
      ctx,
    );
  const createInvitation = (email: string) => system.edgeTransport.call(identityOps.createInvitation, { email }, ctx);
  const recordEvent = () =>
    system.edgeTransport.call(
      ledgerOps.recordEvent,
      {
        keyHash: sha256(world.key.value),
        eventId: randomUUID(),
        playerId: world.player.id,
        eventType: world.eventType,
        occurredAtMs: BigInt(Date.now()),
        payloadHash: randomBytes(32),
      },
      ctx,
    );
  /** database_contention_failures_total of every database here, by outcome. */
  const contentionCounts = async () => {
    const { values } = await system.metrics.databaseContention.get();
    const count = (outcome: string) =>
      values
        .filter((v) => v.labels.outcome === outcome && v.labels.sqlstate === '40P01')
        .reduce((a, v) => a + v.value, 0);
    return { retried: count('retried'), gaveUp: count('gave_up') };
  };

  it('console: retried, then done; past the bound 503 DEVELOPER_ACCESS_UNAVAILABLE', async () => {
    await deadlocks(CONTENTION_ATTEMPTS - 1);
    expect((await createOrganization()).id).toMatch(/^[0-9a-f-]{36}$/);
    await deadlocks(CONTENTION_ATTEMPTS);
    expect(await failureOf(createOrganization())).toEqual({ status: 503, code: 'DEVELOPER_ACCESS_UNAVAILABLE' });
  });

  it('every contention failure is counted: retried, or given up (database_contention_failures_total)', async () => {
    const before = await contentionCounts();
    await deadlocks(CONTENTION_ATTEMPTS - 1);
    await createOrganization();
    await deadlocks(CONTENTION_ATTEMPTS);
    await failureOf(createOrganization());
    expect(await contentionCounts()).toEqual({
      retried: before.retried + (CONTENTION_ATTEMPTS - 1) * 2,
      gaveUp: before.gaveUp + 1,
    });
  });

  it('events: a call of record_events rolled back by a deadlock is run again, counted, and decided once', async () => {
    const before = await contentionCounts();
    await deadlocks(CONTENTION_ATTEMPTS - 1);
    const reply = await recordEvent();
    expect(reply.replayed).toBe(false);
    expect(reply.decision?.id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await sql<{ n: number }>(db, 'select count(*)::int as n from ledger.events where id = $1', [
      reply.decision?.id,
    ]);
    expect(stored[0]?.n).toBe(1);
    expect(await contentionCounts()).toEqual({
      retried: before.retried + CONTENTION_ATTEMPTS - 1,
      gaveUp: before.gaveUp,
    });
  });

  it('links: retried, then done; past the bound 503 retry_later', async () => {
    await deadlocks(CONTENTION_ATTEMPTS - 1);
    expect((await createLinkIntent()).playerId).toMatch(/^[0-9a-f-]{36}$/);
    await deadlocks(CONTENTION_ATTEMPTS);
    expect(await failureOf(createLinkIntent())).toEqual({ status: 503, code: 'retry_later' });
  });

  it('identity-admission: retried, then done; past the bound 503 PLATFORM_UNAVAILABLE', async () => {
    await deadlocks(CONTENTION_ATTEMPTS - 1);
    expect((await createInvitation('contended@example.com')).invitation?.email).toBe('contended@example.com');
    await deadlocks(CONTENTION_ATTEMPTS);
    expect(await failureOf(createInvitation('contended-2@example.com'))).toEqual({
      status: 503,
      code: 'PLATFORM_UNAVAILABLE',
    });
  });

  it('identity-admission: a failure that is not the database is a 500, not an outage', async () => {
    await deadlocks(0);
    // A statement PostgreSQL refuses for a reason that is not an outage (here a trigger's plain exception, P0001):
    // the database answered, the code is wrong. It used to be reported as the store being unavailable.
    await sql(
      db,
      `create function public.refuse_invitation() returns trigger language plpgsql as $$
       begin
         if new.email = 'bug@example.com' then raise exception 'simulated bug'; end if;
         return new;
       end $$`,
    );
    await sql(
      db,
      'create trigger refuse_invitation before insert on identity.invitations for each row execute function public.refuse_invitation()',
    );
    expect(await failureOf(createInvitation('bug@example.com'))).toEqual({ status: 500, code: 'internal_error' });
  });
});
