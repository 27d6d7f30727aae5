// Smoke test of the GraphQL console on the embedded default (PGlite and the in-process transport, as `npm start`).

import { developer, expectData, snapshot, world } from '../../support/console.ts';
import { EMBEDDED_START_TIMEOUT_MS, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  gql,
  graphqlAction,
  graphqlOutcome,
  RECORDS_QUERY,
  requestsBetween,
  restAction,
  restOutcome,
  restRecords,
  SNAPSHOT_FIELDS,
  transportRequests,
} from './helpers.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem({ mode: 'embedded' });
}, EMBEDDED_START_TIMEOUT_MS);

afterAll(async () => {
  await system?.stop();
});

describe('GraphQL console on the embedded default', () => {
  it('answers introspection there (Apollo convention: on for the development default)', async () => {
    const dev = await developer(system);
    const result = await gql(system, dev.token, '{ __schema { queryType { name } } }');
    expect(result.status).toBe(200);
    expect(result.body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it('runs actions, the snapshot and the records as REST does, one GetSnapshot per request', async () => {
    const dev = await developer(system);
    const w = await world(system, dev.token, { fund: 1000, projectBudget: 800, gameBudget: 300 });
    const issued = graphqlOutcome(
      await graphqlAction(system, dev.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' }),
      'result',
    );
    expect(issued).toEqual({
      ok: expect.objectContaining({ kind: 'secret', issuedKey: expect.stringMatching(/^cr_sk_sandbox_/) }),
    });
    const refused = { type: 'allocateProject', projectId: w.projectId, amountCredits: 201 };
    const graphqlRefusal = graphqlOutcome(await graphqlAction(system, dev.token, refused), 'result');
    expect(graphqlRefusal).toEqual(restOutcome(await restAction(system, dev.token, refused)));
    expect(graphqlRefusal).toEqual({ error: { status: 400, code: 'insufficient_funds' } });

    const before = await transportRequests(system);
    const result = await gql(
      system,
      dev.token,
      `{ snapshot { ${SNAPSHOT_FIELDS} organizations { games { keys { id } } } } }`,
    );
    const sent = requestsBetween(before, await transportRequests(system));
    expect(sent['rewards.v1.ledger.GetSnapshot']).toBe(1);
    const { organizations, ...flat } = result.body.data.snapshot;
    const rest = await snapshot(system, dev.token);
    expect({ ...flat, organizations: organizations.map(({ games, ...o }: any) => o) }).toEqual(rest);
    expect(organizations[0].games[0].keys).toHaveLength(1);

    const page = graphqlOutcome(await gql(system, dev.token, RECORDS_QUERY, { kind: 'events' }), 'records');
    const restPage = expectData(await restRecords(system, dev.token, { kind: 'events' }), 'DeveloperRecordPage');
    expect(page).toEqual({
      ok: {
        kind: 'events',
        edges: [],
        pageInfo: { endCursor: null, hasNextPage: false, startCursor: null, hasPreviousPage: false },
      },
    });
    expect(restPage).toEqual({ kind: 'events', records: [], nextCursor: null });
  });
});
