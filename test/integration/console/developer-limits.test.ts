// Probes by a developer holding a valid account, kept closed (CONTRACT section 11.1 "Developer API
// limits", gateway/src/auth/developer-limits.ts), on real PostgreSQL and NATS:
// - one token flooding `{access}` gets 429 TOO_MANY_REQUESTS with Retry-After and the RateLimit fields, each refusal
//   made without asking the identity service, while another developer is served;
// - one developer flooding reads (REST and GraphQL) is refused, another developer's reads are not;
// - concurrent simulateRule past one per developer, or two per gateway process, are refused with 429, not queued;
// - credentials are checked before they are charged: an expired, malformed or revoked token flooded by someone else
//   is refused 401/403 every time, and the live session of the developer it names keeps its bucket (200, not 429);
// - reconnects after a close are throttled: connection attempts past the bucket close with 4029 TOO_MANY_REQUESTS
//   without an admission;
// - the defaults refuse neither the web console's page loads nor the k6 console scenario at its documented rate;
// - no "Did you mean" in GraphQL errors while introspection is off; /metrics leaves the public port of an all-in-one
//   process that listens beyond loopback.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { REFUSALS_BEFORE_HOLD } from '../../../gateway/src/auth/developer-limits.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../../services/identity-admission/src/sessions/token-verifier.ts';
import { addMember, CONSOLE, developer, RECORDS, subjectOf, world } from '../../support/console.ts';
import { programMetric } from '../../support/ingest.ts';
import { DECISIONS, liveClient, liveSubscriptions, subscribeDecisions, until } from '../../support/live.ts';
import {
  type ApiResponse,
  admin,
  api,
  developerToken,
  invitedDeveloper,
  startTestSystem,
  type TestSystem,
} from '../../support/system.ts';
import { gql, transportRequests } from '../graphql/helpers.ts';
import { simulate } from '../graphql/simulate-helpers.ts';

const ACCESS = '/api/developer/v1/access';

/** The developer limits at their defaults (the test systems lift them otherwise: test/support/system.ts). */
const DEFAULT_LIMITS = {
  DEVELOPER_RATE_PER_SECOND: undefined,
  DEVELOPER_BURST: undefined,
  DEVELOPER_IN_FLIGHT_MAX: undefined,
};

