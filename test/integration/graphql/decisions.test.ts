// decisions (GraphQL only, the web console's records page): decision search over the events records, with the rules
// of the records endpoint (CONTRACT section 8): membership decides what a caller sees (a non-member gets REST's
// answer), `first`/`last` 1..100 and malformed filters are 400 INVALID_RECORD_QUERY, a cursor altered or issued for
// other filters 400 INVALID_CURSOR; each filter, paging both ways with exact flags, and the index each search reads.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { decisionsStatement } from '../../../services/ledger/src/console/read-repository.ts';
import { addMember, type Developer, developer, insertPlayer, ok, type World, world } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql, graphqlOutcome, RECORDS_QUERY, restOutcome, restRecords } from './helpers.ts';

const DECISIONS = `query Decisions(
  $organizationId: UUID, $projectId: UUID, $gameId: UUID, $playerId: UUID, $eventId: UUID,
  $status: EventStatus, $reason: EventReason, $eventType: String, $from: DateTime, $to: DateTime,
  $first: Int, $after: String, $last: Int, $before: String
) {
  decisions(
    organizationId: $organizationId, projectId: $projectId, gameId: $gameId, playerId: $playerId, eventId: $eventId,
    status: $status, reason: $reason, eventType: $eventType, from: $from, to: $to,
    first: $first, after: $after, last: $last, before: $before
  ) {
    edges {
      cursor
      externalPlayerId
      node { id eventId gameId organizationId playerId eventType occurredAt status reason rewardCredits createdAt }
    }
    pageInfo { endCursor hasNextPage startCursor hasPreviousPage }
  }
}`;

let system: TestSystem;
let owner: Developer;
let viewer: Developer;
let outsider: Developer;
let w: World;
let otherGameId: string;
let players: string[];
let otherPlayer: string;

interface Fixture {
  id: string;
  eventId: string;
  gameId: string;
  playerId: string;
  eventType: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  reward: number;
  createdAt: string;
}
/** Every decision inserted, oldest first. */
const fixtures: Fixture[] = [];
// A fixed past hour, so that the rows below are the only decisions there are.
const BASE = Date.UTC(2026, 0, 10, 12, 0, 0);
const minute = (n: number) => new Date(BASE + n * 60_000).toISOString();

async function decision(f: Omit<Fixture, 'id' | 'eventId' | 'createdAt'>, at: number): Promise<void> {
  const row: Fixture = { ...f, id: randomUUID(), eventId: randomUUID(), createdAt: minute(at) };
  const keyId = randomUUID();
  await sql(
    system.databaseUrl!,
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
     select $1, g.id, g.organization_id, 'secret', 'fixture', 'cr_sk_sandbox_AAAAAA', null, $3
       from ledger.games g where g.id = $2`,
    [keyId, row.gameId, randomBytes(32)],
  );
  await sql(
    system.databaseUrl!,
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select $1, g.id, g.project_id, g.organization_id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $6
       from ledger.games g where g.id = $11`,
    [
      row.id,
      row.eventId,
      row.playerId,
      keyId,
      row.eventType,
      row.createdAt,
      row.status,
      row.reason,
      row.reward,
      randomBytes(32),
      row.gameId,
    ],
  );
  fixtures.push(row);
}

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
  w = await world(system, owner.token);
  await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
  otherGameId = (
    await ok(system, owner.token, {
      type: 'createGame',
      projectId: w.projectId,
      name: 'Other game',
      platform: 'ios',
      maxPayoutCredits: 100,
      dailyPlayerCapCredits: 10,
    })
  ).id;
  players = [await insertPlayer(system, w.gameId), await insertPlayer(system, w.gameId)];
  otherPlayer = await insertPlayer(system, otherGameId);
  const outcomes: Array<['accepted', null, number] | ['rejected', string, 0]> = [
    ['accepted', null, 5],
    ['rejected', 'daily_player_cap', 0],
    ['rejected', 'game_budget_exhausted', 0],
    ['accepted', null, 5],
    ['rejected', 'player_not_linked', 0],
    ['rejected', 'daily_player_cap', 0],
  ];
  // Twelve decisions a minute apart: alternating players, two event types, the outcomes above in turn; the last two
  // in the other game.
  for (let n = 0; n < 12; n++) {
    const [status, reason, reward] = outcomes[n % outcomes.length]!;
    await decision(
      {
        gameId: n < 10 ? w.gameId : otherGameId,
        playerId: n < 10 ? players[n % 2]! : otherPlayer,
        eventType: n % 3 === 0 ? 'match.won' : 'level.up',
        status,
        reason,
        reward,
      },
      n,
    );
  }
});

afterAll(async () => {
  await system?.stop();
});

