// /openapi.json describes the linking endpoints with the very schemas the links edge validates with, and real
// responses of every linking endpoint validate against the served document (strict: no extra fields).

import { linkSchemas } from '#runtime/contracts/link-shapes.ts';
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { APPROVE, gameWithKeys, INSPECT, intent, LINK_INTENTS, native, nativeSession, PLAYERS } from './helpers.ts';

let system: TestSystem;
let doc: any;

beforeAll(async () => {
  system = await startTestSystem({ env: { SUPPORTED_COUNTRIES: 'DE' } });
  doc = (await api(system.url, 'GET', '/openapi.json')).body;
});
afterAll(async () => {
  await system?.stop();
});

function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) collectRefs(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out.push(item);
      else collectRefs(item, out);
    }
  }
  return out;
}

describe('/openapi.json: linking', () => {
  it('has the five routes of CONTRACT section 2 with their credentials', () => {
    const operations: Record<string, [string, string]> = {
      [LINK_INTENTS]: ['post', 'gameSecretKey'],
      [`${PLAYERS}/{playerId}`]: ['get', 'gameSecretKey'],
      [PLAYERS]: ['get', 'gameSecretKey'],
      [INSPECT]: ['post', 'nativeSession'],
      [APPROVE]: ['post', 'nativeSession'],
    };
    for (const [path, [method, scheme]] of Object.entries(operations)) {
      expect(Object.keys(doc.paths[path])).toEqual([method]);
      expect(doc.paths[path][method].security).toEqual([{ [scheme]: [] }]);
      expect(Object.keys(doc.paths[path][method].responses)).toContain('200');
    }
    expect(doc.paths[PLAYERS].get.parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([
      ['externalPlayerId', 'query', true],
    ]);
  });

  it('serves the schemas the edge validates with; every $ref resolves', () => {
    for (const [name, schema] of Object.entries(linkSchemas)) {
      expect(doc.components.schemas[name]).toEqual(JSON.parse(JSON.stringify(schema)));
    }
    for (const ref of collectRefs(doc)) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce<any>((node, part) => node?.[part], doc);
      expect({ ref, resolved: target !== undefined }).toEqual({ ref, resolved: true });
    }
  });

  it('real answers of every linking endpoint validate against the served document', async () => {
    const served = new SchemaSet(doc.components.schemas);
    const check = (path: string, method: string, body: unknown) => {
      const schema = doc.paths[path][method].responses['200'].content['application/json'].schema;
      const validate = served.compile(schema);
      expect({ path, valid: validate(body), errors: validate.errors ?? null }).toEqual({
        path,
        valid: true,
        errors: null,
      });
    };
    const game = await gameWithKeys(system);
    const created = await api(system.url, 'POST', LINK_INTENTS, {
      token: game.secretKey,
      body: { externalPlayerId: 'documented' },
    });
    check(LINK_INTENTS, 'post', created.body);
    const { linkToken, playerId } = created.body.data;
    const session = await nativeSession(system, { username: 'Doc' });
    check(INSPECT, 'post', (await native(system, INSPECT, session, { linkToken })).body);
    const unlinked = await api(system.url, 'GET', `${PLAYERS}/${playerId}`, { token: game.secretKey });
    check(`${PLAYERS}/{playerId}`, 'get', unlinked.body);
    check(APPROVE, 'post', (await native(system, APPROVE, session, { linkToken })).body);
    check(
      `${PLAYERS}/{playerId}`,
      'get',
      (await api(system.url, 'GET', `${PLAYERS}/${playerId}`, { token: game.secretKey })).body,
    );
    check(
      PLAYERS,
      'get',
      (await api(system.url, 'GET', `${PLAYERS}?externalPlayerId=documented`, { token: game.secretKey })).body,
    );
    // An extra field would not pass: the document is strict.
    const validate = served.compile(doc.paths[APPROVE].post.responses['200'].content['application/json'].schema);
    expect(validate({ data: { playerId, gameId: game.gameId, linked: true, mode: 'sandbox', extra: 1 } })).toBe(false);
    expect(await intent(system, game)).toBeDefined();
  });

  it("the native routes' admission errors are named responses of one named envelope, which real answers match", async () => {
    for (const path of [INSPECT, APPROVE]) {
      for (const status of ['401', '403', '409', '503']) {
        expect(doc.paths[path].post.responses[status].$ref).toBe(`#/components/responses/NativeError${status}`);
      }
    }
    for (const status of ['401', '403', '409', '503']) {
      expect(doc.components.responses[`NativeError${status}`].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/NativeErrorEnvelope',
      });
    }
    expect(Object.keys(doc.components.responses.NativeError503.headers)).toEqual(['Retry-After']);
    const served = new SchemaSet(doc.components.schemas);
    const envelope = served.named('NativeErrorEnvelope');
    const session = await nativeSession(system);
    const noSession = await api(system.url, 'POST', INSPECT, { body: { linkToken: 'x'.repeat(40) } });
    const geoBlocked = await native(system, INSPECT, { ...session, headers: {} }, { linkToken: 'x'.repeat(40) });
    expect([noSession.status, geoBlocked.status]).toEqual([401, 403]);
    for (const answer of [noSession, geoBlocked]) expect(envelope(answer.body)).toBe(true);
    expect(envelope({ error: { code: 'CLIENT_UPDATE_REQUIRED', message: 'm', minBuild: 10 } })).toBe(true);
    expect(envelope({ error: { code: 'CLIENT_UPDATE_REQUIRED', message: 'm' }, extra: 1 })).toBe(false);
    expect(envelope({ error: { code: 'GEO_BLOCKED', message: 'm', extra: 1 } })).toBe(false);
  });
});
