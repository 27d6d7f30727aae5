// POST /graphql before GraphQL runs, in REST's order: platform switch, developer admission, content type, size,
// JSON. Each refusal answers the REST console's status and code, as a GraphQL response whose error carries them in
// `extensions` (and the same HTTP status).
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { CONSOLE, type Developer, developer, expectError } from '../../support/console.ts';
import { admin, api, developerToken, startTestSystem, type TestSystem } from '../../support/system.ts';
import { GRAPHQL, gql, graphqlOutcome, type Outcome, restOutcome } from './helpers.ts';

let system: TestSystem;
let dev: Developer;

beforeAll(async () => {
  system = await startTestSystem({ env: { ALLOWED_ORIGINS: 'https://console.example.com' } });
  dev = await developer(system);
});

afterAll(async () => {
  await system?.stop();
});

const LIMIT = 16_384;
const ACTION = { type: 'createOrganization', name: 'Edge' };
const MUTATION = 'mutation { result: createOrganization(input: { name: "Edge" }) { id } }';

/** The same request over REST (action and access) and GraphQL (mutation and access query), as outcomes. */
async function allWays(token: string | undefined, headers: Record<string, string> = {}): Promise<Outcome[]> {
  return [
    restOutcome(await api(system.url, 'POST', CONSOLE, { token, body: ACTION, headers })),
    restOutcome(await api(system.url, 'GET', '/api/developer/v1/access', { token, headers })),
    graphqlOutcome(await gql(system, token, MUTATION, undefined, headers), 'result'),
    graphqlOutcome(await gql(system, token, '{ access { email } }', undefined, headers), 'access'),
  ];
}

async function expectAllWays(
  token: string | undefined,
  headers: Record<string, string>,
  status: number,
  code: string,
): Promise<void> {
  const outcomes = await allWays(token, headers);
  expect(outcomes).toEqual(Array(4).fill({ error: { status, code } }));
}

/** A GraphQL request body padded with JSON whitespace to exactly `size` bytes. */
function paddedQuery(size: number): string {
  const text = JSON.stringify({ query: '{ access { mode } }' });
  return text.slice(0, -1) + ' '.repeat(size - Buffer.byteLength(text)) + '}';
}

/** A raw POST /graphql; `null`: no token. */
function post(body: string, headers: Record<string, string>, token: string | null = dev.token) {
  return api(system.url, 'POST', GRAPHQL, { token: token ?? undefined, rawBody: body, headers });
}

function expectGraphQLError(response: { status: number; body: any }, status: number, code: string): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { errors: [{ message: expect.any(String), extensions: { code, status } }] },
  });
}

describe('developer admission, as over REST', () => {
  it('no or an invalid token: 401 UNAUTHORIZED', async () => {
    await expectAllWays(undefined, {}, 401, 'UNAUTHORIZED');
    await expectAllWays('garbage', {}, 401, 'UNAUTHORIZED');
    // A game key never authorizes the console.
    await expectAllWays(`cr_sk_sandbox_${'A'.repeat(43)}`, {}, 401, 'UNAUTHORIZED');
  });

  it('an origin outside ALLOWED_ORIGINS: 403 INVALID_SESSION_ORIGIN; an allowed one passes', async () => {
    await expectAllWays(dev.token, { Origin: 'https://evil.example.com' }, 403, 'INVALID_SESSION_ORIGIN');
    const allowed = await allWays(dev.token, { Origin: 'https://console.example.com' });
    expect(allowed.every((outcome) => 'ok' in outcome)).toBe(true);
  });

  it('an unverified e-mail: 403 EMAIL_VERIFICATION_REQUIRED', async () => {
    const token = await developerToken(system, dev.email, { emailVerified: false });
    await expectAllWays(token, {}, 403, 'EMAIL_VERIFICATION_REQUIRED');
  });

  it('no invitation, or a revoked one: 403 DEVELOPER_INVITATION_REQUIRED', async () => {
    await expectAllWays(await developerToken(system, 'stranger@example.com'), {}, 403, 'DEVELOPER_INVITATION_REQUIRED');
    const revoked = await developer(system);
    const invitations = await admin(system, 'GET', '/invitations');
    const invitation = invitations.body.data.records.find((i: any) => i.email === revoked.email);
    expect((await admin(system, 'POST', `/invitations/${invitation.id}/revoke`)).status).toBe(200);
    await expectAllWays(revoked.token, {}, 403, 'DEVELOPER_INVITATION_REQUIRED');
  });

  it('comes before the body: no token and a body of another type is 401', async () => {
    expectGraphQLError(await post('not json', { 'Content-Type': 'text/plain' }, null), 401, 'UNAUTHORIZED');
  });
});

