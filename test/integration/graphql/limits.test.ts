// What one GraphQL request may ask: depth, aliases, cost, directives and tokens are bounded before anything runs;
// introspection is off unless GRAPHQL_INTROSPECTION=true; nested fields never make one NATS request per item (the
// requests are counted with the gateway's transport_requests_total metric).
import { buildClientSchema, getIntrospectionQuery, printSchema } from 'graphql';
import { createSchema } from '../../../gateway/src/graphql/server.ts';
import {
  addMember,
  type Developer,
  developer,
  insertEvents,
  insertPlayers,
  ok,
  snapshot,
  world,
} from '../../support/console.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { type GraphQLResult, gql, requestsBetween, transportRequests } from './helpers.ts';

let system: TestSystem;
let dev: Developer;

beforeAll(async () => {
  system = await startTestSystem();
  dev = await developer(system);
});

afterAll(async () => {
  await system?.stop();
});

/** A request refused before it ran: 400 INVALID_REQUEST, no data, a message naming the limit. */
function expectRefused(result: GraphQLResult, message: RegExp): void {
  expect(result.status).toBe(400);
  expect(result.body.data).toBeUndefined();
  expect(result.body.errors).toEqual([
    expect.objectContaining({
      message: expect.stringMatching(message),
      extensions: { code: 'INVALID_REQUEST', status: 400 },
    }),
  ]);
}

/** Sends the query and returns it with the NATS requests the gateway made for it, by subject. */
async function counted(query: string, variables?: Record<string, unknown>, token = dev.token) {
  const before = await transportRequests(system);
  const result = await gql(system, token, query, variables);
  const sent = requestsBetween(before, await transportRequests(system));
  // The platform switch is read at most once a second, whatever the request: not part of what is counted here.
  delete sent['rewards.v1.identity.GetPlatformState'];
  return { result, sent };
}

describe('depth', () => {
  const nest = (levels: number) => {
    // snapshot > organizations > projects > games > project > organization > projects > games > ... > id
    const path = [
      'snapshot',
      'organizations',
      'projects',
      'games',
      'project',
      'organization',
      'projects',
      'games',
      'project',
    ];
    const fields = path.slice(0, levels - 1);
    return `{ ${fields.map((f) => `${f} {`).join(' ')} id ${'}'.repeat(fields.length)} }`;
  };

  it('accepts 8 levels', async () => {
    const { result } = await counted(nest(8));
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
  });

  it('refuses 9 levels before any ledger request', async () => {
    const { result, sent } = await counted(nest(9));
    expectRefused(result, /depth limit of 8 exceeded, found 9/);
    expect(sent).toEqual({ 'rewards.v1.identity.AdmitDeveloper': 1 });
  });

  it('counts through fragments', async () => {
    const query = `
      fragment Deep on DeveloperGame { project { organization { projects { games { project { id } } } } } }
      { snapshot { organizations { projects { games { ...Deep } } } } }`;
    expectRefused((await counted(query)).result, /depth limit/);
  });
});

describe('aliases', () => {
  const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: access { mode }`).join(' ')} }`;

  it('accepts 15', async () => {
    const { result } = await counted(aliased(15));
    expect(result.status).toBe(200);
    expect(Object.keys(result.body.data)).toHaveLength(15);
  });

  it('refuses 16', async () => {
    expectRefused((await counted(aliased(16))).result, /Aliases limit of 15 exceeded, found 16/);
  });
});

describe('cost', () => {
  const page = (alias: string) =>
    `${alias}: records(kind: events, first: 100) { kind edges { cursor node { id gameId organizationId createdAt
      ... on DeveloperEvent { eventId playerId eventType occurredAt status reason rewardCredits } } }
      pageInfo { endCursor hasNextPage startCursor hasPreviousPage } }`;

  it('accepts two full pages of 100 records', async () => {
    const { result, sent } = await counted(`{ ${page('a')} ${page('b')} }`);
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    expect(sent['rewards.v1.ledger.ListRecords']).toBe(2);
  });

  it('refuses three, before any ledger request', async () => {
    const { result, sent } = await counted(`{ ${page('a')} ${page('b')} ${page('c')} }`);
    expectRefused(result, /Cost limit of 20000 exceeded/);
    expect(sent).toEqual({ 'rewards.v1.identity.AdmitDeveloper': 1 });
  });

  it('bounds record pages given `first` as a variable: at most 5 per request', async () => {
    const query = `query Pages($n: Int) { ${Array.from({ length: 6 }, (_, i) => `p${i}: records(kind: players, first: $n) { kind }`).join(' ')} }`;
    const { result, sent } = await counted(query, { n: 100 });
    expect(result.status).toBe(200);
    expect(sent['rewards.v1.ledger.ListRecords']).toBe(5);
    expect(Object.values(result.body.data).filter((v) => v === null)).toHaveLength(1);
    expect(result.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/at most 5 record pages/),
        extensions: { code: 'INVALID_REQUEST', status: 400 },
      }),
    ]);
  });
});

