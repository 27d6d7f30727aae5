// The event's metadata, stored with its decision (migration 0010) and answered by GraphQL decisions (the web
// console's decision panel) as the game server's object in RFC 8785 canonical form; never in the REST records, whose
// shape is the spec's. Through the real edge: the metadata text the ledger stores is the one the edge hashed.

import { type Developer, developer } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { type EventGame, eventGame, gameEvent, postGameEvent } from '../../support/live.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql, restRecords } from './helpers.ts';

const DECISIONS = `query Decisions($gameId: UUID, $eventId: UUID) {
  decisions(gameId: $gameId, eventId: $eventId, first: 10) {
    edges { metadata node { eventId status } }
  }
}`;

let system: TestSystem;
let owner: Developer;
let game: EventGame;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  game = await eventGame(system, owner.token);
});

afterAll(async () => {
  await system?.stop();
});

async function edgeOf(eventId: string) {
  const result = await gql(system, owner.token, DECISIONS, { gameId: game.gameId, eventId });
  expect(result.body.errors).toBeUndefined();
  const edges = result.body.data.decisions.edges;
  expect(edges).toHaveLength(1);
  return edges[0];
}

test('metadata sent with an event is answered as that object, members sorted; none is null', async () => {
  const withMetadata = gameEvent(game);
  const metadata = { tags: ['b', 'a'], map: 'north', level: 3, nested: { z: 1e21, a: -0, ok: true, none: null } };
  await postGameEvent(system.url, game, { ...withMetadata, metadata });
  const without = gameEvent(game);
  await postGameEvent(system.url, game, without);
  const empty = gameEvent(game);
  await postGameEvent(system.url, game, { ...empty, metadata: {} });

  const answered = await edgeOf(String(withMetadata.eventId));
  expect(answered.metadata).toEqual({
    level: 3,
    map: 'north',
    nested: { a: 0, none: null, ok: true, z: 1e21 },
    tags: ['b', 'a'],
  });
  expect(Object.keys(answered.metadata)).toEqual(['level', 'map', 'nested', 'tags']);
  expect((await edgeOf(String(without.eventId))).metadata).toBeNull();
  expect((await edgeOf(String(empty.eventId))).metadata).toEqual({});

  // Stored as the canonical text the edge hashed (RFC 8785: sorted members, 1e+21, -0 as 0).
  const rows = await sql<{ metadata: string }>(
    system.databaseUrl!,
    `select metadata from ledger.events where game_id = $1 and event_id = $2`,
    [game.gameId, withMetadata.eventId],
  );
  expect(rows[0]?.metadata).toBe(
    '{"level":3,"map":"north","nested":{"a":0,"none":null,"ok":true,"z":1e+21},"tags":["b","a"]}',
  );
});

test('a replay stores nothing new: the first metadata stays, and another metadata is a conflict', async () => {
  const event: Record<string, unknown> = { ...gameEvent(game), metadata: { attempt: 1 } };
  expect((await postGameEvent(system.url, game, event)).replayed).toBe(false);
  expect((await postGameEvent(system.url, game, event)).replayed).toBe(true);
  const other = await fetch(`${system.url}/api/game-sdk/v2/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${game.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...event, metadata: { attempt: 2 } }),
  });
  expect(other.status).toBe(409);
  expect(((await other.json()) as { error: { code: string } }).error.code).toBe('event_conflict');
  expect((await edgeOf(String(event.eventId))).metadata).toEqual({ attempt: 1 });
});

test('the REST records keep the spec shape: no metadata member', async () => {
  const response = await restRecords(system, owner.token, { kind: 'events', gameId: game.gameId, limit: 100 });
  expect(response.status).toBe(200);
  const records = response.body.data.records as Array<Record<string, unknown>>;
  expect(records.length).toBeGreaterThan(0);
  for (const record of records) expect(record).not.toHaveProperty('metadata');
});

test('the database holds the metadata to an object of at most 4,096 bytes', async () => {
  // A copy of a stored decision under a new id and event id, with the metadata given.
  const insert = (value: string) =>
    sql(
      system.databaseUrl!,
      `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                  occurred_at, status, reason, reward_credits, payload_hash, created_at, metadata)
       select gen_random_uuid(), game_id, project_id, organization_id, gen_random_uuid(), player_id, key_id,
              event_type, occurred_at, 'rejected', 'rate_limited', 0, payload_hash, created_at, $2
         from ledger.events where game_id = $1 limit 1`,
      [game.gameId, value],
    );
  await expect(insert('[1]')).rejects.toThrow(/events_metadata_object/);
  await expect(insert(`{"a":"${'x'.repeat(4090)}"}`)).rejects.toThrow(/events_metadata_object/);
  await expect(insert(`{"a":"${'x'.repeat(4088)}"}`)).resolves.toBeDefined();
});
