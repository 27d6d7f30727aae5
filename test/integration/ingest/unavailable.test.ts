// A dependency down: 503 retry_later and nothing stored (CONTRACT section 7). The programs are composed in the test
// process (test/support/compose.ts), on a private nats-server, so that the ledger can be left out, or given a database
// of its own that the test then closes.
import { pino } from 'pino';
import { issueKeyValue } from '#runtime/credentials/keys.ts';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose as composePrograms } from '../../support/compose.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { CONFIG_PATH, eventBody, expectDecision, expectError, postEvent, postRaw } from '../../support/ingest.ts';
import { createEventWorld, createKey, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startNats } from '../../support/servers.ts';
import { api } from '../../support/system.ts';

const logger = pino({ level: 'silent' });

/** ingest, plus identity-admission and the ledger when given their database URLs. */
function compose(natsUrl: string, identityDatabaseUrl?: string, ledgerDatabaseUrl?: string): Promise<Composed> {
  return composePrograms({ natsUrl, identityDatabaseUrl, ledgerDatabaseUrl, requestTimeoutMs: 2000, logger });
}

async function migratedDatabase(): Promise<string> {
  const url = await createTestDatabase();
  await migrate(url, [identityMigrations, ledgerMigrations], logger);
  return url;
}

describe('ledger unreachable: 503 retry_later', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let system: Composed;
  let db: string;
  let world: EventWorld;

  beforeAll(async () => {
    nats = await startNats();
    db = await migratedDatabase();
    world = await createEventWorld(db);
    system = await compose(nats.url, db);
  });
  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  it('a valid event', async () => {
    const response = await postEvent(system.url, world.key.value, eventBody(world));
    expectError(response, 503, 'retry_later');
    expect(response.headers.get('retry-after')).toBe('1');
  });

  it('a batch whose every event met the outage: a whole-request 503 saying nothing was stored', async () => {
    const response = await api(system.url, 'POST', '/api/game-sdk/v2/events/batch', {
      token: world.key.value,
      body: { events: [eventBody(world), eventBody(world)] },
    });
    expectError(response, 503, 'retry_later');
    expect(response.body.error.message).toContain('Nothing was stored');
    expect(response.headers.get('retry-after')).toBe('1');
  });

  it('a body error behind a well-formed key (whether the key is valid cannot be told)', async () => {
    expectError(await postRaw(system.url, world.key.value, '{', 'application/json'), 503, 'retry_later');
    expectError(await postEvent(system.url, issueKeyValue('public').value, eventBody(world)), 503, 'retry_later');
  });

  it('a malformed key still answers 401 (decided at the edge)', async () => {
    expectError(await postEvent(system.url, 'cr_sk_sandbox_short', eventBody(world)), 401, 'invalid_key');
  });

  it('the public configuration', async () => {
    const key = await createKey(db, world.game, 'public');
    expectError(await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=${key.value}`), 503, 'retry_later');
  });
});

describe('identity-admission unreachable (the platform switch cannot be read): 503 retry_later', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let system: Composed;
  let db: string;
  let world: EventWorld;

  beforeAll(async () => {
    nats = await startNats();
    db = await migratedDatabase();
    world = await createEventWorld(db);
    system = await compose(nats.url, undefined, db);
  });
  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  it('on both endpoints, before the credential is looked at', async () => {
    expectError(await postEvent(system.url, world.key.value, eventBody(world)), 503, 'retry_later');
    expectError(await postEvent(system.url, undefined, eventBody(world)), 503, 'retry_later');
    expectError(await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=x`), 503, 'retry_later');
  });
});

describe("the ledger's database unreachable: 503 retry_later, nothing stored", () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let system: Composed;
  let ledgerDb: string;
  let world: EventWorld;

  const setConnections = async (allow: boolean) => {
    const name = new URL(ledgerDb).pathname.slice(1);
    const admin = process.env.TEST_DATABASE_URL!;
    await sql(admin, `alter database ${name} with allow_connections ${allow}`);
    if (!allow) {
      await sql(admin, 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
    }
  };

  beforeAll(async () => {
    nats = await startNats();
    ledgerDb = await migratedDatabase();
    world = await createEventWorld(ledgerDb);
    system = await compose(nats.url, await migratedDatabase(), ledgerDb);
  });
  afterAll(async () => {
    await setConnections(true);
    await system?.stop();
    await nats?.stop();
  });

  it('answers retry_later while the database is down, then decides the same event afresh', async () => {
    expect(expectDecision(await postEvent(system.url, world.key.value, eventBody(world))).status).toBe('accepted');
    const body = eventBody(world);
    await setConnections(false);
    expectError(await postEvent(system.url, world.key.value, body), 503, 'retry_later');
    expectError(await postRaw(system.url, world.key.value, '{', 'application/json'), 503, 'retry_later');
    await setConnections(true);
    const decision = expectDecision(await postEvent(system.url, world.key.value, body));
    expect(decision).toMatchObject({ status: 'accepted', replayed: false });
  });
});