describe('directives and tokens', () => {
  it('refuses more than 10 directives', async () => {
    const query = `{ access { ${'mode @include(if: true) '.repeat(11)} } }`;
    expectRefused((await counted(query)).result, /Directives limit of 10 exceeded/);
  });

  it('refuses a document of more than 2,000 tokens, even within 16,384 bytes', async () => {
    const query = `{ access { ${'mode '.repeat(2_100)} } }`;
    expect(Buffer.byteLength(JSON.stringify({ query }))).toBeLessThan(16_384);
    expectRefused((await counted(query)).result, /contains more th[ae][nt] 2000 tokens/);
  });
});

describe('introspection', () => {
  it('is off by default on a deployment, and the refusal names GRAPHQL_INTROSPECTION', async () => {
    for (const query of [
      '{ __schema { queryType { name } } }',
      '{ __type(name: "DeveloperSnapshot") { fields { name } } }',
      getIntrospectionQuery(),
    ]) {
      const { result, sent } = await counted(query);
      expectRefused(result, /introspection is not allowed/);
      expect(JSON.stringify(result.body)).toMatch(/GRAPHQL_INTROSPECTION=true/);
      expect(sent).toEqual({ 'rewards.v1.identity.AdmitDeveloper': 1 });
    }
    // __typename is not introspection of the schema.
    expect((await gql(system, dev.token, '{ __typename access { __typename } }')).body.data).toEqual({
      __typename: 'Query',
      access: { __typename: 'DeveloperAccess' },
    });
  });

  it('does not suggest field names either', async () => {
    const result = await gql(system, dev.token, '{ snapshot { organizatons { id } } }');
    expect(result.status).toBe(400);
    expect(JSON.stringify(result.body)).not.toMatch(/Did you mean|organizations/);
  });

  it('is on with GRAPHQL_INTROSPECTION=true, and shows exactly the schema of schema.graphql', async () => {
    const open = await startTestSystem({ env: { GRAPHQL_INTROSPECTION: 'true' } });
    try {
      const { token } = await developer(open);
      const result = await gql(open, token, getIntrospectionQuery());
      expect(result.status).toBe(200);
      const served = buildClientSchema(result.body.data);
      expect(printSchema(served)).toBe(printSchema(createSchema()));
      // Limits still apply.
      const deep = await gql(
        open,
        token,
        '{ snapshot { organizations { projects { games { project { organization { projects { games { project { id } } } } } } } } } }',
      );
      expect(deep.status).toBe(400);
    } finally {
      await open.stop();
    }
  }, 120_000);
});