/** Runs `count` calls of `call`, at most `concurrency` at once; the answers in the order they were started. */
async function flood<T>(count: number, concurrency: number, call: () => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await call();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** The gateway's developer admissions so far (its AdmitDeveloper calls to identity-admission over NATS). */
async function admissions(system: TestSystem): Promise<number> {
  let calls = 0;
  for (const [subject, count] of await transportRequests(system)) {
    if (subject.endsWith('.AdmitDeveloper')) calls += count;
  }
  return calls;
}

function expectTooManyRequests(response: ApiResponse, burst: number, ratePerSecond: number): void {
  expect(response.status).toBe(429);
  expect(response.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  expect(response.headers.get('ratelimit-policy')).toBe(`"developer";q=${burst};w=${Math.ceil(burst / ratePerSecond)}`);
  expect(response.headers.get('ratelimit')).toMatch(/^"developer";r=[0-9]+;t=[0-9]+$/);
}

describe('developer limits: a small bucket (1 token a second, bursts of 20)', () => {
  const RATE = 1;
  const BURST = 20;
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({
      env: { DEVELOPER_RATE_PER_SECOND: String(RATE), DEVELOPER_BURST: String(BURST), DEVELOPER_IN_FLIGHT_MAX: '16' },
    });
  });
  afterAll(() => system?.stop());

  it('one token flooding {access} gets 429 with Retry-After, refused without an admission; another developer is served', async () => {
    const attacker = await invitedDeveloper(system);
    const other = await invitedDeveloper(system);
    // Admitted once: from now on the gateway knows whose bucket the token spends.
    const first = await api(system.url, 'GET', ACCESS, { token: attacker.token });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe(`"developer";q=${BURST};w=${BURST / RATE}`);
    expect(first.headers.get('ratelimit')).toMatch(/^"developer";r=19;t=[0-9]+$/);
    const before = await admissions(system);
    const requests = 3 * BURST;
    const answers = await flood(requests, 8, () => api(system.url, 'GET', ACCESS, { token: attacker.token }));
    const served = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status !== 200);
    expect(served.length + refused.length).toBe(requests);
    // At most the bucket's 19 tokens left plus one a second came back: the rest is refused.
    expect(refused.length).toBeGreaterThan(0);
    for (const response of refused) {
      expectTooManyRequests(response, BURST, RATE);
      expect(response.body).toEqual({ error: { code: 'TOO_MANY_REQUESTS', message: expect.any(String) } });
      expect(response.headers.get('ratelimit')).toMatch(/^"developer";r=0;t=[0-9]+$/);
    }
    // Each admission served a request: no refusal asked the identity service.
    expect((await admissions(system)) - before).toBe(served.length);
    // Another developer has a bucket of their own.
    const otherAccess = await api(system.url, 'GET', ACCESS, { token: other.token });
    expect(otherAccess.status).toBe(200);
    expect(otherAccess.body.data.email).toBe(other.email);
  }, 60_000);

  /**
   * Floods `attack` (3 buckets' worth, 8 at once) while the developer's live session reads {access} 7 times, one
   * after another, and once after it (8 of its 20 tokens): the flood's statuses, and the live session's.
   */
  async function floodBeside(attack: string, live: string): Promise<{ flood: number[]; live: number[] }> {
    const flooding = flood(3 * BURST, 8, () => api(system.url, 'GET', ACCESS, { token: attack }));
    const liveAnswers: ApiResponse[] = [];
    for (let i = 0; i < 7; i++) liveAnswers.push(await api(system.url, 'GET', ACCESS, { token: live }));
    // And after the flood, once more: nothing of it was charged to the developer.
    const answers = await flooding;
    liveAnswers.push(await api(system.url, 'GET', ACCESS, { token: live }));
    return { flood: answers.map((r) => r.status), live: liveAnswers.map((r) => r.status) };
  }

  it("an expired token's flood is refused 401, before it is charged: the developer's live session is served", async () => {
    const { email } = await invitedDeveloper(system);
    // Admitted while valid (the gateway remembers it), then expired (past the identity service's clock tolerance).
    const expiring = await developerToken(system, email, { expiresIn: '1s' });
    expect((await api(system.url, 'GET', ACCESS, { token: expiring })).status).toBe(200);
    const live = await developerToken(system, email);
    // (Not polled: within the tolerance an expired token is still admitted, and its requests are the developer's.)
    await new Promise((resolve) => setTimeout(resolve, 1000 + (CLOCK_TOLERANCE_SECONDS + 1) * 1000));
    const { flood: refused, live: served } = await floodBeside(expiring, live);
    expect(refused).toEqual(refused.map(() => 401));
    expect(served).toEqual(served.map(() => 200));
    // A malformed token likewise.
    const malformed = await floodBeside('not.a.token', live);
    expect(malformed.flood).toEqual(malformed.flood.map(() => 401));
    expect(malformed.live).toEqual(malformed.live.map(() => 200));
  }, 60_000);

  it("a revoked token's flood is refused 403, before it is charged: the same developer's live session is served", async () => {
    // A developer admitted under one e-mail, whose invitation is then revoked, and who is invited again under
    // another: the old session's tokens are refused, the new ones admitted, both for the same subject.
    const oldEmail = `dev-${randomUUID().slice(0, 8)}@example.com`;
    const invitation = await admin(system, 'POST', '/invitations', { email: oldEmail });
    expect(invitation.status).toBe(200);
    const sub = subjectOf(oldEmail);
    const revoked = await developerToken(system, oldEmail);
    expect((await api(system.url, 'GET', ACCESS, { token: revoked })).status).toBe(200);
    expect((await admin(system, 'POST', `/invitations/${invitation.body.data.id}/revoke`)).status).toBe(200);
    const newEmail = `dev-${randomUUID().slice(0, 8)}@example.com`;
    expect((await admin(system, 'POST', '/invitations', { email: newEmail })).status).toBe(200);
    const live = await developerToken(system, newEmail, { sub });
    const first = await api(system.url, 'GET', ACCESS, { token: live });
    expect(first.status).toBe(200);
    expect(first.body.data.email).toBe(newEmail);
    const { flood: refused, live: served } = await floodBeside(revoked, live);
    expect(refused).toEqual(refused.map(() => 403));
    expect(served).toEqual(served.map(() => 200));
  }, 60_000);

  it('a developer that keeps sending past its Retry-After gets its refusals later (held), and is still refused', async () => {
    const attacker = await invitedDeveloper(system);
    expect((await api(system.url, 'GET', ACCESS, { token: attacker.token })).status).toBe(200);
    // The bucket is spent: what follows is refused, and a client that does not wait is held.
    await flood(BURST, 4, () => api(system.url, 'GET', ACCESS, { token: attacker.token }));
    const heldBefore = await programMetric(system.url, 'developer_limit_refusals_held_total');
    const answers = await flood(40, 8, () => api(system.url, 'GET', ACCESS, { token: attacker.token }));
    const refused = answers.filter((r) => r.status === 429);
    // At one token a second a few may be served; everything else is refused with the usual answer.
    expect(refused.length).toBeGreaterThan(30);
    for (const response of refused) expectTooManyRequests(response, BURST, RATE);
    // Past the first REFUSALS_BEFORE_HOLD within a Retry-After, refusals waited before they were answered (how many
    // depends on how many Retry-After periods the flood spans: gateway/src/auth/developer-limits.test.ts counts them).
    const held = (await programMetric(system.url, 'developer_limit_refusals_held_total')) - heldBefore;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(refused.length - REFUSALS_BEFORE_HOLD);
  }, 60_000);

  it("one developer flooding reads (REST and GraphQL) is refused; another developer's reads are not", async () => {
    const attacker = await invitedDeveloper(system);
    const victim = await invitedDeveloper(system);
    const attackerWorld = await world(system, attacker.token);
    const snapshotQuery = '{ snapshot { organizations { id } } }';
    const reads = [
      () => api(system.url, 'GET', CONSOLE, { token: attacker.token }),
      () => gql(system, attacker.token, snapshotQuery) as Promise<ApiResponse>,
      () => api(system.url, 'GET', `${RECORDS}?kind=events&gameId=${attackerWorld.gameId}`, { token: attacker.token }),
    ];
    let round = 0;
    const flooding = flood(3 * BURST, 6, () => (reads[round++ % reads.length] as () => Promise<ApiResponse>)());
    // Meanwhile the victim reads the same things (3 rounds of 2 + 2 tokens: within the victim's own bucket).
    const victimAnswers: ApiResponse[] = [];
    for (let i = 0; i < 3; i++) {
      victimAnswers.push(
        ...(await Promise.all([
          api(system.url, 'GET', CONSOLE, { token: victim.token }),
          gql(system, victim.token, snapshotQuery) as Promise<ApiResponse>,
        ])),
      );
    }
    const answers = await flooding;
    expect(victimAnswers.map((r) => [r.status, r.body.errors])).toEqual(victimAnswers.map(() => [200, undefined]));
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const response of refused) {
      expectTooManyRequests(response, BURST, RATE);
      if (response.body.error) {
        expect(response.body).toEqual({ error: { code: 'TOO_MANY_REQUESTS', message: expect.any(String) } });
      } else {
        // GraphQL: no data, one error with REST's code and status.
        expect(response.body).toEqual({
          errors: [{ message: expect.any(String), extensions: { code: 'TOO_MANY_REQUESTS', status: 429 } }],
        });
      }
    }
    expect(refused.some((r) => r.body.errors)).toBe(true);
    expect(refused.some((r) => r.body.error)).toBe(true);
  }, 120_000);

  it('a GraphQL operation pays for its expensive fields before any of them runs', async () => {
    const { token } = await invitedDeveloper(system);
    // Five record pages and the snapshot: 1 + 5 x 2 + 2 = 13 of the 20 tokens; the same again is refused whole.
    // (The game is no one's: each page answers not_found, after the request paid for it.)
    const gameId = randomUUID();
    const pages = [1, 2, 3, 4, 5].map((n) => `p${n}: records(kind: events, gameId: "${gameId}") { kind }`).join(' ');
    const query = `{ snapshot { organizations { id } } ${pages} }`;
    const first = await gql(system, token, query);
    expect(first.status).toBe(200);
    expect(first.body.data.snapshot).toEqual({ organizations: [] });
    expect(new Set(first.body.errors?.map((e: any) => e.extensions.code))).toEqual(new Set(['not_found']));
    // 7 left, and what came back since (a token a second).
    expect(first.headers.get('ratelimit')).toMatch(/^"developer";r=(7|8|9);t=[0-9]+$/);
    const second = await gql(system, token, query);
    expectTooManyRequests(second as ApiResponse, BURST, RATE);
    expect(second.body).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'TOO_MANY_REQUESTS', status: 429 } }],
    });
    // A cheap request still fits in what is left.
    expect((await gql(system, token, '{ access { email } }')).status).toBe(200);
  });

  it('reconnects after a close are throttled: attempts past the bucket close with 4029 TOO_MANY_REQUESTS, no admission', async () => {
    const attacker = await invitedDeveloper(system);
    const other = await invitedDeveloper(system);
    const outcomes: Array<{ code: number; reason: string } | 'connected'> = [];
    let before = 0;
    let admittedAfter = 0;
    for (let attempt = 0; attempt < 2 * BURST; attempt++) {
      const client = liveClient(system.url, { token: attacker.token });
      await until(() => client.connected || client.closed !== undefined, 'the connection attempt to settle', 15_000);
      outcomes.push(client.connected ? 'connected' : (client.closed as { code: number; reason: string }));
      await client.dispose();
      // Counted from the first attempt on, once the token is known to the gateway.
      if (attempt === 0) before = await admissions(system);
      else if (client.connected) admittedAfter += 1;
    }
    const refused = outcomes.filter((o) => o !== 'connected');
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((o) => JSON.stringify(o)))).toEqual(
      new Set([JSON.stringify({ code: 4029, reason: 'TOO_MANY_REQUESTS' })]),
    );
    // Only the attempts that were let through were admitted.
    expect((await admissions(system)) - before).toBe(admittedAfter);
    // Another developer connects.
    const otherClient = liveClient(system.url, { token: other.token });
    try {
      await until(() => otherClient.connected || otherClient.closed !== undefined, "the other developer's connection");
      expect(otherClient.connected).toBe(true);
    } finally {
      await otherClient.dispose();
    }
  }, 120_000);
});