async function search(token: string, variables: Record<string, unknown>) {
  return gql(system, token, DECISIONS, variables);
}

/** The decision ids of a search that must succeed, and its page flags. */
async function ids(token: string, variables: Record<string, unknown>) {
  const result = await search(token, variables);
  expect(result.body.errors).toBeUndefined();
  const connection = result.body.data.decisions;
  return { ids: connection.edges.map((e: any) => e.node.id) as string[], pageInfo: connection.pageInfo, connection };
}

/** The fixtures matching a predicate, newest first (the order of every page). */
const newestFirst = (match: (f: Fixture) => boolean) =>
  fixtures
    .filter(match)
    .reverse()
    .map((f) => f.id);

function expectError(result: Awaited<ReturnType<typeof search>>, status: number, code: string) {
  expect(graphqlOutcome(result, 'decisions')).toEqual({ error: { status, code } });
}

describe('authorization: membership, as the records endpoint', () => {
  test('members of every role read the same decisions; each node is the events record', async () => {
    const ownerPage = await ids(owner.token, {});
    const viewerPage = await ids(viewer.token, {});
    expect(ownerPage.ids).toEqual(newestFirst(() => true));
    expect(viewerPage.ids).toEqual(ownerPage.ids);
    const newest = fixtures.at(-1)!;
    expect(ownerPage.connection.edges[0].externalPlayerId).toBe(`player-${otherPlayer.slice(0, 8)}`);
    expect(ownerPage.connection.edges[0].node).toEqual({
      id: newest.id,
      eventId: newest.eventId,
      gameId: otherGameId,
      organizationId: w.organizationId,
      playerId: otherPlayer,
      eventType: newest.eventType,
      occurredAt: newest.createdAt,
      status: newest.status,
      reason: newest.reason,
      rewardCredits: newest.reward,
      createdAt: newest.createdAt,
    });
    // The same records as REST's events page over the same scope, in the same order.
    const rest = await restRecords(system, owner.token, { kind: 'events', gameId: w.gameId, limit: 100 });
    expect((await ids(owner.token, { gameId: w.gameId, first: 100 })).ids).toEqual(
      rest.body.data.records.map((r: any) => r.id),
    );
  });

  test('a non-member gets what the records endpoint answers: not_found for a named object, else nothing', async () => {
    const scopes: Array<Record<string, string>> = [
      { organizationId: w.organizationId },
      { projectId: w.projectId },
      { gameId: w.gameId },
    ];
    for (const scope of scopes) {
      const rest = restOutcome(await restRecords(system, outsider.token, { kind: 'events', ...scope }));
      expect(rest).toEqual({ error: { status: 404, code: 'not_found' } });
      expect(graphqlOutcome(await search(outsider.token, scope), 'decisions')).toEqual(rest);
    }
    // A player is an object too; an unknown one is the same answer.
    expectError(await search(outsider.token, { playerId: players[0] }), 404, 'not_found');
    expectError(await search(owner.token, { playerId: randomUUID() }), 404, 'not_found');
    // No object named: the caller's own (empty) decisions, as REST's unfiltered page.
    const rest = await restRecords(system, outsider.token, { kind: 'events' });
    expect(rest.body.data.records).toEqual([]);
    const page = await ids(outsider.token, {});
    expect(page.ids).toEqual([]);
    expect(page.pageInfo).toEqual({ endCursor: null, hasNextPage: false, startCursor: null, hasPreviousPage: false });
    // An event id is a value, not an object: another organization's event id finds nothing.
    expect((await ids(outsider.token, { eventId: fixtures[0]!.eventId })).ids).toEqual([]);
  });

  test('a member removed stops seeing the decisions on the next page', async () => {
    const later = await developer(system);
    const memberId = await addMember(system, owner.token, w.organizationId, later, 'viewer');
    const first = await ids(later.token, { gameId: w.gameId, first: 2 });
    expect(first.ids).toHaveLength(2);
    await ok(system, owner.token, { type: 'removeMember', memberId });
    expectError(
      await search(later.token, { gameId: w.gameId, first: 2, after: first.pageInfo.endCursor }),
      404,
      'not_found',
    );
  });
});