describe('batched loading', () => {
  beforeAll(async () => {
    // 3 organizations x 2 projects x 2 games, each game with 2 keys and 2 rules; 2 members each; records.
    for (let o = 0; o < 3; o += 1) {
      const w = await world(system, dev.token);
      const member = await developer(system);
      await addMember(system, dev.token, w.organizationId, member, 'viewer');
      const project2 = await ok(system, dev.token, {
        type: 'createProject',
        organizationId: w.organizationId,
        name: 'P2',
        maxPayoutCredits: 10,
      });
      const games = [w.gameId];
      for (const projectId of [w.projectId, project2.id, project2.id]) {
        const game = await ok(system, dev.token, {
          type: 'createGame',
          projectId,
          name: 'G',
          platform: 'web',
          maxPayoutCredits: 1,
          dailyPlayerCapCredits: 1,
        });
        games.push(game.id);
      }
      for (const gameId of games) {
        for (const kind of ['public', 'secret'])
          await ok(system, dev.token, { type: 'issueKey', gameId, kind, name: kind });
        for (const eventType of ['win', 'lose'])
          await ok(system, dev.token, { type: 'createRule', gameId, eventType, rewardCredits: 1 });
      }
      const players = await insertPlayers(system, w.gameId, 3);
      await insertEvents(system, w.gameId, players[0]!, 3);
    }
  });

  const NESTED = `{
    snapshot {
      organizations {
        id name
        projects { id games { id keys { id game { id } } rules { id game { id } } project { id } } organization { id } }
        games { id organization { id } }
        keys { id }
        rules { id }
        members { id organization { id } }
      }
      games { keys { id } rules { id } project { organization { id } } }
    }
    again: snapshot { projects { games { id } } members { organization { members { id } } } }
  }`;

  it('a nested snapshot query of any size is one GetSnapshot (and one admission)', async () => {
    const { result, sent } = await counted(NESTED);
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    // The answer really is nested: 3 organizations x 2 projects, 4 games of 2 keys and 2 rules each.
    const organizations = result.body.data.snapshot.organizations;
    expect(organizations).toHaveLength(3);
    const games = organizations.flatMap((o: any) => o.projects.flatMap((p: any) => p.games));
    expect(games).toHaveLength(12);
    expect(games.every((g: any) => g.keys.length >= 2 && g.rules.length === 2)).toBe(true);
    expect(organizations.every((o: any) => o.members.length === 2)).toBe(true);
    expect(sent).toEqual({ 'rewards.v1.identity.AdmitDeveloper': 1, 'rewards.v1.ledger.GetSnapshot': 1 });
    // The same data as REST's snapshot.
    const rest = await snapshot(system, dev.token);
    expect(games.map((g: any) => g.id).sort()).toEqual(rest.games.map((g: any) => g.id).sort());
    for (const game of games) {
      expect(game.keys.map((k: any) => k.id)).toEqual(
        rest.keys.filter((k: any) => k.gameId === game.id).map((k: any) => k.id),
      );
      expect(game.rules.map((r: any) => r.id)).toEqual(
        rest.rules.filter((r: any) => r.gameId === game.id).map((r: any) => r.id),
      );
    }
  });

  it('records beside a snapshot: one ListRecords per page field, one GetSnapshot', async () => {
    const { result, sent } = await counted(`{
      snapshot { organizations { games { rules { id } } } }
      events: records(kind: events, first: 5) { edges { node { id } } }
      players: records(kind: players, first: 5) { edges { node { id } } }
    }`);
    expect(result.body.errors).toBeUndefined();
    expect(sent).toEqual({
      'rewards.v1.identity.AdmitDeveloper': 1,
      'rewards.v1.ledger.GetSnapshot': 1,
      'rewards.v1.ledger.ListRecords': 2,
    });
  });

  it('reads without the snapshot do not ask for it', async () => {
    const { sent } = await counted('{ access { email } records(kind: players, first: 1) { kind } }');
    expect(sent).toEqual({ 'rewards.v1.identity.AdmitDeveloper': 1, 'rewards.v1.ledger.ListRecords': 1 });
  });

  it('each mutation is one ConsoleAction, the invitation checked again before each after the first', async () => {
    const organizationId = (await snapshot(system, dev.token)).organizations[0].id;
    const { result, sent } = await counted(
      `mutation Fund($org: UUID!) {
        a: fundOrganization(input: { organizationId: $org, amountCredits: 1 }) { id }
        b: fundOrganization(input: { organizationId: $org, amountCredits: 2 }) { id }
        c: fundOrganization(input: { organizationId: $org, amountCredits: 3 }) { id }
      }`,
      { org: organizationId },
    );
    expect(result.body.errors).toBeUndefined();
    expect(sent).toEqual({ 'rewards.v1.identity.AdmitDeveloper': 3, 'rewards.v1.ledger.ConsoleAction': 3 });
  });
});
