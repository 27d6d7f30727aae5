// Probes of an attacker holding a valid account, or only reaching the port (issue 25), kept closed:
// - the development sign-in (POST /console/dev-session) exists only where the development identity provider is
//   trusted, answers only a browser on the server's own machine, and honours the platform switch;
// - a burst of subscribe messages on one socket gets at most the per-connection limit, and one developer may hold
//   at most LIVE_CONNECTIONS_PER_DEVELOPER_MAX sockets (close 4029);
// - every response says nosniff; forwarded headers count only behind a trusted proxy (TRUST_PROXY).
import { request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket from 'ws';
import { admin, api, invitedDeveloper, startTestSystem, type TestSystem } from '../../support/system.ts';
import { DECISIONS, eventGame, liveClient, liveSubscriptions, until } from '../graphql/live-helpers.ts';

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

  it('a burst of 5,000 subscribe messages on one socket gets 25 subscriptions', async () => {
    const { token } = await invitedDeveloper(system);
    const game = await eventGame(system, token);
    const socket = new WebSocket(`${system.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    /** Each refused subscription: its code and message. */
    const errors: Array<{ code: string; message: string }> = [];
    let acknowledged = false;
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type === 'connection_ack') acknowledged = true;
      // A refused subscription: its resolver's error as a `next` carrying `errors` (then `complete`), or an `error`.
      const error =
        message.type === 'error' ? message.payload?.[0] : message.type === 'next' ? message.payload?.errors?.[0] : null;
      if (error) errors.push({ code: error.extensions?.code, message: error.message });
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } }));
    await until(() => acknowledged, 'connection_ack');
    const burst = 5000;
    // Sent without waiting for any answer.
    for (let i = 0; i < burst; i++) {
      socket.send(
        JSON.stringify({
          id: `s${i}`,
          type: 'subscribe',
          payload: { query: DECISIONS, variables: { gameId: game.gameId } },
        }),
      );
    }
    // Every subscription beyond the 25 is refused for the limit, at once (no ledger read for it). The 25 that took a
    // slot are live, unless the machine is so loaded that a read check timed out (503 DEVELOPER_ACCESS_UNAVAILABLE):
    // that is not the limit's failure, so it is tolerated here; such a subscription gives its slot back, and a
    // message of the burst still arriving may take it. So: every message answered once (live or refused), never more
    // than 25 live, and the limit refuses only while 25 slots are taken (live + failed checks >= 25).
    const overLimit = () => errors.filter((e) => /at most 25 subscriptions/.test(e.message));
    const settled = async () => errors.length + (await liveSubscriptions(system.url)) >= burst;
    await until(settled, 'the refusals and the 25 subscriptions', 90_000).catch(async (error: Error) => {
      const codes = [...new Set(errors.map((e) => `${e.code}: ${e.message}`))].slice(0, 5);
      throw new Error(
        `${error.message}: ${errors.length} refusals (${overLimit().length} for the limit; ${codes.join(' | ')}), ` +
          `${await liveSubscriptions(system.url)} live, socket state ${socket.readyState}`,
      );
    });
    // Nothing more arrives later.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const live = await liveSubscriptions(system.url);
    const others = errors.filter((e) => !/at most 25 subscriptions/.test(e.message));
    expect(others.filter((e) => e.code !== 'DEVELOPER_ACCESS_UNAVAILABLE')).toEqual([]);
    expect(new Set(overLimit().map((e) => e.code))).toEqual(new Set(['INVALID_REQUEST']));
    expect(live + errors.length).toBe(burst);
    expect(live).toBeLessThanOrEqual(25);
    expect(live + others.length).toBeGreaterThanOrEqual(25);
    // On a machine where every read check answered in time: exactly 25 live and every other message refused.
    if (others.length === 0) expect(overLimit()).toHaveLength(burst - 25);
    socket.close();
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
