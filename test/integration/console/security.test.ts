// Probes of an attacker holding a valid account, or only reaching the port, kept closed:
// - the development sign-in (POST /console/dev-session) exists only where the development identity provider is
//   trusted, answers only a browser on the server's own machine, and honours the platform switch;
// - a burst of subscribe messages on one socket is closed past the socket's bucket (close 4029
//   TOO_MANY_SUBSCRIBE_MESSAGES) after at most the per-connection limit of read checks, while other developers are
//   served; a client within the bucket and the limit (the web console switching games) is unaffected; one developer
//   may hold at most LIVE_CONNECTIONS_PER_DEVELOPER_MAX sockets (close 4029 TOO_MANY_CONNECTIONS);
// - every response says nosniff; forwarded headers count only behind a trusted proxy (TRUST_PROXY).
import { request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket from 'ws';
import { LIVE_LIMITS } from '../../../gateway/src/graphql/live.ts';
import { ok } from '../../support/console.ts';
import {
  DECISIONS,
  eventGame,
  gameEvent,
  liveClient,
  liveDrops,
  liveSubscription,
  liveSubscriptions,
  postGameEvent,
  type Recorded,
  subscribeDecisions,
  until,
} from '../../support/live.ts';
import { admin, api, invitedDeveloper, startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql } from '../graphql/helpers.ts';

/** POST /console/dev-session on a fresh connection (node:http, no agent), with any header (Host included). */
function devSession(
  system: TestSystem,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: { get(name: string): string | null }; body: any }> {
  const body = JSON.stringify({ email: 'victim@corp.example' });
  return new Promise((resolve, reject) => {
    const call = request(
      `${system.url}/console/dev-session`,
      { method: 'POST', agent: false, headers: { 'Content-Type': 'application/json', ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: { get: (name) => (response.headers[name.toLowerCase()] as string | undefined) ?? null },
            body: JSON.parse(text),
          }),
        );
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

describe('the development sign-in on a real database without UNSAFE_DEV_IDENTITY_PROVIDER', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ env: { UNSAFE_DEV_IDENTITY_PROVIDER: undefined } });
  });
  afterAll(() => system?.stop());

  it('does not exist, and the development provider is not trusted', async () => {
    const { token } = await invitedDeveloper(system, 'victim@corp.example');
    const signIn = await devSession(system);
    // Only the console's pages answer at that path (GET), as at any other path under /console/.
    expect(signIn.status).toBe(405);
    expect(signIn.body.error.code).toBe('method_not_allowed');
    expect(signIn.headers.get('allow')).toBe('HEAD, GET');
    expect((await api(system.url, 'GET', '/console/config.json')).body).toEqual({ signIn: { kind: 'none' } });
    // A token of the development provider (what `npm run dev:token` prints) is refused like any stranger's.
    const access = await api(system.url, 'GET', '/api/developer/v1/access', { token });
    expect(access.status).toBe(401);
    expect(access.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('the development sign-in where it is trusted', () => {
  let system: TestSystem;
  /** The peer address the server sees for the next connections (undefined: the real one, loopback). */
  let pretendPeer: string | undefined;
  beforeAll(async () => {
    system = await startTestSystem();
    // A client elsewhere, as the server would see it: the connection arrives over loopback (no other network here),
    // and the address the server reads is rewritten before any request on it is handled.
    system.running.server.prependListener('connection', (socket: Socket) => {
      if (pretendPeer) Object.defineProperty(socket, 'remoteAddress', { value: pretendPeer });
    });
  });
  afterAll(() => system?.stop());
  afterEach(() => {
    pretendPeer = undefined;
  });

  it('signs a session for a browser on this machine', async () => {
    await admin(system, 'POST', '/invitations', { email: 'victim@corp.example' });
    const signIn = await devSession(system);
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    const access = await api(system.url, 'GET', '/api/developer/v1/access', { token: signIn.body.data.token });
    expect(access.status).toBe(200);
    // The browser's own page may call it (same origin).
    const host = new URL(system.url).host;
    expect((await devSession(system, { Origin: `http://${host}` })).status).toBe(200);
  });

  it.each([
    ['a client on another machine', () => ({ peer: '192.0.2.10', headers: {} })],
    ['an IPv6 client on another machine', () => ({ peer: '2001:db8::7', headers: {} })],
    ['a request through a proxy (X-Forwarded-For)', () => ({ headers: { 'X-Forwarded-For': '203.0.113.9' } })],
    ['a request through a proxy (Forwarded)', () => ({ headers: { Forwarded: 'for=203.0.113.9' } })],
    ['a DNS-rebinding page (foreign Host)', () => ({ headers: { Host: 'attacker.example:8080' } })],
    ['another site in a local browser (foreign Origin)', () => ({ headers: { Origin: 'http://evil.example' } })],
  ])('refuses %s with 403 DEV_SESSION_LOCAL_ONLY', async (_name, probe) => {
    const { peer, headers } = probe() as { peer?: string; headers: Record<string, string> };
    pretendPeer = peer;
    // devSession opens a fresh connection each time, so that the rewritten peer applies to it.
    const signIn = await devSession(system, headers);
    expect(signIn.status).toBe(403);
    expect(signIn.body.error.code).toBe('DEV_SESSION_LOCAL_ONLY');
    expect(signIn.body.data).toBeUndefined();
  });

  it('is refused while the platform is disabled', async () => {
    expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
    try {
      // The edges cache the switch for at most a second.
      await until(async () => (await devSession(system)).status === 503, 'the switch to reach the gateway', 5000);
      const signIn = await devSession(system);
      expect(signIn.body.error.code).toBe('PLATFORM_DISABLED');
      expect(signIn.headers.get('retry-after')).not.toBeNull();
    } finally {
      await admin(system, 'PUT', '/platform', { enabled: true });
    }
    await until(async () => (await devSession(system)).status === 200, 'the switch back', 5000);
  });
});

describe('the embedded development default', () => {
  it('listens on loopback only unless HOST says otherwise', async () => {
    const system = await startTestSystem({ mode: 'embedded', host: null });
    try {
      expect((system.running.server.address() as AddressInfo).address).toBe('127.0.0.1');
    } finally {
      await system.stop();
    }
  }, 300_000);
});

describe('live decisions under a burst', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ env: { LIVE_CONNECTIONS_PER_DEVELOPER_MAX: '3' } });
  });
  afterAll(() => system?.stop());

  /** A raw graphql-transport-ws socket of `token`, acknowledged: what it received, refusals and its close. */
  async function rawSocket(token: string) {
    const socket = new WebSocket(`${system.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const state = {
      socket,
      /** Each refused subscription: its code and message. */
      errors: [] as Array<{ code: string; message: string }>,
      acknowledged: false,
      pongs: 0,
      closed: undefined as { code: number; reason: string } | undefined,
      subscribe(gameId: string, id: string) {
        socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: DECISIONS, variables: { gameId } } }));
      },
    };
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type === 'connection_ack') state.acknowledged = true;
      if (message.type === 'pong') state.pongs += 1;
      // A refused subscription: an `error` message (refused before it ran), or its resolver's error as a `next`
      // carrying `errors` (then `complete`).
      const error =
        message.type === 'error' ? message.payload?.[0] : message.type === 'next' ? message.payload?.errors?.[0] : null;
      if (error) state.errors.push({ code: error.extensions?.code, message: error.message });
    });
    socket.on('close', (code, reason) => {
      state.closed = { code, reason: String(reason) };
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } }));
    await until(() => state.acknowledged, 'connection_ack');
    return state;
  }

  /** The gateway's read checks so far: its DecisionStats calls to the ledger over NATS (metrics counter). */
  async function readChecks(): Promise<number> {
    const response = await api(system.url, 'GET', '/metrics');
    let calls = 0;
    for (const [, count] of String(response.body).matchAll(
      /^transport_requests_total\{[^}]*subject="rewards\.v1\.ledger\.DecisionStats"[^}]*\} (\d+)$/gm,
    )) {
      calls += Number(count);
    }
    return calls;
  }

  it('a burst of 5,000 subscribe messages on one socket is closed with 4029 TOO_MANY_SUBSCRIBE_MESSAGES, after at most 25 read checks, while another developer is served', async () => {
    const { token } = await invitedDeveloper(system);
    const game = await eventGame(system, token);
    const other = await invitedDeveloper(system);
    const otherGame = await eventGame(system, other.token);
    const checksBefore = await readChecks();
    const dropsBefore = await liveDrops(system.url, 'too_many_subscribe_messages');
    const attacker = await rawSocket(token);
    const burst = 5000;
    // Sent without waiting for any answer.
    for (let i = 0; i < burst; i++) attacker.subscribe(game.gameId, `s${i}`);
    // Meanwhile another developer reads over HTTP and subscribes over a socket of their own (a read check over NATS).
    const [read, otherLive] = await Promise.all([
      gql(system, other.token, '{ snapshot { organizations { id } } }'),
      liveSubscription(system.url, other.token, otherGame.gameId),
    ]);
    try {
      expect(read.status).toBe(200);
      expect(read.body.errors).toBeUndefined();
      expect(read.body.data.snapshot.organizations).toHaveLength(1);
      await until(() => attacker.closed !== undefined, 'the burst socket to be closed', 30_000);
      expect(attacker.closed).toEqual({ code: 4029, reason: 'TOO_MANY_SUBSCRIBE_MESSAGES' });
      // Only the bucket's messages ran at all (answered or not before the close); past the 25 slots none made a read
      // check, and once the socket closed, none started.
      expect(attacker.errors.length).toBeLessThanOrEqual(LIVE_LIMITS.subscribeMessagesBurst);
      expect(
        attacker.errors.filter((e) => e.code !== 'INVALID_REQUEST' && e.code !== 'DEVELOPER_ACCESS_UNAVAILABLE'),
      ).toEqual([]);
      // The attacker's subscriptions end with its socket; the other developer's stays, and delivers.
      await until(async () => (await liveSubscriptions(system.url)) === 1, "only the other developer's subscription");
      const checks = (await readChecks()) - checksBefore;
      expect(checks).toBeGreaterThanOrEqual(1);
      expect(checks).toBeLessThanOrEqual(LIVE_LIMITS.subscriptionsPerConnectionMax + 1);
      expect(await liveDrops(system.url, 'too_many_subscribe_messages')).toBeGreaterThan(dropsBefore);
      await postGameEvent(system.url, otherGame, gameEvent(otherGame));
      await until(() => otherLive.recorded.events.length === 1, "the other developer's decision");
      expect(otherLive.recorded.errors).toEqual([]);
      expect(otherLive.live.closed).toBeUndefined();
    } finally {
      await otherLive.live.dispose();
      attacker.socket.close();
    }
    await until(async () => (await liveSubscriptions(system.url)) === 0, 'the subscriptions to end');
  }, 120_000);

  it('a socket within the bound is unaffected: 25 subscriptions, then 25 more refused without a read check, still open', async () => {
    const { token } = await invitedDeveloper(system);
    const game = await eventGame(system, token);
    const checksBefore = await readChecks();
    const client = await rawSocket(token);
    const slots = LIVE_LIMITS.subscriptionsPerConnectionMax;
    // 50 subscribe messages in two bursts of 25: the bucket's whole allowance, not one more.
    expect(2 * slots).toBe(LIVE_LIMITS.subscribeMessagesBurst);
    for (let i = 0; i < slots; i++) client.subscribe(game.gameId, `a${i}`);
    // Each of them live, or refused by a read check that timed out on a loaded machine (503: not the limit's doing).
    await until(
      async () => client.errors.length + (await liveSubscriptions(system.url)) === slots,
      'the first 25 subscriptions',
      60_000,
    );
    expect(client.errors.filter((e) => e.code !== 'DEVELOPER_ACCESS_UNAVAILABLE')).toEqual([]);
    const refusedBefore = client.errors.length;
    const live = await liveSubscriptions(system.url);
    const checks = (await readChecks()) - checksBefore;
    expect(checks).toBeGreaterThanOrEqual(slots);
    // Every slot is taken (live, or given back by a failed check): the next 25 are refused at once, none checked.
    if (live === slots) {
      for (let i = 0; i < slots; i++) client.subscribe(game.gameId, `b${i}`);
      await until(() => client.errors.length === refusedBefore + slots, 'the 25 refusals');
      const refusals = client.errors.slice(refusedBefore);
      expect(new Set(refusals.map((e) => `${e.code}: ${e.message}`))).toEqual(
        new Set([`INVALID_REQUEST: A connection may hold at most ${slots} subscriptions.`]),
      );
      expect((await readChecks()) - checksBefore).toBe(checks);
    }
    // Still open and answering: a ping gets its pong, and the subscriptions stay.
    client.socket.send(JSON.stringify({ type: 'ping' }));
    await until(() => client.pongs === 1, 'the pong');
    expect(client.closed).toBeUndefined();
    expect(await liveSubscriptions(system.url)).toBe(live);
    client.socket.close();
    await until(async () => (await liveSubscriptions(system.url)) === 0, 'the subscriptions to end');
  }, 120_000);

  it('a console user switching games quickly stays connected, and the game shown last delivers', async () => {
    const { token } = await invitedDeveloper(system);
    const game = await eventGame(system, token);
    const secondGameId = (
      await ok(system, token, {
        type: 'createGame',
        projectId: game.projectId,
        name: 'Second',
        platform: 'web',
        maxPayoutCredits: 100_000,
        dailyPlayerCapCredits: 100,
      })
    ).id as string;
    // The web console's pattern (console/src/live.ts): one socket, one subscription per game page; opening another
    // game's page completes the last subscription and subscribes to the new game. Here a page every 50 ms, far faster
    // than anyone clicks, 60 times: more subscribe messages than the bucket's burst, at less than its rate on top.
    const dropsBefore = await liveDrops(system.url, 'too_many_subscribe_messages');
    const live = liveClient(system.url, { token });
    try {
      await until(() => live.connected, 'the connection');
      let current: Recorded | undefined;
      for (let page = 0; page < 60; page++) {
        current?.stop();
        current = subscribeDecisions(live, page % 2 === 0 ? secondGameId : game.gameId);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const shown = current as Recorded;
      // The last page (the event game) is live: the only subscription left on the gateway.
      await until(async () => (await liveSubscriptions(system.url)) === 1, 'the last page to be live', 30_000);
      await postGameEvent(system.url, game, gameEvent(game));
      await until(() => shown.events.length === 1, 'the decision on the last page');
      expect(shown.errors).toEqual([]);
      expect(live.closed).toBeUndefined();
      expect(await liveDrops(system.url, 'too_many_subscribe_messages')).toBe(dropsBefore);
    } finally {
      await live.dispose();
    }
    await until(async () => (await liveSubscriptions(system.url)) === 0, 'the subscriptions to end');
  }, 120_000);

  it('one developer holds at most LIVE_CONNECTIONS_PER_DEVELOPER_MAX sockets; one more closes with 4029', async () => {
    const { token } = await invitedDeveloper(system);
    const first = [
      liveClient(system.url, { token }),
      liveClient(system.url, { token }),
      liveClient(system.url, { token }),
    ];
    try {
      await until(() => first.every((c) => c.connected), 'three connections');
      const fourth = liveClient(system.url, { token });
      await until(() => fourth.closed !== undefined, 'the fourth to be closed');
      expect(fourth.closed).toEqual({ code: 4029, reason: 'TOO_MANY_CONNECTIONS' });
      expect(fourth.connected).toBe(false);
      // Another developer is not affected, and a closed socket frees its place.
      const other = liveClient(system.url, { token: (await invitedDeveloper(system)).token });
      await until(() => other.connected, 'another developer');
      await other.dispose();
      await first[0]?.dispose();
      await until(() => first[0]?.closed !== undefined, 'the first to close');
      const again = liveClient(system.url, { token });
      await until(() => again.connected || again.closed !== undefined, 'a new connection');
      expect(again.connected).toBe(true);
      await again.dispose();
    } finally {
      for (const client of first) await client.dispose();
    }
  });
});

describe('headers', () => {
  let system: TestSystem;
  let proxied: TestSystem;
  beforeAll(async () => {
    [system, proxied] = await Promise.all([startTestSystem(), startTestSystem({ env: { TRUST_PROXY: 'true' } })]);
  });
  afterAll(async () => {
    await system?.stop();
    await proxied?.stop();
  });

  it('every response carries X-Content-Type-Options: nosniff', async () => {
    for (const path of ['/console/config.json', '/healthz', '/openapi.json', '/api/developer/v1/access', '/nowhere']) {
      const response = await api(system.url, 'GET', path);
      expect([path, response.headers.get('x-content-type-options')]).toEqual([path, 'nosniff']);
    }
  });

  it('X-Forwarded-Host does not make a foreign Origin same-origin unless the proxy is trusted', async () => {
    const forged = { Origin: 'http://evil.example', 'X-Forwarded-Host': 'evil.example' };
    const { token } = await invitedDeveloper(system);
    const direct = await api(system.url, 'GET', '/api/developer/v1/access', { token, headers: forged });
    expect(direct.status).toBe(403);
    expect(direct.body.error.code).toBe('INVALID_SESSION_ORIGIN');
    // Behind a trusted proxy the forwarded host is the request's own, as the proxy says.
    const behind = await invitedDeveloper(proxied);
    const viaProxy = await api(proxied.url, 'GET', '/api/developer/v1/access', {
      token: behind.token,
      headers: forged,
    });
    expect(viaProxy.status).toBe(200);
  });

  it('the WebSocket upgrade applies the same rule', async () => {
    const { token } = await invitedDeveloper(system);
    const forged = new WebSocket(`${system.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', {
      headers: { Origin: 'http://evil.example', 'X-Forwarded-Host': 'evil.example' },
    });
    const closed = new Promise<number>((resolve) => forged.on('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => forged.once('open', resolve).once('error', reject));
    forged.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } }));
    expect(await closed).toBe(4403);
  });
});
