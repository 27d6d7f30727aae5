// Request deadlines end to end (transport/deadline.ts; docs/decisions.md, "Request deadlines"): the ledger does not
// decide an event whose request's deadline passed before its work started (at arrival, or while it waited in the batch
// queue), and a lock wait of its transaction ends at the deadline with a 503 that says nothing was stored. A game row
// lock held by the test stands for a stuck database. A transaction's statement_timeout and lock_timeout follow the
// deadline (or the settings without one), and no transaction starts past it. Then the platform gate while
// identity-admission is down
// (platform-switch.ts): it serves on the last known state within the bound and fails closed past it, on a clock the
// test sets.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import pg from 'pg';
import { pino } from 'pino';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { classifyDatabaseFailure, sqlStateOf } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import { createHttpApp } from '#runtime/http/app.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { PLATFORM_CACHE_MS, PLATFORM_STALE_MAX_MS, PlatformSwitch } from '#runtime/platform-switch.ts';
import { DeadlinePassedError, withDeadline } from '#runtime/transport/deadline.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import type { CallContext } from '#runtime/transport/operation.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../../support/compose.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { eventBody, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startNats, waitFor } from '../../support/servers.ts';

const logger = pino({ level: 'silent' });
const sha256 = (text: string) => createHash('sha256').update(text).digest();

async function migratedDatabase(): Promise<string> {
  const url = await createTestDatabase();
  await migrate(url, [identityMigrations, ledgerMigrations], logger);
  return url;
}

/** The answer of a call that must fail: its AppError's status, code and message. */
async function failureOf(call: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return { status: error.status, code: error.code, message: error.message };
}

