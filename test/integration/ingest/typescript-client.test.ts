// The TypeScript client generated from the OpenAPI document (clients/typescript: openapi-typescript's openapi.d.ts,
// openapi-fetch) against the running service on real PostgreSQL and NATS: an event and its quota headers, a batch
// (fresh, a replay, a per-item 404), a player read, and a native route's error, each read through the generated types.
// `npm run typecheck` checks this file, and so the client, against the generated types; `.ci/check-openapi-types.sh`
// checks that they are those of the current document.
import { randomUUID } from 'node:crypto';
import {
  type GameEventBatchResult,
  type GameEventInput,
  isDecision,
  rewardsClient,
} from '../../../clients/typescript/rewards-client.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

describe('the generated TypeScript client', () => {
  let system: TestSystem;
  let world: EventWorld;

  beforeAll(async () => {
    system = await startTestSystem();
    world = await createEventWorld(system.databaseUrl!);
  });
  afterAll(async () => system?.stop());

  const event = (overrides: Partial<GameEventInput> = {}): GameEventInput => ({
    eventId: randomUUID(),
    playerId: world.player.id,
    eventType: world.eventType,
    occurredAt: new Date().toISOString(),
    ...overrides,
  });

  it('posts an event and reads its decision and quota headers', async () => {
    const server = rewardsClient(system.url, world.key.value);
    const body = event();
    const { data, error, response } = await server.POST('/api/game-sdk/v2/events', { body });
    expect(error).toBeUndefined();
    const status: 'accepted' | 'rejected' = data!.data.status;
    expect([status, data!.data.eventId, data!.data.replayed]).toEqual(['accepted', body.eventId, false]);
    expect(response.headers.get('RateLimit')).toMatch(/^"minute";r=\d+;t=\d+$/);
  });

  it('posts a batch: a fresh event, a replay and an unknown player, each result typed', async () => {
    const server = rewardsClient(system.url, world.key.value);
    const fresh = event();
    const events = [fresh, fresh, event({ playerId: randomUUID() })];
    const { data, error } = await server.POST('/api/game-sdk/v2/events/batch', { body: { events } });
    expect(error).toBeUndefined();
    const results: GameEventBatchResult[] = data!.data.results;
    const read = results.map((result) =>
      isDecision(result) ? [result.status, result.data.replayed] : [result.status, result.error.code],
    );
    expect(read).toEqual([
      [200, false],
      [200, true],
      [404, 'invalid_player'],
    ]);
  });

  it('reads a player, and a native route answers its typed error', async () => {
    const server = rewardsClient(system.url, world.key.value);
    const player = await server.GET('/api/game-sdk/v2/players/{playerId}', {
      params: { path: { playerId: world.player.id } },
    });
    expect(player.data?.data).toMatchObject({ playerId: world.player.id, linked: true });
    const native = rewardsClient(system.url, 'not-a-session');
    const { error, response } = await native.POST('/api/native/v1/link-intents/inspect', {
      body: { linkToken: `cr_link_sandbox_${'A'.repeat(43)}` },
    });
    expect(response.status).toBe(401);
    expect(error?.error.code).toBe('INVALID_TOKEN');
  });
});
