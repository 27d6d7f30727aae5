// POST /api/game-sdk/v2/events/batch against CONTRACT section 11.1 ("Batch events"), over HTTP on real PostgreSQL
// and NATS: the request's checks in the single endpoint's order up to not JSON, the body's shape, one result per
// event in input order with the status and code the single endpoint gives that event alone, copies of one eventId
// inside a batch, rate-limit counting, the quota fields of the last fresh decision, and a batch of 100 in requests of
// at most the per-game bound. The receipt clock is set by the test (no timing in any assertion).
import { randomUUID } from 'node:crypto';
import { EDGE_KEY_IN_FLIGHT_MAX_DEFAULT } from '../../../services/ingest/src/routes/event-batcher.ts';
import { eventBody, expectDecision, expectError, postEvent, programMetric } from '../../support/ingest.ts';
import { createEventWorld, createKey, type EventWorld } from '../../support/ledger-fixtures.ts';
import { type ApiResponse, api, startTestSystem, type TestSystem } from '../../support/system.ts';

const BATCH_PATH = '/api/game-sdk/v2/events/batch';
const LIMIT = 40;
const AT = '2031-03-04T10:20:30.000Z';

function postBatch(base: string, key: string | undefined, body: unknown) {
  return api(base, 'POST', BATCH_PATH, { token: key, body });
}

function postBatchRaw(base: string, key: string | undefined, rawBody: string | Uint8Array, contentType?: string) {
  const headers: Record<string, string> = {};
  if (contentType !== undefined) headers['Content-Type'] = contentType;
  return api(base, 'POST', BATCH_PATH, { token: key, rawBody, headers });
}

const quota = (response: ApiResponse) =>
  ['RateLimit-Policy', 'RateLimit', 'Rewards-Daily-Remaining', 'Rewards-Budget-Remaining'].map(
    (name) => response.headers.get(name) ?? undefined,
  );

/** A batch result as the single endpoint's answer: status and body ({data} or {error}). */
const asSingle = (result: { status: number; data?: unknown; error?: unknown }) =>
  result.status === 200 ? { status: 200, data: result.data } : { status: result.status, error: result.error };