describe('deadlines: the ledger does not start work whose deadline has passed', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let system: Composed;
  let holder: pg.Client | undefined;

  beforeAll(async () => {
    nats = await startNats();
    db = await migratedDatabase();
    world = await createEventWorld(db);
    // A caller's own timeout far beyond the deadlines set here: what answers is the ledger, not the caller giving up.
    system = await compose({
      natsUrl: nats.url,
      identityDatabaseUrl: db,
      ledgerDatabaseUrl: db,
      requestTimeoutMs: 30_000,
    });
  });
  afterEach(async () => {
    await holder?.end().catch(() => undefined);
    holder = undefined;
  });
  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  const ctx = (deadline?: number): CallContext => ({ requestId: randomUUID(), deadline });
  const recordEvent = (eventId: string, context: CallContext) =>
    system.edgeTransport.call(
      ledgerOps.recordEvent,
      {
        keyHash: sha256(world.key.value),
        eventId,
        playerId: world.player.id,
        eventType: world.eventType,
        occurredAtMs: BigInt(Date.now()),
        payloadHash: randomBytes(32),
      },
      context,
    );
  const stored = async (eventId: string) =>
    (await sql(db, 'select 1 from ledger.events where event_id = $1', [eventId])).length;
  const dropped = async (stage: string) => {
    const { values } = await system.metrics.lateWorkDropped.get();
    return values.filter((v) => v.labels.stage === stage).reduce((sum, v) => sum + v.value, 0);
  };
  /** Holds the game's row lock (as a stuck transaction would) until the test ends or rolls it back. */
  const lockGame = async () => {
    holder = new pg.Client({ connectionString: db });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select 1 from ledger.games where id = $1 for update', [world.game.gameId]);
    return holder;
  };
  const lockWaiters = async () =>
    Number(
      (
        await sql<{ n: string }>(
          db,
          `select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
        )
      )[0]?.n,
    );

  it('a request whose deadline passed before it arrived is not handled: 503, nothing stored', async () => {
    const eventId = randomUUID();
    const before = await dropped('received');
    expect(await failureOf(recordEvent(eventId, ctx(performance.now() - 1)))).toEqual({
      status: 503,
      code: 'retry_later',
      message: expect.stringMatching(/deadline passed.*nothing was stored/),
    });
    expect(await stored(eventId)).toBe(0);
    expect(await dropped('received')).toBe(before + 1);
  });

  it('an event whose deadline passes in the batch queue is never decided, even after the database frees up', async () => {
    const lock = await lockGame();
    // A (no deadline of its own beyond the caller's timeout) takes the key's call and waits for the game lock.
    const first = randomUUID();
    const answeredFirst = recordEvent(first, ctx());
    await waitFor(async () => (await lockWaiters()) === 1, "the first event's call waiting for the game lock");
    // B queues behind A's call (one call per key at a time); its deadline passes while it waits.
    const late = randomUUID();
    const lateDeadline = performance.now() + 300;
    const answeredLate = failureOf(recordEvent(late, ctx(lateDeadline)));
    const before = await dropped('batch');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lateDeadline - performance.now()) + 20));
    await lock.query('rollback');
    // A is decided; B, taken from the queue after its deadline, is answered without being decided.
    await expect(answeredFirst).resolves.toMatchObject({ replayed: false, decision: { eventId: first } });
    expect(await answeredLate).toEqual({
      status: 503,
      code: 'retry_later',
      message: expect.stringMatching(/deadline passed.*nothing was stored/),
    });
    // A later event of the same key is decided (B's turn came before it).
    const after = randomUUID();
    await expect(recordEvent(after, ctx())).resolves.toMatchObject({ decision: { eventId: after } });
    expect(await stored(first)).toBe(1);
    expect(await stored(late)).toBe(0);
    expect(await stored(after)).toBe(1);
    expect(await dropped('batch')).toBe(before + 1);
  });

  it('through an edge: its caller times out ("outcome unknown"); the event, queued past its deadline, is never stored', async () => {
    // An ingest edge of its own whose requests time out after 1 s (the ledger and identity-admission are the system's).
    const edge = await compose({ natsUrl: nats.url, requestTimeoutMs: 1000 });
    try {
      const lock = await lockGame();
      const first = randomUUID();
      const answeredFirst = recordEvent(first, ctx());
      await waitFor(async () => (await lockWaiters()) === 1, "the first event's call waiting for the game lock");
      const before = await dropped('batch');
      const body = eventBody(world);
      const response = await postEvent(edge.url, world.key.value, body);
      // The edge gave up: it cannot know, and says so (CONTRACT section 7).
      expectError(response, 503, 'retry_later');
      expect(response.body.error.message).toMatch(/unknown/);
      expect(response.body.error.message).toMatch(/same eventId/);
      await lock.query('rollback');
      await expect(answeredFirst).resolves.toMatchObject({ decision: { eventId: first } });
      // The next event of the key is decided after the late one had its turn.
      const after = randomUUID();
      await expect(recordEvent(after, ctx())).resolves.toMatchObject({ decision: { eventId: after } });
      expect(await stored(body.eventId)).toBe(0);
      // The request and its copies (an event write is sent again after 15 % of its timeout without an answer), each
      // queued past its deadline and dropped.
      expect(await dropped('batch')).toBeGreaterThan(before);
      // Its retry decides it, once.
      const retried = await postEvent(edge.url, world.key.value, body);
      expect(retried.status).toBe(200);
      expect(await stored(body.eventId)).toBe(1);
    } finally {
      await edge.stop();
    }
  });

  it('a lock wait ends at the deadline with a 503 that says nothing was stored, while the lock is still held', async () => {
    const lock = await lockGame();
    const eventId = randomUUID();
    // The caller waits 30 s; the ledger's lock_timeout follows the 500 ms deadline and answers first.
    expect(await failureOf(recordEvent(eventId, ctx(performance.now() + 500)))).toEqual({
      status: 503,
      code: 'retry_later',
      message: expect.stringMatching(/Nothing was stored/),
    });
    expect(await lockWaiters()).toBe(0);
    await lock.query('rollback');
    expect(await stored(eventId)).toBe(0);
  });
});

describe("a transaction follows its request's deadline", () => {
  let db: string;
  let database: Database;
  let holder: pg.Client | undefined;

  beforeAll(async () => {
    db = await migratedDatabase();
    database = await Database.open({ url: db, poolMax: 2, logger, statementTimeoutMs: 2000, lockTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await holder?.end().catch(() => undefined);
    holder = undefined;
  });
  afterAll(async () => {
    await database?.close();
  });

  const settings = (deadline?: number) =>
    withDeadline(deadline, () =>
      database.transaction(
        async (em) =>
          (await em.execute(
            `select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock`,
          )) as Array<{ statement: string; lock: string }>,
      ),
    );

  it('no deadline: the settings; a deadline further off: capped by them; a near one: what is left of it', async () => {
    expect(await settings()).toEqual([{ statement: '2s', lock: '1s' }]);
    expect(await settings(performance.now() + 60_000)).toEqual([{ statement: '2s', lock: '1s' }]);
    const [near] = await settings(performance.now() + 500);
    for (const value of [near?.statement, near?.lock]) {
      expect(value).toMatch(/^\d+ms$/);
      expect(Number.parseInt(value as string, 10)).toBeLessThanOrEqual(500);
    }
  });

  it('a deadline passed: no transaction starts', async () => {
    let ran = false;
    const late = withDeadline(performance.now() - 1, () =>
      database.transaction(async () => {
        ran = true;
      }),
    );
    const error = await late.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlinePassedError);
    // Each owner answers it as work that never reached the database: its own 503, nothing stored.
    expect(classifyDatabaseFailure(error)).toBe('unavailable');
    expect(ran).toBe(false);
  });

  it('a deadline that passes while the transaction waits for a connection: nothing of it runs', async () => {
    const pool = await (database.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    // Both connections of the pool are taken: the transaction waits for one.
    const taken = await Promise.all([pool.connect(), pool.connect()]);
    let ran = false;
    const deadline = performance.now() + 100;
    const late = withDeadline(deadline, () =>
      database.transaction(async () => {
        ran = true;
      }),
    ).catch((e: unknown) => e);
    while (performance.now() <= deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const client of taken) client.release();
    expect(await late).toBeInstanceOf(DeadlinePassedError);
    expect(ran).toBe(false);
  });

  it('a transaction left idle ends by the deadline too (idle_in_transaction_session_timeout)', async () => {
    const [row] = await withDeadline(performance.now() + 60_000, () =>
      database.transaction(
        async (em) =>
          (await em.execute(`select current_setting('idle_in_transaction_session_timeout') as idle`)) as Array<{
            idle: string;
          }>,
      ),
    );
    expect(row).toEqual({ idle: '2s' });
  });

  it('a lock wait ends at the deadline: 55P03 or 57014, rolled back (nothing stored)', async () => {
    holder = new pg.Client({ connectionString: db });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select 1 from identity.platform_state for update');
    const waited = await withDeadline(performance.now() + 300, () =>
      database.transaction((em) => em.execute('update identity.platform_state set enabled = false')),
    ).catch((e: unknown) => e);
    // Both timeouts are what is left of the deadline: whichever the server fires first ends the wait.
    expect(['55P03', '57014']).toContain(sqlStateOf(waited));
    expect(classifyDatabaseFailure(waited)).toBe('unavailable');
    await holder.query('rollback');
    expect(await sql(db, 'select enabled from identity.platform_state')).toEqual([{ enabled: true }]);
  });
});

describe('the platform gate while identity-admission is down', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let identity: Composed | undefined;
  let transport: NatsTransport;
  let server: ReturnType<ReturnType<typeof createHttpApp>['listen']> | undefined;
  let url: string;
  let now = 0;
  let platform: PlatformSwitch;

  beforeAll(async () => {
    nats = await startNats();
    db = await migratedDatabase();
    identity = await compose({ natsUrl: nats.url, identityDatabaseUrl: db });
    const metrics = createMetrics();
    // The edge's own connection; a missing identity-admission is "no responders" at once.
    transport = await NatsTransport.connect({
      url: nats.url,
      connectionName: 'gate',
      requestTimeoutMs: 2000,
      undeliveredWaitMs: 0,
      logger,
      metrics,
    });
    platform = new PlatformSwitch(transport, () => now);
    const app = createHttpApp({
      program: 'gate-test',
      logger,
      metrics,
      readiness: async () => ({}),
      routes: [
        (router) =>
          router.get('/gated', platformGate(platform, 'retry_later'), (ctx) => {
            ctx.body = { served: true };
          }),
      ],
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/gated`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await transport?.close();
    await identity?.stop();
    await nats?.stop();
  });

  const answer = async () => {
    const response = await fetch(url);
    const body = (await response.json()) as { served?: boolean; error?: { code: string } };
    return { status: response.status, code: body.error?.code ?? (body.served ? 'served' : 'none') };
  };

  it('serves on the last known state within the bound, fails closed past it; a switch-off read before is kept', async () => {
    expect(await answer()).toEqual({ status: 200, code: 'served' });
    // The operator switches the platform off; the edge reads it once its cached state is PLATFORM_CACHE_MS old.
    await sql(db, 'update identity.platform_state set enabled = false');
    now += PLATFORM_CACHE_MS;
    expect(await answer()).toEqual({ status: 503, code: 'PLATFORM_DISABLED' });
    const readAt = now;
    // identity-admission goes away: the last state (off) stays in force within the bound, not an outage's 503.
    await identity?.stop();
    identity = undefined;
    now = readAt + PLATFORM_CACHE_MS;
    expect(await answer()).toEqual({ status: 503, code: 'PLATFORM_DISABLED' });
    now = readAt + PLATFORM_STALE_MAX_MS - 1;
    expect(await answer()).toEqual({ status: 503, code: 'PLATFORM_DISABLED' });
    // Past the bound the state is unknown: fail closed (the route's own 503 for an unreachable dependency).
    now = readAt + PLATFORM_STALE_MAX_MS;
    expect(await answer()).toEqual({ status: 503, code: 'retry_later' });
  });

  it('an enabled platform keeps serving while identity-admission cannot answer, until the bound', async () => {
    identity = await compose({ natsUrl: nats.url, identityDatabaseUrl: db });
    await sql(db, 'update identity.platform_state set enabled = true');
    platform.invalidate();
    expect(await answer()).toEqual({ status: 200, code: 'served' });
    const readAt = now;
    await identity.stop();
    identity = undefined;
    now = readAt + PLATFORM_CACHE_MS;
    // The first request after the cache time waits for the refresh, which fails: the last known state answers.
    expect(await answer()).toEqual({ status: 200, code: 'served' });
    // Later ones are answered from it at once while a refresh runs.
    now = readAt + PLATFORM_STALE_MAX_MS - 1;
    expect(await answer()).toEqual({ status: 200, code: 'served' });
    now = readAt + PLATFORM_STALE_MAX_MS;
    expect(await answer()).toEqual({ status: 503, code: 'retry_later' });
  });
});