/** Backends of the test database waiting for a lock (the dry-runs held behind the test's lock). */
async function waitingOnLock(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
  );
  return rows[0]?.n ?? 0;
}

describe('rule dry-runs: one per developer, two per gateway process, refused past them', () => {
  let system: TestSystem;
  beforeAll(async () => {
    // The gateway's bound at two (its default is four), and the ledger's above it: the gateway's refusal is tested.
    system = await startTestSystem({
      env: { ...DEFAULT_LIMITS, SIMULATE_RULE_IN_FLIGHT_MAX: '2', SIMULATE_RULE_LEDGER_MAX: '10' },
    });
  });
  afterAll(() => system?.stop());

  it('a second dry-run of one developer, and a third on the gateway, get 429 while two run; none is queued', async () => {
    const developers = await Promise.all([1, 2, 3].map(() => invitedDeveloper(system)));
    const games = await Promise.all(developers.map((d) => world(system, d.token)));
    const input = (index: number) => ({
      gameId: games[index]?.gameId,
      eventType: 'level_complete',
      rewardCredits: 5,
      dailyPlayerCapCredits: 100,
      active: true,
      from: new Date(Date.now() - 86_400_000).toISOString(),
      to: new Date().toISOString(),
    });
    // The dry-runs read the game's stored decisions: held behind a lock of the events table until the test lets go.
    const lock = new pg.Client({ connectionString: system.databaseUrl });
    await lock.connect();
    let held: Array<Promise<Awaited<ReturnType<typeof simulate>>>> = [];
    try {
      await lock.query('begin');
      await lock.query('lock table ledger.events in access exclusive mode');
      const [a, b, c] = developers as unknown as [{ token: string }, { token: string }, { token: string }];
      held = [simulate(system, a.token, input(0))];
      await until(async () => (await waitingOnLock(lock)) >= 1, "the first developer's dry-run to be running");
      // The same developer again: refused at once (it would otherwise wait behind the first).
      const second = await simulate(system, a.token, input(0));
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(second.body).toEqual({
        errors: [
          { message: expect.stringMatching(/simulateRule/), extensions: { code: 'TOO_MANY_REQUESTS', status: 429 } },
        ],
      });
      // Another developer takes the gateway's second slot; a third developer is refused: the gateway is full.
      held.push(simulate(system, b.token, input(1)));
      await until(async () => (await waitingOnLock(lock)) >= 2, "the second developer's dry-run to be running");
      const third = await simulate(system, c.token, input(2));
      expect(third.status).toBe(429);
      expect(third.body.errors?.[0]?.extensions).toEqual({ code: 'TOO_MANY_REQUESTS', status: 429 });
      // Meanwhile ordinary requests of the refused developers are served.
      expect((await api(system.url, 'GET', ACCESS, { token: c.token })).status).toBe(200);
    } finally {
      await lock.query('rollback').catch(() => undefined);
      await lock.end();
    }
    for (const answer of await Promise.all(held)) {
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data.simulateRule.considered).toBe(0);
    }
    // The slots are given back with the answers.
    const again = await simulate(system, (developers[2] as { token: string }).token, input(2));
    expect(again.status).toBe(200);
    expect(again.body.errors).toBeUndefined();
  }, 120_000);
});

