// The delivery worker's claim is fair across endpoints and tenants, on real PostgreSQL: endpoints at their in-flight
// bound are skipped (another tenant's endpoint sorting after them is served), endpoints are taken round robin, an
// organization gets no more than its room, and a webhook.test is claimed before its endpoint's backlog. A game has at
// most 20 endpoints, held by the database too.
import { randomBytes, randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Database, migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { WEBHOOK_ENDPOINTS_PER_GAME_MAX } from '../../../services/ledger/src/webhooks/limits.ts';
import { type ClaimedMessage, WebhookRepository } from '../../../services/ledger/src/webhooks/repository.ts';
import { lastInRoundRobin } from '../../../services/ledger/src/webhooks/worker.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { createGame, type GameFixture } from '../../support/ledger-fixtures.ts';

const logger = pino({ level: 'silent' });
const LEASE = 60_000;

async function endpoint(url: string, game: GameFixture, id: string = randomUUID()): Promise<string> {
  await sql(
    url,
    `insert into ledger.webhook_endpoints (id, game_id, organization_id, url, event_types, secret_ciphertext)
     values ($1, $2, $3, 'https://hooks.example.com/in', array['game.paused'], $4)`,
    [id, game.gameId, game.organizationId, randomBytes(60)],
  );
  return id;
}

/** `count` due messages of `eventType`, created `ageSeconds` ago (older ones are due first). */
async function messages(url: string, endpointId: string, gameId: string, count: number, eventType = 'game.paused') {
  await sql(
    url,
    `insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, next_attempt_at)
     select gen_random_uuid(), $1, $2, $3, '{}'::jsonb, now() - interval '1 minute' from generate_series(1, $4)`,
    [endpointId, gameId, eventType, count],
  );
}

/** Puts `count` of the endpoint's messages under a lease (as a slow receiver holds them). */
async function holdInFlight(url: string, endpointId: string, count: number) {
  await sql(
    url,
    `update ledger.webhook_messages set in_flight_until = now() + interval '10 minutes', attempts = 1
      where id in (select id from ledger.webhook_messages where endpoint_id = $1 and state = 'pending' limit $2)`,
    [endpointId, count],
  );
}

const endpointsOf = (claimed: ClaimedMessage[]) => new Set(claimed.map((m) => m.endpointId));

describe('fair webhook claims', () => {
  let database: Database;
  let url: string;
  beforeEach(async () => {
    url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerMigrations], logger);
    database = await Database.open({ url, poolMax: 2, logger });
  });
  afterEach(async () => {
    await database?.close();
  });

  it("skips a tenant's endpoints at their bound: another tenant's endpoint sorting after them is served", async () => {
    const slow = await createGame(url);
    const slowEndpoints: string[] = [];
    for (let i = 0; i < 20; i++) {
      // Ids that sort before the other tenant's.
      const id = await endpoint(url, slow, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
      await messages(url, id, slow.gameId, 6);
      await holdInFlight(url, id, 4);
      slowEndpoints.push(id);
    }
    const other = await createGame(url);
    const late = await endpoint(url, other, 'ffffffff-ffff-4fff-bfff-ffffffffffff');
    await messages(url, late, other.gameId, 1);

    const claimed = await new WebhookRepository(database).claim({ endpointsMax: 4, inFlightMax: 4, leaseMs: LEASE });
    expect([...endpointsOf(claimed)]).toEqual([late]);
  });

  it('takes endpoints round robin, so the last in id order is served within one turn of all', async () => {
    const busy = await createGame(url);
    for (let i = 0; i < 20; i++) {
      const id = await endpoint(url, busy, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
      await messages(url, id, busy.gameId, 50);
    }
    const other = await createGame(url);
    const late = await endpoint(url, other, 'ffffffff-ffff-4fff-bfff-ffffffffffff');
    await messages(url, late, other.gameId, 1);

    const repository = new WebhookRepository(database);
    let after: string | undefined;
    const served: string[][] = [];
    // 21 endpoints, 4 per claim: every one is served within 6 claims (with id order alone, the first 4 forever).
    for (let round = 0; round < 6; round++) {
      const claimed = await repository.claim({ endpointsMax: 4, inFlightMax: 1, leaseMs: LEASE, after });
      served.push([...endpointsOf(claimed)]);
      after = lastInRoundRobin(
        claimed.map((m) => m.endpointId),
        after,
      );
      // The attempts end at once (the lease is lifted): the endpoints have room again.
      await sql(url, `update ledger.webhook_messages set in_flight_until = null where id = any($1::uuid[])`, [
        claimed.map((m) => m.id),
      ]);
    }
    expect(served.flat()).toContain(late);
    expect(new Set(served.flat()).size).toBe(21);
  });

  it('gives an organization no more than its room, and none when it has none', async () => {
    const tenant = await createGame(url);
    for (let i = 0; i < 5; i++) await messages(url, await endpoint(url, tenant), tenant.gameId, 10);
    const other = await createGame(url);
    await messages(url, await endpoint(url, other), other.gameId, 10);
    const repository = new WebhookRepository(database);

    const capped = await repository.claim({
      endpointsMax: 10,
      inFlightMax: 4,
      leaseMs: LEASE,
      organizationInFlightMax: 3,
    });
    const byOrganization = (list: ClaimedMessage[], organizationId: string) =>
      list.filter((m) => m.organizationId === organizationId).length;
    expect(byOrganization(capped, tenant.organizationId)).toBe(3);
    expect(byOrganization(capped, other.organizationId)).toBe(3);

    const none = await repository.claim({
      endpointsMax: 10,
      inFlightMax: 4,
      leaseMs: LEASE,
      organizationRoom: { [tenant.organizationId]: 0 },
      organizationInFlightMax: 100,
    });
    expect(byOrganization(none, tenant.organizationId)).toBe(0);
    expect(byOrganization(none, other.organizationId)).toBe(1);
  });

  it("claims a webhook.test before the endpoint's backlog", async () => {
    const game = await createGame(url);
    const id = await endpoint(url, game);
    await messages(url, id, game.gameId, 200);
    // The test is the newest message of the endpoint.
    await sql(
      url,
      `insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, next_attempt_at)
       values (gen_random_uuid(), $1, $2, 'webhook.test', '{}'::jsonb, now())`,
      [id, game.gameId],
    );
    const claimed = await new WebhookRepository(database).claim({ endpointsMax: 1, inFlightMax: 1, leaseMs: LEASE });
    expect(claimed.map((m) => m.eventType)).toEqual(['webhook.test']);
  });

  it(`refuses a game's endpoint past ${WEBHOOK_ENDPOINTS_PER_GAME_MAX} in the database`, async () => {
    const game = await createGame(url);
    for (let i = 0; i < WEBHOOK_ENDPOINTS_PER_GAME_MAX; i++) await endpoint(url, game);
    await expect(endpoint(url, game)).rejects.toMatchObject({
      code: '23514',
      constraint: 'webhook_endpoints_per_game',
    });
    // Another game is not affected.
    await endpoint(url, await createGame(url));
  });
});

describe('lastInRoundRobin', () => {
  it('is the last endpoint in the order the claim took them', () => {
    expect(lastInRoundRobin([], 'b')).toBe('b');
    expect(lastInRoundRobin(['c', 'd'], undefined)).toBe('d');
    expect(lastInRoundRobin(['c', 'd'], 'b')).toBe('d');
    // Wrapped: after 'c' came 'd', then from the start 'a'.
    expect(lastInRoundRobin(['d', 'a'], 'c')).toBe('a');
  });
});
