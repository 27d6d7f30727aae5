// The console's reads once over REST and once over GraphQL against the same running system: the access result, the
// snapshot (flat and nested), and record pages with their cursors, filters and errors, compared field by field.
import { randomUUID } from 'node:crypto';
import {
  addMember,
  CONSOLE,
  type Developer,
  developer,
  expectData,
  insertEvents,
  insertPlayer,
  insertPlayers,
  ok,
  snapshot,
  type World,
  world,
} from '../../support/console.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  type GraphQLResult,
  gql,
  graphqlOutcome,
  RECORDS_QUERY,
  restOutcome,
  restRecords,
  SNAPSHOT_FIELDS,
} from './helpers.ts';

let system: TestSystem;
let dev: Developer;
let other: Developer;
let mine: World;
let second: World;
let theirs: World;

beforeAll(async () => {
  system = await startTestSystem();
  dev = await developer(system, { canCreateUnlimitedOrganization: true });
  other = await developer(system);
  mine = await world(system, dev.token);
  second = await world(system, dev.token, { fund: 0, projectBudget: 0, gameBudget: 0 });
  theirs = await world(system, other.token);
  // The developer also sees the other developer's organization, as a viewer.
  await addMember(system, other.token, theirs.organizationId, dev, 'viewer');
  for (const [token, w] of [
    [dev.token, mine],
    [other.token, theirs],
  ] as const) {
    await ok(system, token, { type: 'createRule', gameId: w.gameId, eventType: 'level.up', rewardCredits: 5 });
    await ok(system, token, { type: 'issueKey', gameId: w.gameId, kind: 'public', name: 'client' });
    await ok(system, token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' });
  }
  const secondGame = await ok(system, dev.token, {
    type: 'createGame',
    projectId: mine.projectId,
    name: 'Second game',
    platform: 'ios',
    maxPayoutCredits: 50,
    dailyPlayerCapCredits: 5,
  });
  await ok(system, dev.token, { type: 'createRule', gameId: secondGame.id, eventType: 'win', rewardCredits: 7 });
  // Records: linked and unlinked players, accepted and rejected events, in three games of two organizations.
  const players = await insertPlayers(system, mine.gameId, 7);
  await insertPlayers(system, mine.gameId, 3, { linked: false });
  await insertPlayers(system, secondGame.id, 4);
  await insertEvents(system, mine.gameId, players[0]!, 9);
  const theirPlayer = await insertPlayer(system, theirs.gameId);
  await insertEvents(system, theirs.gameId, theirPlayer, 4);
});

afterAll(async () => {
  await system?.stop();
});

function field(result: GraphQLResult, name: string): any {
  const outcome = graphqlOutcome(result, name);
  if (!('ok' in outcome)) throw new Error(`GraphQL ${name} failed: ${JSON.stringify(result.body)}`);
  return outcome.ok;
}

describe('access', () => {
  it('is the same result', async () => {
    const rest = expectData(
      await api(system.url, 'GET', '/api/developer/v1/access', { token: dev.token }),
      'DeveloperAccess',
    );
    const graphql = field(await gql(system, dev.token, '{ access { authorized email mode } }'), 'access');
    expect(graphql).toEqual(rest);
    expect(graphql).toEqual({ authorized: true, email: dev.email, mode: 'sandbox' });
  });
});

describe('snapshot', () => {
  it('is the same object, field for field, and valid against the REST schema', async () => {
    const rest = await snapshot(system, dev.token);
    const graphql = field(await gql(system, dev.token, `{ snapshot { ${SNAPSHOT_FIELDS} } }`), 'snapshot');
    expect(graphql).toEqual(rest);
    expectData({ status: 200, headers: new Headers(), body: { data: graphql } }, 'DeveloperSnapshot');
    // Non-trivial: two organizations of the developer and one where it is a viewer, records of each.
    expect(rest.organizations.map((o: any) => o.role)).toEqual(['owner', 'owner', 'viewer']);
    expect(rest.players.length).toBe(12);
    expect(rest.events.length).toBe(13);
    // Two keys issued per developer's game, and one fixture key per insertEvents call.
    expect(rest.keys.length).toBe(6);
  });

  it('is the same for a developer without organizations', async () => {
    const fresh = await developer(system);
    const graphql = field(await gql(system, fresh.token, `{ snapshot { ${SNAPSHOT_FIELDS} } }`), 'snapshot');
    expect(graphql).toEqual(await snapshot(system, fresh.token));
  });

  it("nests each organization's projects, games, keys, rules and members as in the flat lists", async () => {
    const rest = await snapshot(system, dev.token);
    const nested = field(
      await gql(
        system,
        dev.token,
        `{ snapshot { organizations {
            id
            projects { id organizationId name maxPayoutCredits budgetCredits spentCredits createdAt }
            games { id projectId organizationId name platform status maxPayoutCredits budgetCredits spentCredits dailyPlayerCapCredits createdAt }
            keys { id gameId organizationId kind name prefix publicKey createdAt revokedAt }
            rules { id gameId organizationId eventType rewardCredits active createdAt }
            members { id organizationId identityUserId role createdAt }
        } } }`,
      ),
      'snapshot',
    );
    expect(nested.organizations.map((o: any) => o.id)).toEqual(rest.organizations.map((o: any) => o.id));
    for (const organization of nested.organizations) {
      const of = (list: any[]) => list.filter((item) => item.organizationId === organization.id);
      expect(organization).toEqual({
        id: organization.id,
        projects: of(rest.projects),
        games: of(rest.games),
        keys: of(rest.keys),
        rules: of(rest.rules),
        members: of(rest.members),
      });
    }
  });

  it('links projects, games, keys, rules and members to their parents', async () => {
    const rest = await snapshot(system, dev.token);
    const linked = field(
      await gql(
        system,
        dev.token,
        `{ snapshot {
            projects { id organization { id } games { id projectId } }
            games { id project { id } organization { id } keys { id gameId } rules { id gameId } }
            keys { id game { id } }
            rules { id game { id } }
            members { id organization { id } }
        } }`,
      ),
      'snapshot',
    );
    for (const project of linked.projects) {
      const flat = rest.projects.find((p: any) => p.id === project.id);
      expect(project.organization.id).toBe(flat.organizationId);
      expect(project.games).toEqual(
        rest.games
          .filter((g: any) => g.projectId === project.id)
          .map((g: any) => ({ id: g.id, projectId: g.projectId })),
      );
    }
    for (const game of linked.games) {
      const flat = rest.games.find((g: any) => g.id === game.id);
      expect([game.project.id, game.organization.id]).toEqual([flat.projectId, flat.organizationId]);
      expect(game.keys.map((k: any) => k.id)).toEqual(
        rest.keys.filter((k: any) => k.gameId === game.id).map((k: any) => k.id),
      );
      expect(game.rules.map((r: any) => r.id)).toEqual(
        rest.rules.filter((r: any) => r.gameId === game.id).map((r: any) => r.id),
      );
    }
    for (const key of linked.keys) expect(key.game.id).toBe(rest.keys.find((k: any) => k.id === key.id).gameId);
    for (const rule of linked.rules) expect(rule.game.id).toBe(rest.rules.find((r: any) => r.id === rule.id).gameId);
    for (const member of linked.members) {
      expect(member.organization.id).toBe(rest.members.find((m: any) => m.id === member.id).organizationId);
    }
  });
});

describe('records', () => {
  type Query = { kind: 'players' | 'events'; organizationId?: string; projectId?: string; gameId?: string };

  async function restPage(query: Query, limit?: number, cursor?: string) {
    const response = await restRecords(system, dev.token, {
      ...query,
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    return expectData(response, 'DeveloperRecordPage');
  }

  async function graphqlPage(query: Query, first?: number, after?: string) {
    return field(await gql(system, dev.token, RECORDS_QUERY, { ...query, first, after }), 'records');
  }

  /** A connection as REST's page: nodes as records, endCursor as nextCursor while there is a next page. */
  const asRestPage = (connection: any) => ({
    kind: connection.kind,
    records: connection.edges.map((edge: any) => edge.node),
    nextCursor: connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null,
  });

  const queries = (): Query[] => [
    { kind: 'players' },
    { kind: 'events' },
    { kind: 'players', organizationId: mine.organizationId },
    { kind: 'events', organizationId: theirs.organizationId },
    { kind: 'players', projectId: mine.projectId },
    { kind: 'events', projectId: mine.projectId },
    { kind: 'players', gameId: mine.gameId },
    { kind: 'events', gameId: theirs.gameId },
    { kind: 'players', organizationId: second.organizationId },
    { kind: 'players', organizationId: mine.organizationId, gameId: theirs.gameId },
  ];

  it('default pages are the same', async () => {
    for (const query of queries()) {
      const rest = await restPage(query);
      const graphql = await graphqlPage(query);
      expect({ query, page: asRestPage(graphql) }).toEqual({ query, page: rest });
      expect(graphql.pageInfo.hasPreviousPage).toBe(false);
      expect(graphql.pageInfo.startCursor).toBe(graphql.edges[0]?.cursor ?? null);
      expect(graphql.pageInfo.endCursor).toBe(graphql.edges.at(-1)?.cursor ?? null);
    }
  });

  it('page by page, with the same cursors, to the end', async () => {
    for (const query of queries()) {
      let restCursor: string | undefined;
      let graphqlCursor: string | undefined;
      let pages = 0;
      do {
        const rest = await restPage(query, 3, restCursor);
        const graphql = await graphqlPage(query, 3, graphqlCursor);
        expect({ query, pages, page: asRestPage(graphql) }).toEqual({ query, pages, page: rest });
        restCursor = rest.nextCursor ?? undefined;
        graphqlCursor = graphql.pageInfo.hasNextPage ? graphql.pageInfo.endCursor : undefined;
        pages += 1;
      } while (restCursor !== undefined);
      expect(graphqlCursor).toBeUndefined();
    }
  });

  it('every edge cursor continues right after its record, over either view', async () => {
    const all = await restPage({ kind: 'players' }, 100);
    const ids = all.records.map((r: any) => r.id);
    const connection = await graphqlPage({ kind: 'players' }, 6);
    for (const [index, edge] of connection.edges.entries()) {
      const next = await graphqlPage({ kind: 'players' }, 2, edge.cursor);
      expect(next.edges.map((e: any) => e.node.id)).toEqual(ids.slice(index + 1, index + 3));
      const restNext = await restPage({ kind: 'players' }, 2, edge.cursor);
      expect(restNext.records.map((r: any) => r.id)).toEqual(ids.slice(index + 1, index + 3));
    }
    // REST's nextCursor works as GraphQL's `after`.
    const restFirst = await restPage({ kind: 'players' }, 4);
    const continued = await graphqlPage({ kind: 'players' }, 4, restFirst.nextCursor);
    expect(continued.edges.map((e: any) => e.node.id)).toEqual(ids.slice(4, 8));
  });

  it('`first: null` and `after: null` are not given', async () => {
    const graphql = field(
      await gql(system, dev.token, '{ records(kind: events, first: null, after: null) { edges { node { id } } } }'),
      'records',
    );
    const rest = await restPage({ kind: 'events' });
    expect(graphql.edges.map((e: any) => e.node.id)).toEqual(rest.records.map((r: any) => r.id));
  });

  it('refuses the same queries with the same codes', async () => {
    const page1 = await restPage({ kind: 'players', organizationId: mine.organizationId }, 2);
    const cursor = page1.nextCursor as string;
    const altered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    const missing = randomUUID();
    // [REST query parameters, GraphQL variables, status, code]
    const cases: Array<[Record<string, string | number>, Record<string, unknown>, number, string]> = [
      [{ kind: 'players', limit: 0 }, { kind: 'players', first: 0 }, 400, 'INVALID_RECORD_QUERY'],
      [{ kind: 'players', limit: 101 }, { kind: 'players', first: 101 }, 400, 'INVALID_RECORD_QUERY'],
      [{ kind: 'players', cursor: '' }, { kind: 'players', after: '' }, 400, 'INVALID_RECORD_QUERY'],
      [{ kind: 'players', gameId: 'nope' }, { kind: 'players', gameId: 'nope' }, 400, 'INVALID_RECORD_QUERY'],
      [{ kind: 'records' }, { kind: 'records' }, 400, 'INVALID_RECORD_QUERY'],
      [
        { kind: 'players', organizationId: mine.organizationId, cursor: altered },
        { kind: 'players', organizationId: mine.organizationId, after: altered },
        400,
        'INVALID_CURSOR',
      ],
      [
        { kind: 'events', organizationId: mine.organizationId, cursor },
        { kind: 'events', organizationId: mine.organizationId, after: cursor },
        400,
        'INVALID_CURSOR',
      ],
      [{ kind: 'players', cursor }, { kind: 'players', after: cursor }, 400, 'INVALID_CURSOR'],
      [{ kind: 'players', gameId: missing }, { kind: 'players', gameId: missing }, 404, 'not_found'],
      [{ kind: 'events', projectId: missing }, { kind: 'events', projectId: missing }, 404, 'not_found'],
    ];
    for (const [restQuery, variables, status, code] of cases) {
      const rest = restOutcome(await restRecords(system, dev.token, restQuery));
      const graphql = graphqlOutcome(await gql(system, dev.token, RECORDS_QUERY, variables), 'records');
      expect({ variables, graphql }).toEqual({ variables, graphql: rest });
      expect({ variables, rest }).toEqual({ variables, rest: { error: { status, code } } });
    }
  });

  it('refuses values written into the document like REST refuses parameters', async () => {
    for (const document of [
      '{ records(kind: players, first: 0) { kind } }',
      '{ records(kind: players, first: 3.5) { kind } }',
      '{ records(kind: players, gameId: "nope") { kind } }',
      '{ records(kind: people) { kind } }',
      '{ records { kind } }',
      '{ records(kind: players, limit: 5) { kind } }',
      '{ records(kind: players, first: 1, first: 2) { kind } }',
    ]) {
      expect({ document, outcome: graphqlOutcome(await gql(system, dev.token, document), 'records') }).toEqual({
        document,
        outcome: { error: { status: 400, code: 'INVALID_RECORD_QUERY' } },
      });
    }
  });

  it("a filter naming another developer's object: 404 not_found both ways", async () => {
    const stranger = await developer(system);
    const rest = restOutcome(await restRecords(system, stranger.token, { kind: 'events', gameId: mine.gameId }));
    const graphql = graphqlOutcome(
      await gql(system, stranger.token, RECORDS_QUERY, { kind: 'events', gameId: mine.gameId }),
      'records',
    );
    expect(graphql).toEqual(rest);
    expect(rest).toEqual({ error: { status: 404, code: 'not_found' } });
  });
});

describe('reads in one request', () => {
  it('answers access, snapshot and two record pages together, each as REST does', async () => {
    const result = await gql(
      system,
      dev.token,
      `{
        access { email }
        snapshot { organizations { id } }
        players: records(kind: players, first: 2) { edges { node { id } } }
        events: records(kind: events, first: 2) { edges { node { id } } }
      }`,
    );
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    const rest = await snapshot(system, dev.token);
    expect(result.body.data.access.email).toBe(dev.email);
    expect(result.body.data.snapshot.organizations).toEqual(rest.organizations.map((o: any) => ({ id: o.id })));
    expect(result.body.data.players.edges.map((e: any) => e.node.id)).toEqual(
      rest.players.slice(0, 2).map((p: any) => p.id),
    );
    expect(result.body.data.events.edges.map((e: any) => e.node.id)).toEqual(
      rest.events.slice(0, 2).map((e: any) => e.id),
    );
  });

  it('keeps the other fields when one fails', async () => {
    const result = await gql(system, dev.token, '{ access { mode } records(kind: players, first: 0) { kind } }');
    expect(result.status).toBe(200);
    expect(result.body.data).toEqual({ access: { mode: 'sandbox' }, records: null });
    expect(result.body.errors).toEqual([
      expect.objectContaining({ path: ['records'], extensions: { code: 'INVALID_RECORD_QUERY', status: 400 } }),
    ]);
  });

  it('GET /console is unaffected by the GraphQL route', async () => {
    expect((await api(system.url, 'GET', CONSOLE, { token: dev.token })).status).toBe(200);
  });
});
