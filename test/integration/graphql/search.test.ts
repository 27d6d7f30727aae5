// search (GraphQL only, the web console's search box): one text finds the caller's organizations, projects and games
// by id or name, keys by id or prefix, players by id or the game's own id (with what they were paid today and in
// all), decisions by id or event id; another developer's objects are never found; a text empty or over 200
// characters is 400 INVALID_RECORD_QUERY.
import { randomBytes, randomUUID } from 'node:crypto';
import { type Developer, developer, insertPlayer, ok, type World, world } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql } from './helpers.ts';

const SEARCH = `query Search($text: String!) {
  search(text: $text) {
    text
    organizations { id name }
    projects { id name }
    games { id name }
    keys { key { id prefix gameId } decisionsToday lastUsedToday }
    players { player { id externalPlayerId gameId } rewardedTodayCredits rewardedCredits }
    decisions { id eventId playerId status rewardCredits }
  }
}`;

let system: TestSystem;
let owner: Developer;
let outsider: Developer;
let w: World;
let hero: string;
let keyId: string;
const decisionId = randomUUID();
const eventId = randomUUID();

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  outsider = await developer(system);
  w = await world(system, owner.token);
  await ok(system, owner.token, { type: 'updateGame', gameId: w.gameId, name: 'Moon Quest' });
  await world(system, outsider.token);
  hero = await insertPlayer(system, w.gameId, { externalPlayerId: 'hero-9' });
  keyId = (await ok(system, owner.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' })).id;
  // Two accepted decisions of hero by that key: one today (30 credits), one two days ago (20).
  const url = system.databaseUrl!;
  for (const [id, event, reward, daysAgo] of [
    [decisionId, eventId, 30, 0],
    [randomUUID(), randomUUID(), 20, 2],
  ] as const) {
    await sql(
      url,
      `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                  occurred_at, status, reason, reward_credits, payload_hash, created_at)
       select $1, g.id, g.project_id, g.organization_id, $2, $3, $4, 'level.up', now() - make_interval(days => $5),
              'accepted', null, $6, $7, now() - make_interval(days => $5)
         from ledger.games g where g.id = $8`,
      [id, event, hero, keyId, daysAgo, reward, randomBytes(32), w.gameId],
    );
  }
  await sql(
    url,
    `insert into ledger.player_daily_totals (game_id, player_id, day, credits)
     values ($1, $2, (now() at time zone 'UTC')::date, 30)`,
    [w.gameId, hero],
  );
});

afterAll(async () => {
  await system?.stop();
});

async function search(text: string, token = owner.token) {
  const result = await gql(system, token, SEARCH, { text });
  expect(result.status).toBe(200);
  expect(result.body.errors).toBeUndefined();
  return result.body.data.search;
}

const idsOf = (list: Array<{ id: string }>) => list.map((o) => o.id);

test('a name finds the organization, project and game that contain it, case-insensitive', async () => {
  const found = await search('  moon ');
  expect(found.text).toBe('moon');
  expect(idsOf(found.games)).toEqual([w.gameId]);
  expect(found.organizations).toEqual([]);
  expect(idsOf((await search('proj')).projects)).toEqual([w.projectId]);
  expect(idsOf((await search('ORG')).organizations)).toEqual([w.organizationId]);
  // % and _ are letters here, not patterns.
  expect((await search('%')).organizations).toEqual([]);
  // Each word, in any order, as the start or any part of a word of the name.
  expect(idsOf((await search('quest MOON')).games)).toEqual([w.gameId]);
  expect(idsOf((await search('moo  que')).games)).toEqual([w.gameId]);
  expect((await search('moon quests')).games).toEqual([]);
});

test("the game's own player id finds the player, with today's and all-time rewards", async () => {
  const found = await search('hero-9');
  expect(found.players).toEqual([
    {
      player: { id: hero, externalPlayerId: 'hero-9', gameId: w.gameId },
      rewardedTodayCredits: 30,
      rewardedCredits: 50,
    },
  ]);
  expect(found.decisions).toEqual([]);
  // Exact, not a part of it.
  expect((await search('hero')).players).toEqual([]);
  expect((await search(hero)).players.map((p: any) => p.player.id)).toEqual([hero]);
});

test('a decision id and an event id find the decision', async () => {
  for (const text of [decisionId, eventId, eventId.toUpperCase()]) {
    const found = await search(text);
    expect(found.decisions).toEqual([
      { id: decisionId, eventId, playerId: hero, status: 'accepted', rewardCredits: 30 },
    ]);
  }
});

test("a key's id or prefix finds it, with today's decisions and its last use today", async () => {
  const byId = await search(keyId);
  expect(byId.keys).toHaveLength(1);
  expect(byId.keys[0].key.id).toBe(keyId);
  expect(byId.keys[0].decisionsToday).toBe(1);
  expect(Date.parse(byId.keys[0].lastUsedToday)).toBeGreaterThan(Date.now() - 86_400_000);
  const prefix = byId.keys[0].key.prefix as string;
  expect((await search(prefix.slice(0, 18))).keys.map((k: any) => k.key.id)).toContain(keyId);
});

test("another developer's search finds none of it, and the text's bounds are checked", async () => {
  for (const text of ['Moon', 'hero-9', decisionId, eventId, keyId, hero, w.organizationId]) {
    const found = await search(text, outsider.token);
    const all = [found.organizations, found.projects, found.games, found.keys, found.players, found.decisions];
    expect(all.flat()).toEqual([]);
  }
  // A control character (NUL included, which PostgreSQL text cannot hold) is in no id or name: refused, not sent.
  for (const text of ['   ', 'x'.repeat(201), '\u0000\u0005Rv', 'hero\u007f']) {
    const result = await gql(system, owner.token, SEARCH, { text });
    expect(result.body.errors?.[0]?.extensions.code).toBe('INVALID_RECORD_QUERY');
    expect(result.body.errors?.[0]?.extensions.status).toBe(400);
  }
});
