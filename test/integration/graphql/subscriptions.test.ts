// The live decisions subscription (GraphQL `decisions(gameId)` over graphql-transport-ws at /graphql) on real
// PostgreSQL and NATS, with a real graphql-ws client: delivery after commit as the records show it, replays not
// delivered, refusals on connect (token, Origin) and per subscription (non-member), the end on removal and on
// session expiry, and two gateway replicas on one NATS each delivering every decision once.
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import WebSocket from 'ws';
import { decisionsSubject, decisionsTopic } from '#runtime/contracts/subjects.ts';
import { LIVE_CLOSE } from '../../../gateway/src/graphql/live.ts';
import { startSystem } from '../../../services/all-in-one/src/system.ts';
import { addMember, developer, ok, snapshot } from '../../support/console.ts';
import {
  DECISIONS,
  eventGame,
  gameEvent,
  liveClient,
  liveDrops,
  liveSubscription,
  postGameEvent,
  subscribeDecisions,
  until,
} from '../../support/live.ts';
import { developerToken, startTestSystem, TEST_ADMIN_TOKEN, type TestSystem } from '../../support/system.ts';
import { TEST_WEBHOOK_SECRET_KEY } from '../../support/webhook-key.ts';
import { gql, restRecords } from './helpers.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem({ env: { ALLOWED_ORIGINS: 'https://console.example.com' } });
});

afterAll(async () => {
  await system?.stop();
});