describe('platform switch', () => {
  it('503 PLATFORM_DISABLED first, with Retry-After, as over REST', async () => {
    expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
    try {
      await expectAllWays(dev.token, {}, 503, 'PLATFORM_DISABLED');
      const response = await post('x', { 'Content-Type': 'text/plain' }, null);
      expectGraphQLError(response, 503, 'PLATFORM_DISABLED');
      expect(response.headers.get('retry-after')).toBe('1');
    } finally {
      await admin(system, 'PUT', '/platform', { enabled: true });
    }
    expect('ok' in graphqlOutcome(await gql(system, dev.token, '{ access { mode } }'), 'access')).toBe(true);
  });
});

describe('the body, as over REST', () => {
  it('415 INVALID_CONTENT_TYPE for another or no content type, before the size', async () => {
    const types: Array<Record<string, string>> = [
      { 'Content-Type': 'text/plain' },
      { 'Content-Type': 'application/graphql' },
      {},
    ];
    for (const headers of types) {
      const body = paddedQuery(LIMIT + 10);
      expectGraphQLError(await post(body, headers), 415, 'INVALID_CONTENT_TYPE');
      expectError(
        await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: body, headers }),
        415,
        'INVALID_CONTENT_TYPE',
      );
    }
  });

  it('accepts application/json with parameters', async () => {
    const response = await post(paddedQuery(100), { 'Content-Type': 'application/json; charset=utf-8' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { access: { mode: 'sandbox' } } });
  });

  it('413 PAYLOAD_TOO_LARGE above 16,384 bytes, with or without Content-Length', async () => {
    const json = { 'Content-Type': 'application/json' };
    expect((await post(paddedQuery(LIMIT), json)).status).toBe(200);
    expectGraphQLError(await post(paddedQuery(LIMIT + 1), json), 413, 'PAYLOAD_TOO_LARGE');
    const bytes = Buffer.from(paddedQuery(LIMIT + 1));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 1000)
          controller.enqueue(bytes.subarray(offset, offset + 1000));
        controller.close();
      },
    });
    const response = await fetch(`${system.url}${GRAPHQL}`, {
      method: 'POST',
      headers: { ...json, Authorization: `Bearer ${dev.token}` },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expectGraphQLError({ status: response.status, body: await response.json() }, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('400 INVALID_REQUEST for a body that is not JSON or not UTF-8', async () => {
    const json = { 'Content-Type': 'application/json' };
    expectGraphQLError(await post('{ access }', json), 400, 'INVALID_REQUEST');
    expectGraphQLError(
      await api(system.url, 'POST', GRAPHQL, {
        token: dev.token,
        rawBody: Buffer.from([0x7b, 0xff, 0x7d]),
        headers: json,
      }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: '{ access }', headers: json }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('400 INVALID_REQUEST for a body that is not I-JSON (CONTRACT section 10)', async () => {
    const json = { 'Content-Type': 'application/json' };
    for (const body of [
      // The last member used to win: this ran the mutation.
      '{"query":"{ access { mode } }","query":"mutation { createOrganization(input: {name: \\"Dup\\"}) { id } }"}',
      '{"query":"{ access { mode } }","variables":{"a":1,"a":2}}',
      '{"query":"{ access { mode } }","variables":{"name":"\\ud800"}}',
      '{"query":"{ access { mode } }","variables":{"n":1e400}}',
    ]) {
      expectGraphQLError(await post(body, json), 400, 'INVALID_REQUEST');
    }
  });

  it('400 INVALID_REQUEST for JSON that is not one GraphQL request', async () => {
    const json = { 'Content-Type': 'application/json' };
    for (const body of [
      '[{"query":"{ access { mode } }"}]', // a batch
      'null',
      '"{ access { mode } }"',
      '{}',
      '{"query":""}',
      '{"query":42}',
      '{"query":"{ access { mode } }","variables":[1]}',
      '{"query":"query A { access { mode } } query B { access { email } }"}',
      '{"query":"query A { access { mode } }","operationName":"B"}',
    ]) {
      const response = await post(body, json);
      expect({ body, status: response.status, codes: response.body.errors.map((e: any) => e.extensions) }).toEqual({
        body,
        status: 400,
        codes: [{ code: 'INVALID_REQUEST', status: 400 }],
      });
    }
  });
});

describe('the route', () => {
  it('answers other methods with 405 in the error envelope', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await api(system.url, method, `${GRAPHQL}?query=%7Baccess%7Bmode%7D%7D`, { token: dev.token });
      expectError(response, 405, 'method_not_allowed');
      // RFC 9110: a 405 carries Allow (CONTRACT section 10).
      expect(response.headers.get('allow')?.split(', ')).toContain('POST');
    }
  });

  it('answers JSON with Cache-Control: no-store, successes and errors alike', async () => {
    for (const response of [
      await gql(system, dev.token, '{ access { mode } }'),
      await gql(system, dev.token, '{ records(kind: players, first: 0) { kind } }'),
      await gql(system, dev.token, '{ nope }'),
      await gql(system, undefined, '{ access { mode } }'),
    ]) {
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
    }
  });

  it('carries no stack trace and nothing but code and status in extensions', async () => {
    const responses = [
      await gql(system, dev.token, '{ records(kind: players, first: 0) { kind } }'),
      await gql(system, dev.token, '{ nope }'),
      await gql(
        system,
        dev.token,
        'mutation { fundOrganization(input: { organizationId: "00000000-0000-0000-0000-000000000000", amountCredits: 1 }) { id } }',
      ),
      await gql(system, dev.token, '{ access { '),
    ];
    for (const response of responses) {
      for (const error of response.body.errors ?? []) {
        expect(Object.keys(error.extensions).sort()).toEqual(['code', 'status']);
      }
      expect(JSON.stringify(response.body)).not.toMatch(/stacktrace|\.ts:\d+|node_modules/);
    }
  });

  it('is described in /openapi.json, whose schemas accept its requests and responses', async () => {
    const doc = (await api(system.url, 'GET', '/openapi.json')).body;
    const post = doc.paths[GRAPHQL].post;
    expect(post.security).toEqual([{ developerSession: [] }]);
    const schemas = new SchemaSet(doc.components.schemas);
    const request = schemas.compile(post.requestBody.content['application/json'].schema);
    const query = {
      query: 'query Q($kind: RecordKind!) { records(kind: $kind) { kind } }',
      variables: { kind: 'events' },
    };
    expect(request(query)).toBe(true);
    expect(request({ ...query, extra: 1 })).toBe(false);
    for (const [status, response] of [
      ['200', await gql(system, dev.token, query.query, query.variables)],
      ['200', await gql(system, dev.token, '{ access { mode } records(kind: players, first: 0) { kind } }')],
      ['400', await gql(system, dev.token, '{ nope }')],
      ['401', await gql(system, undefined, '{ access { mode } }')],
    ] as const) {
      expect(String(response.status)).toBe(status);
      expect(schemas.compile(post.responses[status].content['application/json'].schema)(response.body)).toBe(true);
    }
  });
});
