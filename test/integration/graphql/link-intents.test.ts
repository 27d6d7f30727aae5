// linkIntents (GraphQL only, the web console's game page): a game's link intents, newest first, paged with cursors
// over the link_intents_by_game index; every member of the game's organization reads them (as its players), others
// get not_found; the states pending, consumed and expired follow approvals and the 10 minutes, read with the
// ledger's link clock set by the test (explicit times, no waiting); the token never appears.
import { randomUUID } from 'node:crypto';
import { buildSchema, type GraphQLObjectType } from 'graphql';
import pg from 'pg';
import { typeDefs } from '../../../gateway/src/graphql/server.ts';
import { addMember, type Developer, developer, world } from '../../support/console.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { APPROVE, expectData, type Game, gameWithKeys, intent, native, nativeSession } from '../links/helpers.ts';
import { gql } from './helpers.ts';

const LINK_INTENTS = `query LinkIntents($gameId: UUID!, $first: Int, $after: String) {
  linkIntents(gameId: $gameId, first: $first, after: $after) {
    edges {
      cursor
      node { id gameId organizationId playerId externalPlayerId state createdAt expiresAt consumedAt }
    }
    pageInfo { endCursor hasNextPage startCursor hasPreviousPage }
  }
}`;

const T = new Date('2030-02-01T00:00:00.000Z');
const at = (minutes: number) => new Date(T.getTime() + minutes * 60_000);

let system: TestSystem;
let game: Game;
let viewer: Developer;
let outsider: Developer;
/** The intents created below, oldest first. */
const created: Array<{ playerId: string; linkToken: string; externalPlayerId: string; minute: number }> = [];

beforeAll(async () => {
  system = await startTestSystem({ env: { SUPPORTED_COUNTRIES: 'DE', NATIVE_MIN_BUILD: '100' } });
  game = await gameWithKeys(system);
  viewer = await developer(system);
  outsider = await developer(system);
  await addMember(system, game.token, game.organizationId, viewer, 'viewer');
  // Four intents a minute apart, for four players; the second is approved half a minute after its creation.
  for (const minute of [0, 1, 2, 3]) {
    system.clock.set(at(minute));
    created.push({ ...(await intent(system, game, `player-${minute}`)), minute });
  }
  system.clock.set(at(1.5));
  const session = await nativeSession(system, { username: 'linked-one' });
  expectData(await native(system, APPROVE, session, { linkToken: created[1]!.linkToken }), 'LinkApproval');
});

afterAll(async () => {
  system?.clock.reset();
  await system?.stop();
});

async function read(token: string, variables: Record<string, unknown>) {
  const result = await gql(system, token, LINK_INTENTS, { gameId: game.gameId, ...variables });
  expect(result.status).toBe(200);
  return result;
}

const states = (result: Awaited<ReturnType<typeof read>>) =>
  result.body.data.linkIntents.edges.map((e: any) => [e.node.externalPlayerId, e.node.state]);