describe("rule dry-runs: one organization's developers never take another organization's slot", () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ env: DEFAULT_LIMITS });
  });
  afterAll(() => system?.stop());

  it("a second dry-run of one organization gets 429; another organization's runs beside the first", async () => {
    const owner = await developer(system);
    const colleague = await developer(system);
    const outsider = await developer(system);
    const ours = await world(system, owner.token);
    await addMember(system, owner.token, ours.organizationId, colleague, 'admin');
    const theirs = await world(system, outsider.token);
    const input = (gameId: string) => ({
      gameId,
      eventType: 'level_complete',
      rewardCredits: 5,
      dailyPlayerCapCredits: 100,
      active: true,
      from: new Date(Date.now() - 86_400_000).toISOString(),
      to: new Date().toISOString(),
    });
    const lock = new pg.Client({ connectionString: system.databaseUrl });
    await lock.connect();
    let held: Array<Promise<Awaited<ReturnType<typeof simulate>>>> = [];
    try {
      await lock.query('begin');
      await lock.query('lock table ledger.events in access exclusive mode');
      held = [simulate(system, owner.token, input(ours.gameId))];
      await until(async () => (await waitingOnLock(lock)) >= 1, "the organization's first dry-run to be running");
      // The organization's second developer: refused by the ledger's bound per organization.
      const second = await simulate(system, colleague.token, input(ours.gameId));
      expect(second.body.errors?.[0]?.extensions).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
      expect(second.body.errors?.[0]?.message).toMatch(/organization/);
      // Another organization's dry-run is not refused: it runs beside the first.
      held.push(simulate(system, outsider.token, input(theirs.gameId)));
      await until(async () => (await waitingOnLock(lock)) >= 2, "the other organization's dry-run to be running");
    } finally {
      await lock.query('rollback').catch(() => undefined);
      await lock.end();
    }
    for (const answer of await Promise.all(held)) {
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data.simulateRule.considered).toBe(0);
    }
  }, 120_000);
});

