// The per-game rate limit over HTTP on real PostgreSQL and NATS, with EVENT_RATE_LIMIT_PER_MINUTE=5 and the
// ledger's receipt clock set by the test (no waiting for real minutes).
import { randomUUID } from 'node:crypto';
import { eventBody, expectDecision, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld, createRule, type EventWorld, gameState } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

const LIMIT = 5;

describe('rate limit: EVENT_RATE_LIMIT_PER_MINUTE fresh events per game per UTC minute', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());
  afterEach(() => system?.clock.reset());

  const receiveAt = (iso: string) => {
    const at = new Date(iso);
    system.clock.set(at);
  };
  const send = async (world: EventWorld, body: unknown) =>
    expectDecision(await postEvent(system.url, world.key.value, body));
  const fresh = (world: EventWorld, occurredAt: string) => eventBody(world, { occurredAt });

  it('lets exactly the limit through in a minute and stores the excess as rate_limited', async () => {
    const world = await createEventWorld(db);
    receiveAt('2031-07-01T10:00:00.000Z');
    const decisions = [];
    for (let i = 0; i < LIMIT + 3; i++) decisions.push(await send(world, fresh(world, '2031-07-01T10:00Z')));
    expect(decisions.map((d) => d.status)).toEqual([
      ...Array(LIMIT).fill('accepted'),
      'rejected',
      'rejected',
      'rejected',
    ]);
    expect(decisions.slice(LIMIT).map((d) => [d.reason, d.rewardCredits])).toEqual(Array(3).fill(['rate_limited', 0]));
    expect(await gameState(db, world.game.gameId)).toMatchObject({ decisions: LIMIT + 3, spentCredits: LIMIT * 10 });
  });

  it('counts every fresh attempt, whatever its decision; replays and errors do not count', async () => {
    const world = await createEventWorld(db);
    receiveAt('2031-07-01T11:00:30.000Z');
    // Two rejected for other reasons still use the minute's budget of attempts.
    await send(world, eventBody(world, { eventType: 'no.rule', occurredAt: '2031-07-01T11:00Z' }));
    await send(world, eventBody(world, { occurredAt: '2031-07-01T09:00Z' }));
    const body = fresh(world, '2031-07-01T11:00Z');
    await send(world, body);
    // Replays of a counted event, conflicts and unknown players, many times: no attempt.
    for (let i = 0; i < 10; i++) {
      expect((await send(world, body)).replayed).toBe(true);
      expectError(await postEvent(system.url, world.key.value, { ...body, eventType: 'x.y' }), 409, 'event_conflict');
      const stranger = eventBody(world, { playerId: randomUUID(), occurredAt: '2031-07-01T11:00Z' });
      expectError(await postEvent(system.url, world.key.value, stranger), 404, 'invalid_player');
    }
    await send(world, fresh(world, '2031-07-01T11:00Z'));
    const fifth = await send(world, fresh(world, '2031-07-01T11:00Z'));
    expect(fifth.status).toBe('accepted');
    const sixth = await send(world, fresh(world, '2031-07-01T11:00Z'));
    expect(sixth).toMatchObject({ status: 'rejected', reason: 'rate_limited' });
  });

  it('a rate_limited decision replays as rate_limited, even in a later minute', async () => {
    const world = await createEventWorld(db);
    receiveAt('2031-07-01T12:00:00.000Z');
    for (let i = 0; i < LIMIT; i++) await send(world, fresh(world, '2031-07-01T12:00Z'));
    const body = fresh(world, '2031-07-01T12:00Z');
    const limited = await send(world, body);
    expect(limited.reason).toBe('rate_limited');
    receiveAt('2031-07-01T12:01:00.000Z');
    expect(await send(world, body)).toEqual({ ...limited, replayed: true });
  });

  it('starts over at the next UTC minute: 59.999 s is the old minute, 00.000 the new one', async () => {
    const world = await createEventWorld(db);
    receiveAt('2031-07-01T13:00:00.000Z');
    for (let i = 0; i < LIMIT - 1; i++) await send(world, fresh(world, '2031-07-01T13:00Z'));
    receiveAt('2031-07-01T13:00:59.999Z');
    expect((await send(world, fresh(world, '2031-07-01T13:00Z'))).status).toBe('accepted');
    expect((await send(world, fresh(world, '2031-07-01T13:00Z'))).reason).toBe('rate_limited');
    receiveAt('2031-07-01T13:01:00.000Z');
    const next = [];
    for (let i = 0; i < LIMIT + 1; i++) next.push((await send(world, fresh(world, '2031-07-01T13:01Z'))).reason);
    expect(next).toEqual([...Array(LIMIT).fill(null), 'rate_limited']);
  });

  it('is per game: another game of the same project has its own minute', async () => {
    const one = await createEventWorld(db);
    const two = await createEventWorld(db, {
      project: { organizationId: one.game.organizationId, projectId: one.game.projectId },
    });
    await createRule(db, two.game, 'other.type', 1);
    receiveAt('2031-07-01T14:00:00.000Z');
    for (let i = 0; i < LIMIT + 1; i++) await send(one, fresh(one, '2031-07-01T14:00Z'));
    expect((await send(one, fresh(one, '2031-07-01T14:00Z'))).reason).toBe('rate_limited');
    for (let i = 0; i < LIMIT; i++) expect((await send(two, fresh(two, '2031-07-01T14:00Z'))).status).toBe('accepted');
  });
});
