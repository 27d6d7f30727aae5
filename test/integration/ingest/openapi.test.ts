// GET /openapi.json documents the ingest endpoints with the schemas ingest validates with, and real answers of both
// endpoints validate against the served document.
import { randomUUID } from 'node:crypto';
import { ingestSchemas } from '../../../gateway/src/schemas/ingest.ts';
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { CONFIG_PATH, EVENTS_PATH, eventBody, postEvent } from '../../support/ingest.ts';
import { createEventWorld, createKey } from '../../support/ledger-fixtures.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

describe('/openapi.json for the game SDK ingest endpoints', () => {
  let system: TestSystem;
  let doc: any;

  beforeAll(async () => {
    system = await startTestSystem();
    doc = (await api(system.url, 'GET', '/openapi.json')).body;
  });
  afterAll(async () => system?.stop());

  it('lists both paths with their credentials and error statuses', () => {
    const events = doc.paths[EVENTS_PATH].post;
    expect(events.security).toEqual([{ gameSecretKey: [] }]);
    expect(Object.keys(events.responses).sort()).toEqual(
      ['200', '400', '401', '403', '404', '409', '413', '415', '503'].sort(),
    );
    const config = doc.paths[CONFIG_PATH].get;
    expect(config.security).toEqual([{ gamePublicKey: [] }]);
    expect(config.parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([['publicKey', 'query', true]]);
    expect(Object.keys(config.responses).sort()).toEqual(['200', '401', '503']);
  });

  it('serves the same schemas ingest validates with', () => {
    for (const [name, schema] of Object.entries(ingestSchemas)) {
      expect(doc.components.schemas[name]).toEqual(JSON.parse(JSON.stringify(schema)));
    }
  });

  it('validates real requests and answers with the served document', async () => {
    const schemas = new SchemaSet(doc.components.schemas);
    const ok = (path: string, method: string) =>
      schemas.compile(doc.paths[path][method].responses['200'].content['application/json'].schema);
    const world = await createEventWorld(system.databaseUrl!);
    const body = eventBody(world, { metadata: { level: 2 } });
    expect(schemas.named('GameEventInput')(body)).toBe(true);
    expect(schemas.named('GameEventInput')({ ...body, extra: 1 })).toBe(false);
    const accepted = await postEvent(system.url, world.key.value, body);
    expect(ok(EVENTS_PATH, 'post')(accepted.body)).toBe(true);
    const rejected = await postEvent(system.url, world.key.value, eventBody(world, { eventType: 'none' }));
    expect(rejected.body.data.reason).toBe('unknown_or_inactive_rule');
    expect(ok(EVENTS_PATH, 'post')(rejected.body)).toBe(true);
    expect(ok(EVENTS_PATH, 'post')({ data: { ...accepted.body.data, extra: true } })).toBe(false);
    const key = await createKey(system.databaseUrl!, world.game, 'public');
    const config = await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=${key.value}`);
    expect(ok(CONFIG_PATH, 'get')(config.body)).toBe(true);
    const error = await postEvent(system.url, undefined, body);
    expect(schemas.named('ErrorEnvelope')(error.body)).toBe(true);
  });

  it('documents the batch endpoint; a real batch answer validates against the served document', async () => {
    const path = '/api/game-sdk/v2/events/batch';
    const batch = doc.paths[path].post;
    expect(batch.security).toEqual([{ gameSecretKey: [] }]);
    expect(Object.keys(batch.responses).sort()).toEqual(['200', '400', '401', '403', '413', '415', '503'].sort());
    const schemas = new SchemaSet(doc.components.schemas);
    const world = await createEventWorld(system.databaseUrl!);
    const events = [eventBody(world), { ...eventBody(world), extra: 1 }, eventBody(world, { playerId: randomUUID() })];
    // The document describes a valid batch; an invalid event is still answered, in its own result.
    expect(schemas.named('GameEventBatchInput')({ events: [events[0]] })).toBe(true);
    expect(schemas.named('GameEventBatchInput')({ events })).toBe(false);
    expect(schemas.named('GameEventBatchInput')({ events: [] })).toBe(false);
    const answer = await api(system.url, 'POST', path, { token: world.key.value, body: { events } });
    expect(answer.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 400, 404]);
    expect(schemas.compile(batch.responses['200'].content['application/json'].schema)(answer.body)).toBe(true);
    // Each item is one of two named schemas (client generators make one model of each), the error object named too.
    expect(doc.components.schemas.GameEventBatchResult.oneOf).toEqual([
      { $ref: '#/components/schemas/GameEventBatchDecision' },
      { $ref: '#/components/schemas/GameEventBatchFailure' },
    ]);
    expect(doc.components.schemas.GameEventBatchFailure.properties.error).toEqual({
      $ref: '#/components/schemas/ApiError',
    });
    expect(doc.components.schemas.ErrorEnvelope.properties.error).toEqual({ $ref: '#/components/schemas/ApiError' });
    const [decided, invalid, unknown] = answer.body.data.results;
    expect(schemas.named('GameEventBatchDecision')(decided)).toBe(true);
    expect(schemas.named('GameEventBatchFailure')(decided)).toBe(false);
    for (const failed of [invalid, unknown]) {
      expect(schemas.named('GameEventBatchFailure')(failed)).toBe(true);
      expect(schemas.named('GameEventBatchDecision')(failed)).toBe(false);
      expect(schemas.named('ApiError')(failed.error)).toBe(true);
    }
  });

  it('describes occurredAt exactly: the served pattern accepts what the server accepts, and only that', async () => {
    const validate = new SchemaSet(doc.components.schemas).named('GameEventInput');
    const world = await createEventWorld(system.databaseUrl!);
    for (const occurredAt of [
      '0000-00-00T00:00Z', // accepted by the document's pattern before, refused by the server
      '2026-02-29T12:00Z',
      '1900-02-29T12:00Z',
      '2026-04-31T12:00Z',
      '2026-01-01T24:00Z',
      '2026-01-01T12:00:60Z',
      '2026-01-01T12:00+24:00',
      '0000-01-01T00:30+01:00',
      '9999-12-31T23:30-01:00',
      '٢٠٢٦-01-01T12:00Z',
      '2024-02-29T12:00Z',
      '0000-01-01T00:00-01:00',
      '9999-12-31T23:59:59.999+01:00',
      new Date().toISOString(),
    ]) {
      const body = eventBody(world, { occurredAt });
      const response = await postEvent(system.url, world.key.value, body);
      const served = response.status === 200 ? 'accepted' : `${response.status} ${response.body.error.code}`;
      const documented = validate(body) ? 'accepted' : '400 invalid_event';
      expect({ occurredAt, served }).toEqual({ occurredAt, served: documented });
    }
  });
});