describe('bounds and malformed arguments: 400 INVALID_RECORD_QUERY, as REST', () => {
  test('first and last outside 1..100, like REST limit', async () => {
    for (const limit of [0, 101]) {
      expect(restOutcome(await restRecords(system, owner.token, { kind: 'events', limit }))).toEqual({
        error: { status: 400, code: 'INVALID_RECORD_QUERY' },
      });
      expectError(await search(owner.token, { first: limit }), 400, 'INVALID_RECORD_QUERY');
      expectError(await search(owner.token, { last: limit }), 400, 'INVALID_RECORD_QUERY');
    }
    expect((await ids(owner.token, { first: 100 })).ids).toHaveLength(12);
    expect((await ids(owner.token, { last: 1 })).ids).toEqual([fixtures[0]!.id]);
  });

  test('directions mixed, malformed filters and an empty window', async () => {
    const cursor = (await ids(owner.token, { first: 1 })).pageInfo.endCursor;
    for (const variables of [
      { first: 2, last: 2 },
      { first: 2, before: cursor },
      { last: 2, after: cursor },
      { after: cursor, before: cursor },
      { eventType: 'Level Up' },
      { eventType: '' },
      { from: minute(5), to: minute(5) },
      { from: minute(6), to: minute(5) },
    ]) {
      expectError(await search(owner.token, variables), 400, 'INVALID_RECORD_QUERY');
    }
    // Values GraphQL refuses while coercing the variables are the same code (REST: a malformed parameter).
    for (const variables of [
      { playerId: 'not-a-uuid' },
      { status: 'pending' },
      { reason: 'budget' },
      { from: 'yesterday' },
      { first: 'ten' },
    ]) {
      expectError(await search(owner.token, variables), 400, 'INVALID_RECORD_QUERY');
    }
  });

  test('null arguments are not given; at most 5 record pages (decisions fields included) per request', async () => {
    expect((await ids(owner.token, { first: null, after: null, playerId: null })).ids).toHaveLength(12);
    const six = Array.from({ length: 6 }, (_, i) => `p${i}: decisions(first: 1) { edges { cursor } }`).join(' ');
    const result = await gql(system, owner.token, `{ ${six} }`);
    expect(result.body.errors?.map((e) => e.extensions.code)).toEqual(['INVALID_REQUEST']);
  });
});

describe('each filter', () => {
  test.each<[string, () => Record<string, unknown>, (f: Fixture) => boolean]>([
    ['organizationId', () => ({ organizationId: w.organizationId }), () => true],
    ['projectId', () => ({ projectId: w.projectId }), () => true],
    ['gameId', () => ({ gameId: otherGameId }), (f) => f.gameId === otherGameId],
    ['playerId', () => ({ playerId: players[1] }), (f) => f.playerId === players[1]],
    ['eventId', () => ({ eventId: fixtures[4]!.eventId }), (f) => f.eventId === fixtures[4]!.eventId],
    ['status accepted', () => ({ status: 'accepted' }), (f) => f.status === 'accepted'],
    ['status rejected', () => ({ status: 'rejected' }), (f) => f.status === 'rejected'],
    ['reason', () => ({ reason: 'daily_player_cap' }), (f) => f.reason === 'daily_player_cap'],
    ['eventType', () => ({ eventType: 'match.won' }), (f) => f.eventType === 'match.won'],
    ['from', () => ({ from: minute(9) }), (f) => f.createdAt >= minute(9)],
    ['to (exclusive)', () => ({ to: minute(3) }), (f) => f.createdAt < minute(3)],
    [
      'from and to',
      () => ({ from: minute(2), to: minute(5) }),
      (f) => f.createdAt >= minute(2) && f.createdAt < minute(5),
    ],
    [
      'several at once',
      () => ({ gameId: w.gameId, playerId: players[0], status: 'rejected', eventType: 'level.up' }),
      (f) => f.playerId === players[0] && f.status === 'rejected' && f.eventType === 'level.up',
    ],
    ['a reason with status accepted', () => ({ status: 'accepted', reason: 'rate_limited' }), () => false],
  ])('%s', async (_name, variables, match) => {
    const expected = newestFirst(match);
    const page = await ids(viewer.token, variables());
    expect(page.ids).toEqual(expected);
    expect(page.pageInfo.hasNextPage).toBe(false);
    expect(page.pageInfo.hasPreviousPage).toBe(false);
  });
});