describe('batch events (CONTRACT section 11.1)', () => {
  let system: TestSystem;
  let db: string;
  let world: EventWorld;

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    db = system.databaseUrl as string;
    world = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 1_000_000 });
  });
  afterAll(async () => system?.stop());
  beforeEach(() => system.clock.set(new Date(AT)));
  afterEach(() => system.clock.reset());

  const event = (w: EventWorld, overrides: Record<string, unknown> = {}) =>
    eventBody(w, { occurredAt: AT, ...overrides });

  it('request checks as the single endpoint, in its order, up to not JSON', async () => {
    const valid = JSON.stringify({ events: [event(world)] });
    expectError(await postBatchRaw(system.url, undefined, valid, 'application/json'), 401, 'invalid_key');
    expectError(await postBatchRaw(system.url, 'cr_sk_sandbox_short', valid, 'application/json'), 401, 'invalid_key');
    const publicKey = await createKey(db, world.game, 'public');
    expectError(await postBatchRaw(system.url, publicKey.value, valid, 'application/json'), 403, 'secret_key_required');
    expectError(await postBatchRaw(system.url, world.key.value, valid, 'text/plain'), 415, 'INVALID_CONTENT_TYPE');
    const big = JSON.stringify({ events: [event(world, { metadata: { pad: 'x'.repeat(1_048_576) } })] });
    expectError(await postBatchRaw(system.url, world.key.value, big, 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
    expectError(
      await postBatchRaw(system.url, world.key.value, '{"events": [', 'application/json'),
      400,
      'INVALID_REQUEST',
    );
    const duplicated = `{"events": [${JSON.stringify(event(world)).replace('{', '{"eventType": "x", ')}]}`;
    expectError(
      await postBatchRaw(system.url, world.key.value, duplicated, 'application/json'),
      400,
      'INVALID_REQUEST',
    );
    // A lone surrogate outside every metadata: not JSON, the whole request.
    const lone = `{"events": [${JSON.stringify(event(world, { eventType: 'X' })).replace('"X"', '"\\ud800"')}]}`;
    expectError(await postBatchRaw(system.url, world.key.value, lone, 'application/json'), 400, 'INVALID_REQUEST');
    // An unknown key before any body error.
    const unknownKey = `cr_sk_sandbox_${'u'.repeat(43)}`;
    expectError(await postBatchRaw(system.url, unknownKey, '{"events": [', 'application/json'), 401, 'invalid_key');
    expectError(await postBatch(system.url, unknownKey, { events: [] }), 401, 'invalid_key');
    expectError(await postBatch(system.url, unknownKey, { events: [event(world)] }), 401, 'invalid_key');
    expectError(await postBatch(system.url, unknownKey, { events: [{ eventId: 'x' }] }), 401, 'invalid_key');
  });

  it('the body: events missing, not an array, empty, over 100, or an unknown field is 400 invalid_event', async () => {
    const refused = [
      {},
      { events: event(world) },
      { events: [] },
      { events: Array.from({ length: 101 }, () => event(world)) },
      { events: [event(world)], extra: 1 },
      [event(world)],
    ];
    for (const body of refused) expectError(await postBatch(system.url, world.key.value, body), 400, 'invalid_event');
  });

  it('one result per event, in order, each what the single endpoint answers that event alone', async () => {
    const copy = event(world, { metadata: { n: 1 } });
    const events = [
      event(world),
      { ...event(world), unexpected: true },
      event(world, { metadata: { deep: { a: { b: { c: { d: { e: { f: 1 } } } } } } } }),
      event(world, { playerId: randomUUID() }),
      event(world, { metadata: { pad: 'x'.repeat(17_000) } }),
      copy,
      copy,
      { ...copy, metadata: { n: 2 } },
      event(world, { eventType: 'no.such.rule' }),
    ];
    const response = await postBatch(system.url, world.key.value, { events });
    expect(response.status).toBe(200);
    const results = response.body.data.results as Array<{ status: number; data?: any; error?: any }>;
    expect(results.map((r) => r.status)).toEqual([200, 400, 400, 404, 413, 200, 200, 409, 200]);
    expect(results.map((r) => r.error?.code)).toEqual([
      undefined,
      'invalid_event',
      'invalid_metadata',
      'invalid_player',
      'PAYLOAD_TOO_LARGE',
      undefined,
      undefined,
      'event_conflict',
      undefined,
    ]);
    expect(results[0]!.data).toMatchObject({ status: 'accepted', replayed: false, eventId: events[0]!.eventId });
    expect(results[5]!.data).toMatchObject({ status: 'accepted', replayed: false });
    expect(results[6]!.data).toEqual({ ...results[5]!.data, replayed: true });
    expect(results[8]!.data).toMatchObject({ status: 'rejected', reason: 'unknown_or_inactive_rule' });
    // The same events sent alone now: the stored decisions (replays), and the same errors.
    for (const [i, e] of events.entries()) {
      const single = await postEvent(system.url, world.key.value, e);
      const expected = asSingle(results[i]!);
      if (expected.status === 200) {
        expect(expectDecision(single)).toEqual({ ...(expected.data as object), replayed: true });
      } else {
        expect({ status: single.status, code: single.body.error.code }).toEqual({
          status: expected.status,
          code: (expected.error as { code: string }).code,
        });
      }
    }
  });

  it('a metadata lone surrogate is that event’s invalid_metadata; the others are decided', async () => {
    const good = event(world);
    const bad = JSON.stringify(event(world, { metadata: { k: 'X' } })).replace('"X"', '"\\udc00"');
    const raw = `{"events": [${JSON.stringify(good)}, ${bad}]}`;
    const response = await postBatchRaw(system.url, world.key.value, raw, 'application/json');
    expect(response.status).toBe(200);
    expect(response.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 400]);
    expect(response.body.data.results[1].error.code).toBe('invalid_metadata');
  });

  it('each event counts toward the rate limit; the quota fields are the last fresh decision’s', async () => {
    const w = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 1_000_000 });
    const minute = '2031-03-04T10:21:10.000Z';
    system.clock.set(new Date(minute));
    const first = await postBatch(system.url, w.key.value, {
      events: Array.from({ length: LIMIT - 2 }, () => eventBody(w, { occurredAt: minute })),
    });
    expect(first.status).toBe(200);
    expect(quota(first)).toEqual([
      `"minute";q=${LIMIT};w=60`,
      `"minute";r=2;t=50`,
      expect.any(String),
      expect.any(String),
    ]);
    const fresh = eventBody(w, { occurredAt: minute });
    const second = await postBatch(system.url, w.key.value, {
      events: [fresh, ...Array.from({ length: 3 }, () => eventBody(w, { occurredAt: minute })), fresh],
    });
    const reasons = second.body.data.results.map((r: { data: { reason: string | null } }) => r.data.reason);
    expect(reasons).toEqual([null, null, 'rate_limited', 'rate_limited', null]);
    // The last fresh decision is the fourth event's (the fifth is a replay): no attempts left.
    expect(quota(second)[1]).toBe('"minute";r=0;t=50');
    // A batch of replays only carries no quota fields.
    const replays = await postBatch(system.url, w.key.value, { events: [fresh] });
    expect(quota(replays)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('a batch of 100 travels to the ledger in requests of at most the per-game bound, in order', async () => {
    const w = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    system.clock.set(new Date('2031-03-04T10:40:00.000Z'));
    const before = await programMetric(system.url, 'ingest_event_batch_size_count');
    const events = Array.from({ length: 100 }, () => eventBody(w, { occurredAt: '2031-03-04T10:40:00.000Z' }));
    const response = await postBatch(system.url, w.key.value, { events });
    expect(response.status).toBe(200);
    const results = response.body.data.results as Array<{ status: number; data: { eventId: string } }>;
    expect(results.map((r) => r.data.eventId)).toEqual(events.map((e) => e.eventId));
    // INGEST_EVENT_KEY_IN_FLIGHT_MAX (32 by default): 32, 32, 32 and 4 events, each request when the one before ended.
    const requests = Math.ceil(events.length / EDGE_KEY_IN_FLIGHT_MAX_DEFAULT);
    expect(await programMetric(system.url, 'ingest_event_batch_size_count')).toBe(before + requests);
  });
});