describe('the defaults', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ env: DEFAULT_LIMITS });
  });
  afterAll(() => system?.stop());

  it("refuse none of the web console's page loads: two at once (two tabs), each its queries together and a subscription", async () => {
    const { token } = await invitedDeveloper(system);
    const w = await world(system, token);
    const now = Date.now();
    const stats = `decisionStats(gameId: "${w.gameId}", from: "${new Date(now - 3_600_000).toISOString()}", to: "${new Date(now).toISOString()}", bucket: minute) { gameId }`;
    // What console/src sends when a game's page opens: the snapshot, the newest decisions and players, the day's
    // figures and the chart, and the live subscription (one socket per page).
    const pageLoad = () => [
      gql(system, token, '{ snapshot { organizations { id } games { id } } }'),
      gql(system, token, `{ records(kind: events, gameId: "${w.gameId}", first: 20) { kind } }`),
      gql(system, token, `{ records(kind: players, gameId: "${w.gameId}", first: 20) { kind } }`),
      gql(system, token, `{ ${stats} }`),
      gql(system, token, `{ chart: ${stats} }`),
    ];
    const clients = [1, 2].map(() => liveClient(system.url, { token }));
    try {
      const answers = await Promise.all([pageLoad(), pageLoad()].flat());
      for (const answer of answers) {
        expect([answer.status, answer.body.errors]).toEqual([200, undefined]);
      }
      const live = clients.map((client) => subscribeDecisions(client, w.gameId, DECISIONS));
      await until(async () => (await liveSubscriptions(system.url)) === 2, 'the two pages to be live', 15_000);
      expect(live.flatMap((l) => l.errors)).toEqual([]);
    } finally {
      for (const client of clients) await client.dispose();
    }
  }, 60_000);

  it('refuse nothing of the k6 console scenario at its documented full rate (10 iterations a second)', async () => {
    const { token } = await invitedDeveloper(system);
    const w = await world(system, token);
    // load/ingest.js consoleRead: every other iteration the snapshot, else a records page of 50 and the next one.
    const iteration = async (index: number) => {
      if (index % 2 === 0) return [await api(system.url, 'GET', CONSOLE, { token })];
      const url = `${RECORDS}?kind=${index % 4 === 1 ? 'events' : 'players'}&gameId=${w.gameId}&limit=50`;
      return [await api(system.url, 'GET', url, { token }), await api(system.url, 'GET', url, { token })];
    };
    // Open model, as k6's constant-arrival-rate: one iteration started every 100 ms for 3 s, whatever the answers.
    const started: Array<Promise<ApiResponse[]>> = [];
    for (let index = 0; index < 30; index++) {
      started.push(iteration(index));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const statuses = (await Promise.all(started)).flat().map((r) => r.status);
    expect(statuses).toEqual(statuses.map(() => 200));
  }, 60_000);

  it('hide "Did you mean" suggestions in GraphQL errors while introspection is off', async () => {
    const { token } = await invitedDeveloper(system);
    const gameId = randomUUID();
    const window = `from: "2026-01-01T00:00:00Z", to: "2026-01-01T01:00:00Z"`;
    const probes = [
      // A field's name mistyped (validation).
      gql(system, token, '{ snapshott { organizations { id } } }'),
      // An enum value mistyped, as a literal (validation) and as a variable (coercion).
      gql(system, token, `{ decisionStats(gameId: "${gameId}", ${window}, bucket: minutes) { gameId } }`),
      gql(
        system,
        token,
        `query($bucket: StatsBucket!) { decisionStats(gameId: "${gameId}", ${window}, bucket: $bucket) { gameId } }`,
        { bucket: 'minutes' },
      ),
      gql(system, token, `{ records(kind: event, gameId: "${gameId}") { kind } }`),
    ];
    for (const answer of await Promise.all(probes)) {
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.length).toBeGreaterThan(0);
      for (const error of answer.body.errors ?? []) expect(error.message).not.toMatch(/did you mean/i);
    }
  });
});

describe('/metrics of the all-in-one process', () => {
  it('leaves the public port for a port of its own with METRICS_PORT (the image sets it)', async () => {
    const system = await startTestSystem({ host: '0.0.0.0', env: { METRICS_PORT: '0' } });
    try {
      expect((system.running.server.address() as AddressInfo).address).toBe('0.0.0.0');
      const onPublicPort = await api(system.url, 'GET', '/metrics');
      expect(onPublicPort.status).toBe(404);
      expect(system.running.metricsUrl).not.toBe(`${system.url}/metrics`);
      const metrics = await fetch(system.running.metricsUrl);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^http_requests_total\{/m);
    } finally {
      await system.stop();
    }
  });

  it('stays on the public port without METRICS_PORT (CONTRACT section 1: every program serves it)', async () => {
    const system = await startTestSystem({ host: '0.0.0.0' });
    try {
      expect(system.running.metricsUrl).toBe(`${system.url}/metrics`);
      expect((await api(system.url, 'GET', '/metrics')).status).toBe(200);
    } finally {
      await system.stop();
    }
  });
});