describe('cursors both ways', () => {
  test('forward pages, then backward from each page, with exact flags', async () => {
    const all = newestFirst((f) => f.gameId === w.gameId);
    const filters = { gameId: w.gameId };
    // Forward: 4, 4, 2.
    const forward = [];
    let after: string | null = null;
    do {
      const page = await ids(owner.token, { ...filters, first: 4, after });
      forward.push(page);
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    expect(forward.map((p) => p.ids)).toEqual([all.slice(0, 4), all.slice(4, 8), all.slice(8)]);
    expect(forward.map((p) => [p.pageInfo.hasPreviousPage, p.pageInfo.hasNextPage])).toEqual([
      [false, true],
      [true, true],
      [true, false],
    ]);
    for (const page of forward) {
      expect(page.pageInfo.startCursor).toBe(page.connection.edges[0].cursor);
      expect(page.pageInfo.endCursor).toBe(page.connection.edges.at(-1).cursor);
    }
    // Backward from the last page's first decision: the 4 newer ones, newest first.
    const back = await ids(owner.token, { ...filters, last: 4, before: forward[2]!.pageInfo.startCursor });
    expect(back.ids).toEqual(all.slice(4, 8));
    expect(back.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const backAgain = await ids(owner.token, { ...filters, last: 4, before: back.pageInfo.startCursor });
    expect(backAgain.ids).toEqual(all.slice(0, 4));
    expect(backAgain.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    // A short backward page at the top: only what is newer.
    const top = await ids(owner.token, { ...filters, last: 4, before: forward[0]!.connection.edges[2].cursor });
    expect(top.ids).toEqual(all.slice(0, 2));
    expect(top.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    // `last` alone: the oldest decisions, newest first.
    const oldest = await ids(owner.token, { ...filters, last: 3 });
    expect(oldest.ids).toEqual(all.slice(-3));
    expect(oldest.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    // An edge cursor works in both directions: after it, before it.
    const middle = forward[1]!.connection.edges[1].cursor;
    expect((await ids(owner.token, { ...filters, first: 2, after: middle })).ids).toEqual(all.slice(6, 8));
    expect((await ids(owner.token, { ...filters, last: 2, before: middle })).ids).toEqual(all.slice(3, 5));
  });

  test('paging with a filter keeps to it; the page size may change between pages', async () => {
    const filters = { status: 'rejected', gameId: w.gameId };
    const all = newestFirst((f) => f.status === 'rejected' && f.gameId === w.gameId);
    const first = await ids(owner.token, { ...filters, first: 2 });
    const second = await ids(owner.token, { ...filters, first: 3, after: first.pageInfo.endCursor });
    expect([...first.ids, ...second.ids]).toEqual(all.slice(0, 5));
  });

  test('a bad cursor: altered, of other filters, of records, or not a cursor: 400 INVALID_CURSOR', async () => {
    const page = await ids(owner.token, { gameId: w.gameId, first: 2 });
    const cursor: string = page.pageInfo.endCursor;
    const altered = `${cursor.slice(0, 10)}${cursor[10] === 'A' ? 'B' : 'A'}${cursor.slice(11)}`;
    const records = await gql(system, owner.token, RECORDS_QUERY, { kind: 'events', gameId: w.gameId, first: 2 });
    const recordsCursor: string = records.body.data.records.pageInfo.endCursor;
    for (const variables of [
      { gameId: w.gameId, after: altered },
      { gameId: w.gameId, before: altered },
      { gameId: w.gameId, status: 'accepted', after: cursor },
      { gameId: otherGameId, before: cursor },
      { after: cursor },
      { gameId: w.gameId, after: recordsCursor },
      { gameId: w.gameId, after: 'not a cursor' },
      { gameId: w.gameId, before: '' },
    ]) {
      expectError(await search(owner.token, variables), 400, 'INVALID_CURSOR');
    }
    // And a decision cursor is no records cursor.
    const back = await gql(system, owner.token, RECORDS_QUERY, { kind: 'events', gameId: w.gameId, after: cursor });
    expect(graphqlOutcome(back, 'records')).toEqual({ error: { status: 400, code: 'INVALID_CURSOR' } });
  });
});

describe('the ledger reads each search over an index', () => {
  /** The plan of a search's statement, sequential scans priced out (a few rows would otherwise be scanned). */
  async function plan(filters: Record<string, unknown>): Promise<string> {
    const statement = decisionsStatement({ identityUserId: owner.sub, older: true, take: 51, ...filters });
    let n = 0;
    const text = statement.sql.replace(/\?/g, () => `$${++n}`);
    const client = new pg.Client({ connectionString: system.databaseUrl! });
    await client.connect();
    try {
      await client.query('set enable_seqscan = off');
      const rows = await client.query(`explain ${text}`, statement.params);
      return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await client.end();
    }
  }

  test.each<[string, () => Record<string, unknown>, string]>([
    ['a player', () => ({ playerId: players[0] }), 'events_by_player'],
    [
      'a player and a status, going newer',
      () => ({ playerId: players[0], status: 'rejected', older: false }),
      'events_by_player',
    ],
    ['an event id', () => ({ eventId: fixtures[0]!.eventId }), 'events_one_decision'],
    [
      'a game, a reason and a window',
      () => ({ gameId: w.gameId, reason: 'daily_player_cap', from: new Date(BASE) }),
      'events_by_game',
    ],
  ])('%s', async (_name, filters, index) => {
    const text = await plan(filters());
    expect(text).toContain(index);
    expect(text).not.toMatch(/Seq Scan on events/);
  });
});
