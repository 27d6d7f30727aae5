// Fair ingest over HTTP on real PostgreSQL and NATS: one game's flood does not take another game's
// share. Game A's transactions are held (the test locks A's game row), so A's flood piles up; game B's events must
// still be decided meanwhile. Before the fix, A's waiting events were first in line at the edge and filled every
// request slot behind the held one, so B waited for A's whole flood. Counting, no timing: B's decisions are all
// answered while none of A's has been.

import { Agent, request as httpRequest } from 'node:http';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { EDGE_KEY_IN_FLIGHT_MAX_DEFAULT } from '../../../services/ingest/src/routes/event-batcher.ts';
import { FLOOD_PACER_DEFAULTS } from '../../../services/ingest/src/routes/flood-pacer.ts';
import { sql } from '../../support/database.ts';
import { EVENTS_PATH, eventBody, expectDecision, postEvent, programMetric, until } from '../../support/ingest.ts';
import { createEventWorld, createKey, createProject, gameState, holdGameRow } from '../../support/ledger-fixtures.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

/** Calls of ledger.record_events waiting for a lock in the database (a game row a test holds). */
async function callsWaitingForALock(db: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    db,
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like '%record_events%'`,
  );
  return row!.n;
}

const A_EVENTS = 300;
const B_EVENTS = 20;
const KEY_IN_FLIGHT_MAX = 4;

describe('fair ingest: a flooding game leaves other games their share', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({
      env: {
        EVENT_RATE_LIMIT_PER_MINUTE: '100000',
        // More request slots than A may fill (its events could leave one per request): the bound, not the slots, is
        // what holds A back.
        INGEST_EVENT_IN_FLIGHT_MAX: String(KEY_IN_FLIGHT_MAX + 1),
        INGEST_EVENT_KEY_IN_FLIGHT_MAX: String(KEY_IN_FLIGHT_MAX),
        // One key per ledger call: B's call does not wait for A's held one to end (the group-commit rule), so what
        // this test sees is the edge's share alone.
        EVENT_GROUP_KEYS_MAX: '1',
        // A's held request must not time out while the test counts.
        NATS_EVENT_REQUEST_TIMEOUT_MS: '60000',
      },
    });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  const metric = (name: string) => programMetric(system.url, name);

  it("game B's events are decided while game A's flood waits; then every event of A is decided too", async () => {
    const a = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const { release } = await holdGameRow(db, a.game.gameId);
    try {
      const aAnswered: boolean[] = [];
      const flood = Array.from({ length: A_EVENTS }, (_, i) =>
        postEvent(system.url, a.key.value, eventBody(a)).then((response) => {
          aAnswered[i] = true;
          return response;
        }),
      );
      // A's first events are in the database, waiting for A's game row; the rest wait at the edge, beyond A's bound:
      // as many again in the batcher's queue (the key's next call, read and ready), the others unread in front of
      // the app (INGEST_EVENT_KEY_REQUESTS_MAX, twice the in-flight bound by default).
      await until("A's flood waits at the edge", async () => {
        return (await metric('ingest_event_requests_waiting')) === A_EVENTS - 2 * KEY_IN_FLIGHT_MAX;
      });
      expect(await metric('ingest_event_queue_depth')).toBe(KEY_IN_FLIGHT_MAX);

      const bAnswers = await Promise.all(
        Array.from({ length: B_EVENTS }, () => postEvent(system.url, b.key.value, eventBody(b))),
      );
      const bDecisions = bAnswers.map(expectDecision);
      expect(bDecisions.filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(B_EVENTS);
      // While B was decided, nothing of A was: its flood is still held, all of it.
      expect(aAnswered.filter(Boolean)).toHaveLength(0);
      expect((await gameState(db, a.game.gameId)).decisions).toBe(0);
      expect((await gameState(db, b.game.gameId)).decisions).toBe(B_EVENTS);
      // At most KEY_IN_FLIGHT_MAX of A's events ever left the edge while its game was held.
      expect(await callsWaitingForALock(db)).toBe(1);
      expect(await metric('ingest_event_queue_depth')).toBe(KEY_IN_FLIGHT_MAX);
      expect(await metric('ingest_event_requests_waiting')).toBe(A_EVENTS - 2 * KEY_IN_FLIGHT_MAX);

      await release();
      const aDecisions = (await Promise.all(flood)).map(expectDecision);
      expect(aDecisions.filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(A_EVENTS);
      expect(await gameState(db, a.game.gameId)).toMatchObject({ decisions: A_EVENTS, spentCredits: A_EVENTS });
    } finally {
      await release();
    }
  });
  // The bounds are per game once the edge knows the game of a credential (a first decision of each key teaches it:
  // services/ingest/src/routes/key-tenants.ts), so a flood spread over four keys of one game holds what one key's
  // would: 2 x KEY_IN_FLIGHT_MAX requests in the app, not four times that.
  it("a flood through four keys of one game gets one game's share, not four", async () => {
    const a = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const keys = [a.key, ...(await Promise.all([1, 2, 3].map(() => createKey(db, a.game))))];
    for (const key of keys) expectDecision(await postEvent(system.url, key.value, eventBody(a)));
    const { release } = await holdGameRow(db, a.game.gameId);
    try {
      const flood = Array.from({ length: A_EVENTS }, (_, i) =>
        postEvent(system.url, keys[i % keys.length]!.value, eventBody(a)),
      );
      await until("A's flood waits at the edge, one game's share in the app", async () => {
        return (await metric('ingest_event_requests_waiting')) === A_EVENTS - 2 * KEY_IN_FLIGHT_MAX;
      });
      expect(await metric('ingest_event_queue_depth')).toBe(KEY_IN_FLIGHT_MAX);
      const bDecisions = (
        await Promise.all(Array.from({ length: B_EVENTS }, () => postEvent(system.url, b.key.value, eventBody(b))))
      ).map(expectDecision);
      expect(bDecisions.filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(B_EVENTS);
      expect((await gameState(db, a.game.gameId)).decisions).toBe(keys.length);
      expect(await metric('ingest_event_requests_waiting')).toBe(A_EVENTS - 2 * KEY_IN_FLIGHT_MAX);

      await release();
      const aDecisions = (await Promise.all(flood)).map(expectDecision);
      expect(aDecisions.filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(A_EVENTS);
    } finally {
      await release();
    }
  });

  // An organization's games together have 2 x one game's requests in the app (INGEST_EVENT_ORGANIZATION_REQUESTS_MAX):
  // three of its games flooding, each held, fill it, and the third game's share waits in front of the app; another
  // organization's game is decided meanwhile.
  it("an organization's floods of three games get two games' share; another organization's game is decided", async () => {
    const project = await createProject(db, { budgetCredits: 3_000_000 });
    const games = await Promise.all(
      [1, 2, 3].map(() => createEventWorld(db, { project, rewardCredits: 1, budgetCredits: 1_000_000 })),
    );
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    for (const game of games) expectDecision(await postEvent(system.url, game.key.value, eventBody(game)));
    const holds = await Promise.all(games.map((game) => holdGameRow(db, game.game.gameId)));
    const perGame = 40;
    try {
      const floods = games.flatMap((game) =>
        Array.from({ length: perGame }, () => postEvent(system.url, game.key.value, eventBody(game))),
      );
      // Each game: 2 x KEY_IN_FLIGHT_MAX past its own bound; together, 4 x KEY_IN_FLIGHT_MAX in the app.
      await until("the organization's floods wait at the edge", async () => {
        return (await metric('ingest_event_requests_waiting')) === games.length * perGame - 4 * KEY_IN_FLIGHT_MAX;
      });
      const bDecisions = (
        await Promise.all(Array.from({ length: B_EVENTS }, () => postEvent(system.url, b.key.value, eventBody(b))))
      ).map(expectDecision);
      expect(bDecisions.filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(B_EVENTS);
      expect(await metric('ingest_event_requests_waiting')).toBe(games.length * perGame - 4 * KEY_IN_FLIGHT_MAX);

      for (const hold of holds) await hold.release();
      const decisions = (await Promise.all(floods)).map(expectDecision);
      expect(decisions.filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(games.length * perGame);
    } finally {
      for (const hold of holds) await hold.release();
    }
  }, 60_000);
});

// A flood's long batch (EVENT_LIMITS.longBatchMin events of one key or more) goes to the database in a call of its
// own, and another game's short batch neither rides in it nor waits for it to end (the group-commit rule waits only
// for short calls: keyed-batcher.ts, `longBatchMin`). The default batching settings; A's batch request of 100 sends
// its first INGEST_EVENT_KEY_IN_FLIGHT_MAX events (32, one long batch) as one RecordEvents request, one batch of the
// ledger, held by A's game row; the rest waits at the edge. Counting, no timing.
describe("fair ingest: another game's event does not wait for a flood's long batch in the database", () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { EVENT_RATE_LIMIT_PER_MINUTE: '100000', NATS_EVENT_REQUEST_TIMEOUT_MS: '60000' },
    });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  it("game B's events are decided while game A's long batch is held in the database; then A's batch is", async () => {
    const a = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const aEvents = Array.from({ length: 100 }, () => eventBody(a));
    expect(Math.min(aEvents.length, EDGE_KEY_IN_FLIGHT_MAX_DEFAULT)).toBeGreaterThanOrEqual(EVENT_LIMITS.longBatchMin);
    const { release } = await holdGameRow(db, a.game.gameId);
    try {
      let aAnswered = false;
      const aBatch = api(system.url, 'POST', '/api/game-sdk/v2/events/batch', {
        token: a.key.value,
        body: { events: aEvents },
      }).then((response) => {
        aAnswered = true;
        return response;
      });
      await until("A's batch waits for its game row in the database", async () => {
        return (await callsWaitingForALock(db)) === 1;
      });

      // One at a time (each alone in line, a short call) and then ten together (one short call of B's key).
      for (let i = 0; i < 5; i++) expectDecision(await postEvent(system.url, b.key.value, eventBody(b)));
      const together = await Promise.all(
        Array.from({ length: 10 }, () => postEvent(system.url, b.key.value, eventBody(b))),
      );
      expect(together.map(expectDecision).filter((d) => d.status === 'accepted' && !d.replayed)).toHaveLength(10);
      expect(aAnswered).toBe(false);
      expect((await gameState(db, a.game.gameId)).decisions).toBe(0);
      expect((await gameState(db, b.game.gameId)).decisions).toBe(15);

      await release();
      const response = await aBatch;
      expect(response.status).toBe(200);
      const results = response.body.data.results as Array<{ status: number; data: { status: string } }>;
      expect(results.filter((r) => r.status === 200 && r.data.status === 'accepted')).toHaveLength(aEvents.length);
      expect(await gameState(db, a.game.gameId)).toMatchObject({ decisions: 100, spentCredits: 100 });
    } finally {
      await release();
    }
  });
});

// Flood pacing (services/ingest/src/routes/flood-pacer.ts): while another game's requests to the ledger take more than twice
// their quiet round trip, a flood's long batches wait after each call; a flood alone never does. B's requests are
// made slow here by holding B's game row for a while during each (what a saturated machine does to them, in a way a
// test can count on); A's flood is four batch requests of 100 events at once (calls of 32 of them, long batches, more
// than floodCalls in a row; once a flood and paced, one long batch of 16 at a time: FloodPacer.inFlightMax). Counting,
// no timing.
describe('fair ingest: a flood is paced while another game’s requests are slow, and never alone', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: '100000' } });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  const metric = (name: string) => programMetric(system.url, name);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** The edge's RecordEvents requests of at most one long batch's events (the histogram's cumulative bucket). */
  const callsOfOneLongBatchAtMost = () =>
    metric(`ingest_event_batch_size_bucket\\{le="${EVENT_LIMITS.longBatchMin}"\\}`);

  it("A's flood waits after its calls while B's are slow, one long batch at a time; with B quiet, it does not", async () => {
    const a = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const aBatch = async () => {
      const response = await api(system.url, 'POST', '/api/game-sdk/v2/events/batch', {
        token: a.key.value,
        body: { events: Array.from({ length: 100 }, () => eventBody(a)) },
      });
      expect(response.status).toBe(200);
      const results = response.body.data.results as Array<{ status: number; data: { status: string } }>;
      expect(results.filter((r) => r.status === 200 && r.data.status === 'accepted')).toHaveLength(100);
    };
    const aFlood = () => Promise.all([aBatch(), aBatch(), aBatch(), aBatch()]);

    // B's quiet round trip, then B's requests slowed: each waits for B's game row at least 250 ms.
    for (let i = 0; i < 10; i++) expectDecision(await postEvent(system.url, b.key.value, eventBody(b)));
    for (let i = 0; i < FLOOD_PACER_DEFAULTS.paceMax / FLOOD_PACER_DEFAULTS.paceStep; i++) {
      const { release } = await holdGameRow(db, b.game.gameId);
      const answer = postEvent(system.url, b.key.value, eventBody(b));
      try {
        await until("B's event waits for its game row", async () => {
          return (await callsWaitingForALock(db)) === 1;
        });
        await sleep(250);
      } finally {
        await release();
      }
      expectDecision(await answer);
    }
    expect(await metric('ingest_flood_pace')).toBeGreaterThan(0);

    // A floods now: its long batches wait after their calls; every event still gets its decision.
    // Paced, its calls hold one long batch (16) instead of its bound's 32: of its 400 events, 256 in its first 8
    // calls (not yet a flood), most of the other 144 in calls of 16.
    const pausesBefore = await metric('ingest_flood_pauses_total');
    const smallBefore = await callsOfOneLongBatchAtMost();
    await aFlood();
    expect(await metric('ingest_flood_pauses_total')).toBeGreaterThan(pausesBefore);
    expect((await callsOfOneLongBatchAtMost()) - smallBefore).toBeGreaterThanOrEqual(5);

    // B quiet for longer than quietMs: the flood has the service to itself, and is not paced.
    await sleep(FLOOD_PACER_DEFAULTS.quietMs + 200);
    expect(await metric('ingest_flood_pace')).toBe(0);
    const pausesAlone = await metric('ingest_flood_pauses_total');
    const smallAlone = await callsOfOneLongBatchAtMost();
    await aFlood();
    expect(await metric('ingest_flood_pauses_total')).toBe(pausesAlone);
    // Alone, calls of its bound's 32 events: at most its last ones are smaller.
    expect((await callsOfOneLongBatchAtMost()) - smallAlone).toBeLessThanOrEqual(2);
    expect(await gameState(db, a.game.gameId)).toMatchObject({ decisions: 800, spentCredits: 800 });
  });
});

// A flood's keep-alive connections are left unread while its key is at its bound (services/ingest/src/routes/key-admission.ts):
// game A's closed loop on more connections than its bound lets in (INGEST_EVENT_KEY_IN_FLIGHT_MAX 4: 8 requests in
// the app) runs until ingest reports connections held; then every request A sent has its decision, and once A is
// quiet nothing is held and nothing waits. A's own http.Agent: the test's other requests (fetch) never share its
// connections. Counting, no timing.
describe("fair ingest: a flood's connections wait unread at its bound, and every request is answered", () => {
  const CONNECTIONS = 24;
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { EVENT_RATE_LIMIT_PER_MINUTE: '100000', INGEST_EVENT_KEY_IN_FLIGHT_MAX: String(KEY_IN_FLIGHT_MAX) },
    });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  const metric = (name: string) => programMetric(system.url, name);

  it("A's closed loop is held at its bound; every event of A is decided, B's meanwhile too", async () => {
    const a = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const url = new URL(EVENTS_PATH, system.url);
    const post = (body: unknown) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const payload = JSON.stringify(body);
        const request = httpRequest(url, {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${a.key.value}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        });
        request.on('response', (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        });
        request.on('error', reject);
        request.end(payload);
      });

    let heldSeen = 0;
    const statuses: number[] = [];
    const loop = async () => {
      while (heldSeen === 0 && statuses.length < 20_000) statuses.push((await post(eventBody(a))).status);
    };
    try {
      const flood = Promise.all(Array.from({ length: CONNECTIONS }, loop));
      await until('ingest holds connections of A', async () => {
        heldSeen = await metric('ingest_event_connections_held');
        return heldSeen > 0;
      });
      expectDecision(await postEvent(system.url, b.key.value, eventBody(b)));
      await flood;
    } finally {
      agent.destroy();
    }
    expect(heldSeen).toBeLessThanOrEqual(CONNECTIONS - 2 * KEY_IN_FLIGHT_MAX);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await gameState(db, a.game.gameId)).toMatchObject({
      decisions: statuses.length,
      spentCredits: statuses.length,
    });
    expect(await metric('ingest_event_connections_held')).toBe(0);
    expect(await metric('ingest_event_requests_waiting')).toBe(0);
  });
});