describe('GraphQL live decisions on NATS', () => {
  it('delivers a posted decision within 2 s, as the records show it, and never a replay', async () => {
    const dev = await developer(system);
    const game = await eventGame(system, dev.token);
    const { live, recorded } = await liveSubscription(system.url, dev.token, game.gameId);
    try {
      const body = gameEvent(game);
      const decided = await postGameEvent(system.url, game, body);
      await until(() => recorded.events.length === 1, 'the decision', 2000);
      const page = await restRecords(system, dev.token, { kind: 'events', gameId: game.gameId });
      expect(recorded.events[0]).toEqual(page.body.data.records[0]);
      const { replayed, mode, ...decision } = decided;
      expect([replayed, mode]).toEqual([false, 'sandbox']);
      expect(recorded.events[0]).toEqual(decision);

      expect((await postGameEvent(system.url, game, body)).replayed).toBe(true);
      const next = await postGameEvent(system.url, game, gameEvent(game));
      await until(() => recorded.events.length >= 2, 'the next decision', 2000);
      // One publisher, one order: had the replay been published, it would have come before the next decision.
      expect(recorded.events.map((e) => e.eventId)).toEqual([body.eventId, next.eventId]);
    } finally {
      await live.dispose();
    }
  });

  it('pings {subscribed: id} once a subscription is live on its side: a decision posted after the ping is delivered', async () => {
    const dev = await developer(system);
    const game = await eventGame(system, dev.token);
    const socket = new WebSocket(`${system.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const messages: Array<{ type: string; id?: string; payload?: any }> = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    try {
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${dev.token}` } }));
      await until(() => messages.some((m) => m.type === 'connection_ack'), 'connection_ack');
      expect(messages.filter((m) => m.type === 'ping')).toEqual([]);
      const subscribe = { query: DECISIONS, variables: { gameId: game.gameId } };
      socket.send(JSON.stringify({ id: 'one', type: 'subscribe', payload: subscribe }));
      await until(() => messages.some((m) => m.type === 'ping'), 'the ping');
      expect(messages.filter((m) => m.type === 'ping')).toEqual([{ type: 'ping', payload: { subscribed: 'one' } }]);
      // Live when it pinged: the next decision reaches the socket (no wait for the gauge, no sleep).
      const decided = await postGameEvent(system.url, game, gameEvent(game));
      await until(() => messages.some((m) => m.type === 'next'), 'the decision');
      expect(messages.find((m) => m.type === 'next')).toMatchObject({
        id: 'one',
        payload: { data: { decisions: { eventId: decided.eventId } } },
      });
      // A refused subscription (a game it may not read) is answered with its error, and no ping.
      const other = await eventGame(system, (await developer(system)).token);
      socket.send(
        JSON.stringify({
          id: 'two',
          type: 'subscribe',
          payload: { ...subscribe, variables: { gameId: other.gameId } },
        }),
      );
      await until(() => messages.some((m) => m.id === 'two' && m.type !== 'next'), 'the refusal');
      expect(messages.filter((m) => m.type === 'ping')).toHaveLength(1);
    } finally {
      socket.close();
    }
  });

  it('refuses a connection without a valid token (4401) or from a foreign Origin (4403)', async () => {
    const dev = await developer(system);
    const cases: Array<[string, Parameters<typeof liveClient>[1], number, string]> = [
      ['no token', {}, LIVE_CLOSE.unauthorized, 'UNAUTHORIZED'],
      ['a bad token', { token: 'not-a-jwt' }, LIVE_CLOSE.unauthorized, 'UNAUTHORIZED'],
      [
        'a foreign Origin',
        { token: dev.token, origin: 'https://evil.example.com' },
        LIVE_CLOSE.forbidden,
        'INVALID_SESSION_ORIGIN',
      ],
    ];
    for (const [what, options, code, reason] of cases) {
      const live = liveClient(system.url, options);
      await until(() => live.closed !== undefined, `the refusal of ${what}`);
      expect({ what, connected: live.connected, code: live.closed?.code }).toEqual({ what, connected: false, code });
      expect(live.closed?.reason).toBe(reason);
      await live.dispose();
    }
    // An Origin in ALLOWED_ORIGINS, and the gateway's own origin, are admitted.
    for (const origin of ['https://console.example.com', system.url]) {
      const live = liveClient(system.url, { token: dev.token, origin });
      await until(() => live.connected || live.closed !== undefined, `the connection from ${origin}`);
      expect(live.connected).toBe(true);
      await live.dispose();
    }
  });

  it('answers 404 not_found to a developer who is not a member of the game', async () => {
    const owner = await developer(system);
    const stranger = await developer(system);
    const game = await eventGame(system, owner.token);
    const live = liveClient(system.url, { token: stranger.token });
    try {
      const recorded = subscribeDecisions(live, game.gameId);
      await until(() => recorded.errors.length > 0, 'the refusal');
      expect(recorded.errors).toEqual([expect.objectContaining({ extensions: { code: 'not_found', status: 404 } })]);
      expect(recorded.events).toEqual([]);
      // The same code as the game's GraphQL reads.
      const stats = await gql(
        system,
        stranger.token,
        `query($g: UUID!) { decisionStats(gameId: $g, from: "2026-01-01T00:00:00Z", to: "2026-01-01T01:00:00Z", bucket: hour) { gameId } }`,
        { g: game.gameId },
      );
      expect(stats.body.errors?.[0]?.extensions).toEqual({ code: 'not_found', status: 404 });
    } finally {
      await live.dispose();
    }
  });

  it('ends the subscription when the member is removed', async () => {
    const owner = await developer(system);
    const member = await developer(system);
    const game = await eventGame(system, owner.token);
    const memberId = await addMember(system, owner.token, game.organizationId, member, 'viewer');
    const dropsBefore = await liveDrops(system.url, 'access_lost');
    const { live, recorded } = await liveSubscription(system.url, member.token, game.gameId);
    try {
      await postGameEvent(system.url, game, gameEvent(game));
      await until(() => recorded.events.length === 1, 'the decision while a member', 2000);
      await ok(system, owner.token, { type: 'removeMember', memberId });
      await until(() => recorded.errors.length > 0, 'the end of the subscription');
      expect(recorded.errors).toEqual([expect.objectContaining({ extensions: { code: 'not_found', status: 404 } })]);
      expect(await liveDrops(system.url, 'access_lost')).toBe(dropsBefore + 1);
      await postGameEvent(system.url, game, gameEvent(game));
      expect((await snapshot(system, owner.token)).events.length).toBeGreaterThanOrEqual(2);
      expect(recorded.events).toHaveLength(1);
    } finally {
      await live.dispose();
    }
  });

  it('closes the connection with 4401 SESSION_EXPIRED when the session expires', async () => {
    const dev = await developer(system);
    const game = await eventGame(system, dev.token);
    const token = await developerToken(system, dev.email, { expiresIn: '3s' });
    const { live } = await liveSubscription(system.url, token, game.gameId);
    try {
      await until(() => live.closed !== undefined, 'the expiry', 10_000);
      expect(live.closed).toEqual({ code: LIVE_CLOSE.unauthorized, reason: 'SESSION_EXPIRED' });
    } finally {
      await live.dispose();
    }
  });

  it('drops a consumer that stops reading with 4008 SLOW_CONSUMER', async () => {
    const dev = await developer(system);
    const game = await eventGame(system, dev.token);
    const { live, recorded } = await liveSubscription(system.url, dev.token, game.gameId);
    const dropsBefore = await liveDrops(system.url, 'slow_consumer');
    // The client stops reading its socket; decisions of 64 KiB each (published as the ledger does) pile up in the
    // kernel's buffers, then in the gateway's, until a bound is crossed.
    const raw = (live.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    raw.pause();
    const big = {
      decision: {
        id: randomUUID(),
        eventId: randomUUID(),
        gameId: game.gameId,
        organizationId: game.organizationId,
        playerId: game.playerId,
        eventType: 'x'.repeat(65_536),
        occurredAt: new Date().toISOString(),
        status: 'rejected',
        reason: 'user_unavailable',
        rewardCredits: 0n,
        createdAt: new Date().toISOString(),
      },
    };
    await until(
      async () => {
        for (let i = 0; i < 20; i += 1) {
          system.running.transport.publish(decisionsTopic, decisionsSubject(game.gameId), big);
        }
        return (await liveDrops(system.url, 'slow_consumer')) > dropsBefore;
      },
      'the drop',
      30_000,
    );
    raw.resume();
    await until(() => live.closed !== undefined, 'the close frame after the buffered decisions', 30_000);
    expect(live.closed).toEqual({ code: LIVE_CLOSE.slowConsumer, reason: 'SLOW_CONSUMER' });
    expect(recorded.events.length).toBeGreaterThan(0);
    await live.dispose();
  });

  it('refuses a subscription sent over HTTP POST (400 INVALID_REQUEST); queries keep working', async () => {
    const dev = await developer(system);
    const game = await eventGame(system, dev.token);
    const refused = await gql(system, dev.token, DECISIONS, { gameId: game.gameId });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'INVALID_REQUEST', status: 400 });
    expect((await gql(system, dev.token, '{ access { authorized } }')).body).toEqual({
      data: { access: { authorized: true } },
    });
  });

  it('delivers every decision once to the subscribers of each of two gateway replicas on one NATS', async () => {
    // A second all-in-one process on the same NATS, database and identity keys: another gateway replica (its ledger
    // and identity-admission join the same queue groups).
    const second = await startSystem({
      env: {
        DATA_DIR: system.dataDir,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        DATABASE_URL: system.databaseUrl,
        NATS_URL: system.natsUrl,
        // As the first replica (test/support/system.ts): both identity-admissions of the queue group trust the keys.
        UNSAFE_DEV_IDENTITY_PROVIDER: 'true',
        WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
      },
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    try {
      const dev = await developer(system);
      const game = await eventGame(system, dev.token);
      const subscribers = [
        await liveSubscription(system.url, dev.token, game.gameId),
        await liveSubscription(system.url, dev.token, game.gameId),
        await liveSubscription(second.url, dev.token, game.gameId),
      ];
      const posted: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        // Alternate the edges: decisions made by either process's ledger reach both gateways.
        const body = gameEvent(game);
        await postGameEvent(i % 2 === 0 ? system.url : second.url, game, body);
        posted.push(String(body.eventId));
      }
      for (const { recorded } of subscribers) {
        await until(() => recorded.events.length >= posted.length, 'every decision', 2000);
      }
      // A last decision: anything duplicated would have arrived before it.
      const last = gameEvent(game);
      await postGameEvent(system.url, game, last);
      posted.push(String(last.eventId));
      for (const { recorded } of subscribers) {
        await until(() => recorded.events.some((e) => e.eventId === last.eventId), 'the last decision', 2000);
        expect(recorded.events.map((e) => e.eventId).sort()).toEqual([...posted].sort());
      }
      for (const { live } of subscribers) await live.dispose();
    } finally {
      await second.stop();
    }
  });
});
