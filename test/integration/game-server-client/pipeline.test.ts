// The game-server client (clients/game-server) against the whole service on real PostgreSQL and NATS: its pipeline
// groups events by size and by time and every send of an event carries the bytes it was serialized to; final answers
// (decisions, 4xx) are never retried; a 503 is retried after its Retry-After with the same bytes; record() waits
// while the bound on unsettled events is reached; close() settles everything and refuses new events.
import { randomUUID } from 'node:crypto';
import {
  ClientClosedError,
  type EventOutcome,
  GameServerClient,
  InvalidEventError,
  type RetryNotice,
  serializeEvent,
} from '../../../clients/game-server/src/index.ts';
import { createEventWorld, type EventWorld, gameState } from '../../support/ledger-fixtures.ts';
import { admin, startTestSystem, type TestSystem } from '../../support/system.ts';
import { eventTexts, recordingFetch, storedDecisions } from './support.ts';

describe('game-server client: pipeline, final answers, retries, backpressure, shutdown', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    // A limit the tests here never reach: the rate limit's holds have their own test (rate-limit-hold.test.ts).
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: '1000000' } });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  const bigWorld = () => createEventWorld(db, { budgetCredits: 1_000_000_000, dailyPlayerCapCredits: 1_000_000_000 });
  const event = (world: EventWorld, metadata?: Record<string, unknown>) => ({
    playerId: world.player.id,
    eventType: world.eventType,
    ...(metadata ? { metadata } : {}),
  });
  const decided = (outcome: EventOutcome) => {
    if (outcome.kind !== 'decided') throw new Error(`not decided: ${JSON.stringify(outcome)}`);
    return outcome.decision;
  };

  it('groups by count and bytes, sends each event as serialized once, and every event is decided once', async () => {
    const world = await bigWorld();
    const { fetch, sent } = recordingFetch();
    const maxBatchBytes = 20_000;
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      fetch,
      maxBatchBytes,
      lingerMs: 5_000,
    });
    // 250 events recorded at once: by count, two batches of 100; the rest waits for its linger or a flush.
    // 30 events of about 1.5 KB each: by bytes, groups under 20,000 bytes.
    const recorded = [];
    for (let i = 0; i < 250; i++) recorded.push(await client.record(event(world)));
    const padded = { note: 'x'.repeat(1_500) };
    for (let i = 0; i < 30; i++) recorded.push(await client.record(event(world, padded)));
    await client.close();

    const outcomes = await Promise.all(recorded.map((r) => r.outcome));
    expect(outcomes.map((o) => decided(o).status)).toEqual(Array(280).fill('accepted'));
    expect(outcomes.every((o) => o.attempts === 1 && !decided(o).replayed)).toBe(true);
    expect(outcomes.map((o) => o.eventId)).toEqual(recorded.map((r) => r.eventId));

    // Every request within the limits, and each event's text in it exactly the body it was serialized to.
    const bodies = new Map(recorded.map((r) => [r.eventId, r.body]));
    const carried: string[] = [];
    for (const request of sent) {
      const texts = eventTexts(request);
      expect(texts.length).toBeLessThanOrEqual(100);
      expect(Buffer.byteLength(request.body)).toBeLessThanOrEqual(maxBatchBytes);
      for (const text of texts) {
        const eventId = (JSON.parse(text) as { eventId: string }).eventId;
        expect(text).toBe(bodies.get(eventId));
        carried.push(eventId);
      }
    }
    expect(carried.sort()).toEqual([...bodies.keys()].sort());
    // Grouped: the first 200 in two full batches; the padded ones at most 13 a request (13 x 1.5 KB < 20,000).
    expect(sent.slice(0, 2).map((r) => eventTexts(r).length)).toEqual([100, 100]);
    expect(sent.length).toBeLessThan(20);

    const stored = await storedDecisions(db, world.game.gameId);
    expect(stored.size).toBe(280);
    for (const outcome of outcomes) expect(stored.get(outcome.eventId)).toEqual([decided(outcome).id]);
    expect(await gameState(db, world.game.gameId)).toMatchObject({ decisions: 280, spentCredits: 2_800 });
  }, 60_000);

  it('a lone event goes to the single endpoint once its linger passed', async () => {
    const world = await bigWorld();
    const { fetch, sent } = recordingFetch();
    const client = new GameServerClient({ baseUrl: system.url, secretKey: world.key.value, fetch, lingerMs: 10 });
    const outcome = await client.send(event(world));
    expect(decided(outcome)).toMatchObject({ status: 'accepted', replayed: false, rewardCredits: 10 });
    expect(sent.map((r) => new URL(r.url).pathname)).toEqual(['/api/game-sdk/v2/events']);
    expect(client.quota).toMatchObject({ limit: 1_000_000, windowSeconds: 60, dailyRemainingCredits: 999_999_990 });
    await client.close();
  });

  it('never retries a final answer: a decision, a rejection, a 404 and a 409, alone and in a batch', async () => {
    const world = await bigWorld();
    const { fetch, sent } = recordingFetch();
    const retries: RetryNotice[] = [];
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      fetch,
      lingerMs: 60_000,
      onRetry: (retry) => retries.push(retry),
    });
    const eventId = randomUUID();
    const batch = await Promise.all([
      client.record(event(world)),
      client.record({ ...event(world), eventType: 'no.such.rule' }),
      client.record({ ...event(world), playerId: randomUUID() }),
      client.record({ ...event(world), eventId, occurredAt: '2031-01-01T00:00:00.000Z' }),
      // The same eventId and instant, written with another offset: another payload.
      client.record({ ...event(world), eventId, occurredAt: '2031-01-01T00:00:00.000+00:00' }),
    ]);
    await client.flush();
    const outcomes = await Promise.all(batch.map((r) => r.outcome));
    expect(sent).toHaveLength(1);
    const summary = (o: EventOutcome) =>
      o.kind === 'decided'
        ? [o.decision.status, o.decision.reason]
        : o.kind === 'failed'
          ? [o.kind, o.status]
          : [o.kind];
    expect(outcomes.map(summary)).toEqual([
      ['accepted', null],
      ['rejected', 'unknown_or_inactive_rule'],
      ['failed', 404],
      ['rejected', 'timestamp_out_of_window'],
      ['failed', 409],
    ]);
    expect(outcomes.map((o) => (o.kind === 'failed' ? o.code : undefined))).toEqual([
      undefined,
      undefined,
      'invalid_player',
      undefined,
      'event_conflict',
    ]);
    // Alone, through the single endpoint: the same finality.
    const alone = await client.record({ ...event(world), playerId: randomUUID() });
    await client.flush();
    expect(await alone.outcome).toMatchObject({ kind: 'failed', status: 404, code: 'invalid_player', attempts: 1 });
    expect(sent).toHaveLength(2);
    expect(retries).toEqual([]);
    // What no send could get through is refused before it is queued.
    await expect(client.record({ ...event(world), eventType: 'Not A Type' })).rejects.toBeInstanceOf(InvalidEventError);
    await expect(client.record({ ...event(world), playerId: 'hero' })).rejects.toBeInstanceOf(InvalidEventError);
    await client.close();
  });

  it("retries a 503 after its Retry-After with the same bytes, and the retry's decision is the only one", async () => {
    const world = await bigWorld();
    const { fetch, sent } = recordingFetch();
    const retries: RetryNotice[] = [];
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      fetch,
      lingerMs: 0,
      onRetry: (retry) => {
        retries.push(retry);
        // The operator turns the platform back on while the client waits.
        void admin(system, 'PUT', '/platform', { enabled: true });
      },
    });
    try {
      expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
      const recorded = await Promise.all([client.record(event(world)), client.record(event(world))]);
      const outcomes = await Promise.all(recorded.map((r) => r.outcome));
      expect(outcomes.map((o) => [decided(o).status, decided(o).replayed])).toEqual([
        ['accepted', false],
        ['accepted', false],
      ]);
      expect(outcomes.every((o) => o.attempts >= 2)).toBe(true);
      // Each retry waited what Retry-After said (1 s), for the whole request (PLATFORM_DISABLED).
      expect(retries.length).toBeGreaterThanOrEqual(1);
      for (const retry of retries) expect(retry).toMatchObject({ cause: 'status', status: 503, delayMs: 1_000 });
      expect(retries[0]!.error).toMatch(/^503 PLATFORM_DISABLED/);
      // Every send of each event carried its one body.
      for (const r of recorded) {
        const sends = sent.flatMap(eventTexts).filter((text) => text.includes(r.eventId));
        expect(sends.length).toBeGreaterThanOrEqual(2);
        expect(new Set(sends)).toEqual(new Set([r.body]));
      }
      const stored = await storedDecisions(db, world.game.gameId);
      expect(stored.size).toBe(2);
      for (const outcome of outcomes) expect(stored.get(outcome.eventId)).toEqual([decided(outcome).id]);
    } finally {
      expect((await admin(system, 'PUT', '/platform', { enabled: true })).status).toBe(200);
      await client.close();
    }
  }, 60_000);

  it('record() waits while maxPendingEvents events are unsettled, and resumes as they settle', async () => {
    const world = await bigWorld();
    const bound = 10;
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      lingerMs: 0,
      maxPendingEvents: bound,
      maxRequestsInFlight: 1,
    });
    const settledBefore: number[] = [];
    let settled = 0;
    const outcomes: Array<Promise<EventOutcome>> = [];
    for (let i = 0; i < 60; i++) {
      const recorded = await client.record(event(world));
      // When record() returned, at most `bound` events were unsettled: this one and those before it not yet settled.
      expect(client.pendingEvents).toBeLessThanOrEqual(bound);
      settledBefore.push(settled);
      outcomes.push(
        recorded.outcome.then((o) => {
          settled++;
          return o;
        }),
      );
    }
    await client.close();
    expect((await Promise.all(outcomes)).map((o) => decided(o).status)).toEqual(Array(60).fill('accepted'));
    // The 11th record() and every later one returned only after events had settled: the i-th needed i - 9.
    for (const [i, count] of settledBefore.entries()) expect(count).toBeGreaterThanOrEqual(i - bound + 1);
  }, 60_000);

  it('close({ timeoutMs }) settles what is still open as unknown, with the body another process resends', async () => {
    const world = await bigWorld();
    const client = new GameServerClient({ baseUrl: system.url, secretKey: world.key.value, lingerMs: 0 });
    let outcome: EventOutcome;
    try {
      // The platform is off: every send answers 503 and waits its Retry-After (1 s), longer than close() waits.
      expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
      const recorded = await client.record(event(world));
      await client.close({ timeoutMs: 300 });
      outcome = await recorded.outcome;
      expect(outcome).toMatchObject({ kind: 'unknown', eventId: recorded.eventId, body: recorded.body });
      expect(client.pendingEvents).toBe(0);
    } finally {
      expect((await admin(system, 'PUT', '/platform', { enabled: true })).status).toBe(200);
    }
    if (outcome.kind !== 'unknown') throw new Error('not unknown');
    const next = new GameServerClient({ baseUrl: system.url, secretKey: world.key.value, lingerMs: 0 });
    const resent = await next.send({ body: outcome.body });
    await next.close();
    // Nothing had been stored (the platform refused every send): the resend is the event's one decision.
    expect(decided(resent)).toMatchObject({ eventId: outcome.eventId, status: 'accepted', replayed: false });
    expect([...(await storedDecisions(db, world.game.gameId)).keys()]).toEqual([outcome.eventId]);
  });

  it('close() settles what was recorded, then refuses new events; a kept body is resent as it is', async () => {
    const world = await bigWorld();
    const client = new GameServerClient({ baseUrl: system.url, secretKey: world.key.value, lingerMs: 60_000 });
    const kept = serializeEvent(event(world));
    const first = await client.record(kept);
    const second = await client.record(event(world));
    await client.close();
    const [a, b] = await Promise.all([first.outcome, second.outcome]);
    expect([decided(a).eventId, decided(a).replayed]).toEqual([kept.eventId, false]);
    expect(decided(b).status).toBe('accepted');
    await expect(client.record(event(world))).rejects.toBeInstanceOf(ClientClosedError);
    // The kept body sent again by another client (a restarted process): the stored decision, replayed.
    const again = new GameServerClient({ baseUrl: system.url, secretKey: world.key.value });
    const replay = await again.send({ body: kept.body });
    expect(decided(replay)).toEqual({ ...decided(a), replayed: true });
    await again.close();
  });
});