test('every member reads them newest first, with the states at the time of the read and no token', async () => {
  system.clock.set(at(11));
  for (const who of [game.token, viewer.token]) {
    const result = await read(who, {});
    expect(result.body.errors).toBeUndefined();
    const edges = result.body.data.linkIntents.edges;
    expect(edges.map((e: any) => e.node)).toEqual(
      [...created].reverse().map((c) => ({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        gameId: game.gameId,
        organizationId: game.organizationId,
        playerId: c.playerId,
        externalPlayerId: c.externalPlayerId,
        // Created at minute 0: past its 10 minutes at minute 11. Minute 1: approved at 1.5. Later ones: pending.
        state: c.minute === 0 ? 'expired' : c.minute === 1 ? 'consumed' : 'pending',
        createdAt: at(c.minute).toISOString(),
        expiresAt: at(c.minute + 10).toISOString(),
        consumedAt: c.minute === 1 ? at(1.5).toISOString() : null,
      })),
    );
    expect(result.body.data.linkIntents.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const text = JSON.stringify(result.body);
    for (const c of created) expect(text).not.toContain(c.linkToken);
  }
});

test('the states follow the clock: pending until the 10 minutes are over, consumed stays consumed', async () => {
  system.clock.set(at(5));
  expect(states(await read(game.token, {}))).toEqual([
    ['player-3', 'pending'],
    ['player-2', 'pending'],
    ['player-1', 'consumed'],
    ['player-0', 'pending'],
  ]);
  system.clock.set(at(60));
  expect(states(await read(game.token, {}))).toEqual([
    ['player-3', 'expired'],
    ['player-2', 'expired'],
    ['player-1', 'consumed'],
    ['player-0', 'expired'],
  ]);
});

test('the served type has no field for a token, its hash or the approving account', async () => {
  const served = buildSchema(typeDefs).getType('DeveloperLinkIntent') as GraphQLObjectType;
  expect(Object.keys(served.getFields()).sort()).toEqual([
    'consumedAt',
    'createdAt',
    'expiresAt',
    'externalPlayerId',
    'gameId',
    'id',
    'organizationId',
    'playerId',
    'state',
  ]);
  for (const field of ['linkToken', 'tokenHash', 'consumedBy']) {
    const asked = await gql(
      system,
      game.token,
      `{ linkIntents(gameId: "${game.gameId}") { edges { node { ${field} } } } }`,
    );
    expect(asked.status).toBe(400);
    expect(asked.body.data).toBeUndefined();
  }
});

test('pages of `first` continue `after` a cursor; bad sizes and cursors answer the records codes', async () => {
  system.clock.set(at(11));
  const all = (await read(game.token, {})).body.data.linkIntents.edges.map((e: any) => e.node.id);
  const first = await read(viewer.token, { first: 3 });
  const page1 = first.body.data.linkIntents;
  expect(page1.edges).toHaveLength(3);
  expect(page1.pageInfo).toEqual({
    endCursor: page1.edges[2].cursor,
    hasNextPage: true,
    startCursor: page1.edges[0].cursor,
    hasPreviousPage: false,
  });
  const page2 = (await read(viewer.token, { first: 3, after: page1.pageInfo.endCursor })).body.data.linkIntents;
  expect(page2.edges).toHaveLength(1);
  expect(page2.pageInfo.hasNextPage).toBe(false);
  expect([...page1.edges, ...page2.edges].map((e: any) => e.node.id)).toEqual(all);
  // Continuing after any edge's cursor starts right after that edge.
  const fromSecond = (await read(game.token, { after: page1.edges[1].cursor })).body.data.linkIntents;
  expect(fromSecond.edges.map((e: any) => e.node.id)).toEqual(all.slice(2));

  for (const size of [0, 101]) {
    const bad = await read(game.token, { first: size });
    expect(bad.body.data.linkIntents).toBeNull();
    expect(bad.body.errors?.[0]?.extensions).toEqual({ code: 'INVALID_RECORD_QUERY', status: 400 });
  }
  // A cursor of another game, or an altered one, is not this game's.
  const other = await world(system, game.token);
  const tampered = `${page1.pageInfo.endCursor.slice(0, -2)}AA`;
  for (const [gameId, after] of [
    [other.gameId, page1.pageInfo.endCursor],
    [game.gameId, tampered],
  ]) {
    const bad = await read(game.token, { gameId, after });
    expect(bad.body.errors?.[0]?.extensions).toEqual({ code: 'INVALID_CURSOR', status: 400 });
  }
  expect((await read(game.token, { gameId: other.gameId })).body.data.linkIntents.edges).toEqual([]);
});

test('a developer outside the organization is refused with not_found, as for the game records', async () => {
  for (const gameId of [game.gameId, randomUUID()]) {
    const hidden = await read(outsider.token, { gameId });
    expect(hidden.body.data.linkIntents).toBeNull();
    expect(hidden.body.errors?.[0]?.extensions).toEqual({ code: 'not_found', status: 404 });
  }
});

test('the page is a range of the link_intents_by_game index', async () => {
  const client = new pg.Client({ connectionString: system.databaseUrl! });
  await client.connect();
  try {
    // The fixture table is tiny, so sequential scans are priced out to show the plan of a table of real size.
    await client.query('set enable_seqscan = off');
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `explain select i.id from ledger.link_intents i join ledger.players p on p.id = i.player_id
        where i.game_id = $1 and (i.created_at, i.id) < ($2::timestamptz, $3::uuid)
        order by i.created_at desc, i.id desc limit 51`,
      [game.gameId, at(2).toISOString(), randomUUID()],
    );
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('link_intents_by_game');
    expect(text).not.toMatch(/Seq Scan on link_intents/);
  } finally {
    await client.end();
  }
});
