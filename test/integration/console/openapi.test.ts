// GET /openapi.json describes the console endpoints with the very schemas the gateway validates with, and real
// responses validate against the served document.
import { consoleSchemas } from '../../../gateway/src/schemas/console.ts';
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { CONSOLE, developer, ok, RECORDS, world } from '../../support/console.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;
let doc: any;

beforeAll(async () => {
  system = await startTestSystem();
  const response = await api(system.url, 'GET', '/openapi.json');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  doc = response.body;
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

function resolvePointer(pointer: string): unknown {
  return pointer
    .slice(2)
    .split('/')
    .reduce<any>((node, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

describe('/openapi.json', () => {
  it('is an OpenAPI 3.1.0 document of version 2.0.0 with the console endpoints', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.0.0');
    expect(Object.keys(doc.paths['/api/developer/v1/console']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/developer/v1/records'])).toEqual(['get']);
    expect(doc.paths['/api/developer/v1/access'].get).toBeDefined();
    const parameters = doc.paths['/api/developer/v1/records'].get.parameters;
    expect(parameters.map((p: any) => [p.name, p.required])).toEqual([
      ['kind', true],
      ['organizationId', false],
      ['projectId', false],
      ['gameId', false],
      ['cursor', false],
      ['limit', false],
    ]);
  });

  it('serves the same schemas the gateway validates with', () => {
    for (const [name, schema] of Object.entries(consoleSchemas)) {
      expect(doc.components.schemas[name]).toEqual(JSON.parse(JSON.stringify(schema)));
    }
    const action = doc.components.schemas.DeveloperAction;
    expect(action.oneOf).toHaveLength(25);
    expect(Object.keys(action.discriminator.mapping).sort()).toEqual(
      [
        'acceptMembership',
        'addMember',
        'advanceGameClock',
        'allocateGame',
        'allocateProject',
        'createGame',
        'createOrganization',
        'createProject',
        'createRule',
        'createTestPlayer',
        'createWebhookEndpoint',
        'deleteWebhookEndpoint',
        'fundOrganization',
        'issueKey',
        'recoverWebhookDeliveries',
        'redeliverWebhook',
        'removeMember',
        'revokeKey',
        'rotateWebhookSecret',
        'sendTestWebhook',
        'updateGame',
        'updateMember',
        'updateProject',
        'updateRule',
        'updateWebhookEndpoint',
      ].sort(),
    );
  });

  it('has only references that resolve, and strict object schemas', () => {
    for (const ref of collectRefs(doc)) {
      expect(ref.startsWith('#/')).toBe(true);
      expect(resolvePointer(ref)).toBeDefined();
    }
    // Every object schema of the document forbids unknown properties.
    const objects: any[] = [];
    const visit = (value: unknown) => {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === 'object') {
        if ((value as any).type === 'object') objects.push(value);
        Object.values(value).forEach(visit);
      }
    };
    visit(doc.components.schemas);
    expect(objects.length).toBeGreaterThan(20);
    // Event metadata is open: its keys are the caller's data, not fields of the API. An audit entry's changes (the
    // console's and the operator's) is a map from the action's field names to strict {from, to} objects.
    const metadata = doc.components.schemas.GameEventInput.properties.metadata;
    const changes = [
      doc.components.schemas.AuditEntry.properties.changes,
      doc.components.schemas.OperatorAuditEntry.properties.changes,
    ];
    for (const object of objects) {
      if (changes.includes(object)) expect(object.additionalProperties.additionalProperties).toBe(false);
      else if (object !== metadata) expect(object.additionalProperties).toBe(false);
    }
  });

  it('validates real responses and requests with the served document', async () => {
    const schemas = new SchemaSet(doc.components.schemas);
    const response = (path: string, method: string) =>
      schemas.compile(doc.paths[path][method].responses['200'].content['application/json'].schema);
    const dev = await developer(system);
    const w = await world(system, dev.token);
    const action = { type: 'issueKey', gameId: w.gameId, kind: 'public', name: 'client' };
    expect(schemas.named('DeveloperAction')(action)).toBe(true);
    expect(schemas.named('DeveloperAction')({ ...action, extra: true })).toBe(false);
    const issued = await api(system.url, 'POST', CONSOLE, { token: dev.token, body: action });
    expect(response('/api/developer/v1/console', 'post')(issued.body)).toBe(true);
    await ok(system, dev.token, { type: 'createRule', gameId: w.gameId, eventType: 'win', rewardCredits: 3 });
    const snapshotResponse = await api(system.url, 'GET', CONSOLE, { token: dev.token });
    expect(response('/api/developer/v1/console', 'get')(snapshotResponse.body)).toBe(true);
    const records = await api(system.url, 'GET', `${RECORDS}?kind=players`, { token: dev.token });
    expect(response('/api/developer/v1/records', 'get')(records.body)).toBe(true);
    const access = await api(system.url, 'GET', '/api/developer/v1/access', { token: dev.token });
    expect(response('/api/developer/v1/access', 'get')(access.body)).toBe(true);
    const error = await api(system.url, 'GET', `${RECORDS}?kind=nope`, { token: dev.token });
    expect(schemas.named('ErrorEnvelope')(error.body)).toBe(true);
    // An extra field anywhere fails the strict schemas.
    const tampered = structuredClone(snapshotResponse.body);
    tampered.data.rules[0].note = 'extra';
    expect(response('/api/developer/v1/console', 'get')(tampered)).toBe(false);
  });
});
