// The rule dry-run, GraphQL simulateRule (CONTRACT section 11), on real PostgreSQL and NATS. The key test: a seeded
// stream of events (several players, daily caps, an exhausted budget, the rate limit within a minute, an inactive
// rule, an unknown type, an unlinked and a disabled player, timestamps outside the window, a UTC midnight) is posted
// into game A at explicit receipt times; simulateRule on A under a proposed rule must answer exactly what a fresh game
// B, created with the proposed rule, decides when the same events are posted into it at the same receipt times.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { addMember, type Developer, developer, insertEvents, insertPlayer, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql } from './helpers.ts';
import {
  type Decision,
  figuresOf,
  postStream,
  type RuleSpec,
  type SimGame,
  type StreamEvent,
  seeded,
  simulate,
  simulationGame,
  utcDay,
} from './simulate-helpers.ts';

const RATE_LIMIT = 5;
const MAX_EVENTS = 100;
const EVENTS = 80;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

let system: TestSystem;
let owner: Developer;
let admin: Developer;
let viewer: Developer;
let outsider: Developer;
let project: { organizationId: string; projectId: string };

// Game A as it is: the rule of level.complete pays 10, the daily cap is 40.
const rulesA: RuleSpec[] = [
  { eventType: 'level.complete', rewardCredits: 10, active: true },
  { eventType: 'bonus', rewardCredits: 25, active: true },
  { eventType: 'old.quest', rewardCredits: 5, active: false },
];
// The proposal: level.complete pays 15, the daily cap is 30.
const proposal = { eventType: 'level.complete', rewardCredits: 15, dailyPlayerCapCredits: 30, active: true };
const rulesB: RuleSpec[] = rulesA.map((rule) =>
  rule.eventType === proposal.eventType ? { ...rule, rewardCredits: 15, active: true } : rule,
);
const BUDGET = 200;
const CEILING = 10_000;
// Four linked players with active accounts, one unlinked, one whose platform account is disabled.
const PLAYERS = [{}, {}, {}, {}, { linked: false }, { account: 'disabled' as const }];

/** The seeded stream: 80 events from 23:50 UTC, across midnight, with bursts that hit the rate limit. */
function stream(seed: number): StreamEvent[] {
  const random = seeded(seed);
  const events: StreamEvent[] = [];
  let at = Date.parse('2031-03-04T23:50:00.000Z');
  for (let i = 0; i < EVENTS; i++) {
    // Bursts (a few ms apart) and pauses (5 to 40 s); every receipt instant distinct (replay order = arrival order).
    at += random() < 0.4 ? 1 + Math.floor(random() * 300) : 5_000 + Math.floor(random() * 35_000);
    const receivedAt = new Date(at);
    const t = random();
    const occurredAt = new Date(
      t < 0.08 ? at - 6 * MINUTE_MS : t < 0.12 ? at + 5 * MINUTE_MS : at - Math.floor(random() * 120_000),
    );
    const e = random();
    const eventType = e < 0.6 ? 'level.complete' : e < 0.78 ? 'bonus' : e < 0.9 ? 'old.quest' : 'no.rule';
    const p = random();
    const player = p < 0.86 ? Math.floor(random() * 4) : p < 0.93 ? 4 : 5;
    events.push({ eventId: randomUUID(), player, eventType, receivedAt, occurredAt });
  }
  return events;
}

const events = stream(20311);
const windowFrom = new Date(events[0]!.receivedAt.getTime() - HOUR_MS);
const windowTo = new Date(events.at(-1)!.receivedAt.getTime() + HOUR_MS);
let gameA: SimGame;
let gameB: SimGame;
let decisionsA: Decision[];
let decisionsB: Decision[];

beforeAll(async () => {
  system = await startTestSystem({
    env: { EVENT_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), SIMULATE_RULE_MAX_EVENTS: String(MAX_EVENTS) },
  });
  owner = await developer(system);
  admin = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
  const organizationId = (await ok(system, owner.token, { type: 'createOrganization', name: 'Org' })).id;
  await ok(system, owner.token, { type: 'fundOrganization', organizationId, amountCredits: 100_000 });
  const projectId = (
    await ok(system, owner.token, { type: 'createProject', organizationId, name: 'P', maxPayoutCredits: 100_000 })
  ).id;
  await ok(system, owner.token, { type: 'allocateProject', projectId, amountCredits: 50_000 });
  project = { organizationId, projectId };
  await addMember(system, owner.token, organizationId, admin, 'admin');
  await addMember(system, owner.token, organizationId, viewer, 'viewer');
  const config = { budgetCredits: BUDGET, maxPayoutCredits: CEILING };
  gameA = await simulationGame(
    system,
    owner.token,
    project,
    { ...config, dailyPlayerCapCredits: 40, rules: rulesA },
    PLAYERS,
  );
  decisionsA = await postStream(system, gameA, events);
  gameB = await simulationGame(
    system,
    owner.token,
    project,
    { ...config, dailyPlayerCapCredits: proposal.dailyPlayerCapCredits, rules: rulesB },
    PLAYERS,
  );
  decisionsB = await postStream(system, gameB, events);
});

afterAll(async () => {
  await system?.stop();
});

const input = (overrides: Record<string, unknown> = {}) => ({
  gameId: gameA.gameId,
  ...proposal,
  from: windowFrom.toISOString(),
  to: windowTo.toISOString(),
  ...overrides,
});

/** The per-UTC-day figures of two aligned lists of decisions. */
function daysOf(stored: Decision[], proposed: Decision[]) {
  const days = [...new Set(events.map((e) => utcDay(e.receivedAt)))];
  return days.map((day) => {
    const on = (list: Decision[]) => list.filter((_, i) => utcDay(events[i]!.receivedAt) === day);
    const totals = (list: Decision[]) => {
      const { reasons: _reasons, ...figures } = figuresOf(on(list));
      return figures;
    };
    return { day, stored: totals(stored), proposed: totals(proposed) };
  });
}

const decisionOf = (d: Decision) => ({ status: d.status, reason: d.reason, rewardCredits: d.rewardCredits });

test('the stream exercises every check the proposal can change', () => {
  const reasons = (list: Decision[]) => new Set(list.map((d) => d.reason));
  for (const list of [decisionsA, decisionsB]) {
    for (const reason of [
      null,
      'rate_limited',
      'timestamp_out_of_window',
      'unknown_or_inactive_rule',
      'player_not_linked',
      'user_unavailable',
      'daily_player_cap',
      'game_budget_exhausted',
    ]) {
      expect([reason, reasons(list).has(reason)]).toEqual([reason, true]);
    }
  }
  expect(new Set(events.map((e) => utcDay(e.receivedAt))).size).toBe(2);
});

test('answers exactly what a fresh game with the proposed rule decides for the same events', async () => {
  const result = await simulate(system, owner.token, input());
  expect(result.body.errors).toBeUndefined();
  const answer = result.body.data.simulateRule;
  const flips = decisionsA
    .map((stored, i) => ({ stored, proposed: decisionsB[i]!, event: events[i]! }))
    .filter(({ stored, proposed }) => JSON.stringify(decisionOf(stored)) !== JSON.stringify(decisionOf(proposed)));
  expect(flips.length).toBeGreaterThan(20);
  expect(answer).toEqual({
    gameId: gameA.gameId,
    from: windowFrom.toISOString(),
    to: windowTo.toISOString(),
    considered: EVENTS,
    spentBeforeCredits: 0,
    stored: figuresOf(decisionsA),
    proposed: figuresOf(decisionsB),
    days: daysOf(decisionsA, decisionsB),
    flipCount: flips.length,
    flips: flips.slice(0, 20).map(({ stored, proposed, event }) => ({
      id: stored.id,
      eventId: event.eventId,
      playerId: gameA.players[event.player],
      eventType: event.eventType,
      createdAt: event.receivedAt.toISOString(),
      stored: decisionOf(stored),
      proposed: decisionOf(proposed),
    })),
  });
  // An admin may edit rules, so may try one too.
  const byAdmin = await simulate(system, admin.token, input());
  expect(byAdmin.body.data.simulateRule).toEqual(answer);
});

test('the rule as it is: no flips, the proposal decides as the ledger did', async () => {
  const result = await simulate(
    system,
    owner.token,
    input({ rewardCredits: 10, dailyPlayerCapCredits: 40, active: true }),
  );
  const answer = result.body.data.simulateRule;
  expect(answer.flipCount).toBe(0);
  expect(answer.flips).toEqual([]);
  expect(answer.proposed).toEqual(answer.stored);
  expect(answer.stored).toEqual(figuresOf(decisionsA));
  for (const day of answer.days) expect(day.proposed).toEqual(day.stored);
});

test('a window starting mid-stream starts from the spend, day totals and minute attempts before it', async () => {
  // From an event that has another of the same UTC minute before it (so the minute's attempts do not start at 0), past
  // the first acceptances; the spend before it is what A accepted before it.
  const cut = events.findIndex(
    (e, i) =>
      i >= 20 &&
      Math.floor(e.receivedAt.getTime() / MINUTE_MS) === Math.floor(events[i - 1]!.receivedAt.getTime() / MINUTE_MS),
  );
  expect(cut).toBeGreaterThan(0);
  const from = events[cut]!.receivedAt;
  const result = await simulate(
    system,
    owner.token,
    input({ from: from.toISOString(), rewardCredits: 10, dailyPlayerCapCredits: 40 }),
  );
  const answer = result.body.data.simulateRule;
  expect(answer.considered).toBe(EVENTS - cut);
  expect(answer.spentBeforeCredits).toBe(figuresOf(decisionsA.slice(0, cut)).creditsSpent);
  expect(answer.spentBeforeCredits).toBeGreaterThan(0);
  // The rule as it is, from the state before the window: still no flips.
  expect(answer.flipCount).toBe(0);
  expect(answer.stored).toEqual(figuresOf(decisionsA.slice(cut)));
});

test('writes nothing: every ledger table and the game spend are unchanged; the function needs READ ONLY', async () => {
  const url = system.databaseUrl!;
  const counts = async () => {
    const tables = await sql<{ tablename: string }>(
      url,
      `select tablename from pg_tables where schemaname = 'ledger' order by tablename`,
    );
    const result: Record<string, number> = {};
    for (const { tablename } of tables) {
      const [row] = await sql<{ n: number }>(url, `select count(*)::int as n from ledger.${tablename}`);
      result[tablename] = row!.n;
    }
    const [game] = await sql<{ spent: string }>(
      url,
      'select spent_credits::text as spent from ledger.games where id = $1',
      [gameA.gameId],
    );
    return { tables: result, spent: game!.spent };
  };
  const before = await counts();
  expect(Object.keys(before.tables)).toEqual(
    expect.arrayContaining(['events', 'games', 'audit_log', 'player_daily_totals', 'game_minute_counters']),
  );
  const result = await simulate(system, owner.token, input());
  expect(result.body.data.simulateRule.considered).toBe(EVENTS);
  expect(await counts()).toEqual(before);

  // The transaction mode: the function refuses to run outside a READ ONLY transaction.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const call = `select ledger.simulate_rule($1, 'level.complete', 15, 30, true, $2, $3, 5, 20) as r`;
    const args = [gameA.gameId, windowFrom.toISOString(), windowTo.toISOString()];
    await expect(client.query(call, args)).rejects.toThrow(/READ ONLY transaction/);
    await client.query('begin transaction read only');
    const { rows } = await client.query(call, args);
    await client.query('rollback');
    expect(rows[0].r.considered).toBe(EVENTS);
  } finally {
    await client.end();
  }
});

test('only the roles that may edit rules: a viewer is forbidden, an outsider does not see the game', async () => {
  const refused = await simulate(system, viewer.token, input());
  expect(refused.status).toBe(200);
  expect(refused.body.data).toBeNull();
  expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'forbidden', status: 403 });
  for (const gameId of [gameA.gameId, randomUUID()]) {
    const hidden = await simulate(system, outsider.token, input({ gameId }));
    expect(hidden.body.data).toBeNull();
    expect(hidden.body.errors?.[0]?.extensions).toEqual({ code: 'not_found', status: 404 });
  }
  const anonymous = await simulate(system, undefined, input());
  expect(anonymous.status).toBe(401);
});

test('input checks: the window, the UUID, the reward range and the event type pattern', async () => {
  const cases: Array<[Record<string, unknown>, number]> = [
    [{ to: new Date(windowFrom.getTime() + 31 * DAY_MS + 1).toISOString() }, 200],
    [{ to: windowFrom.toISOString() }, 200],
    [{ eventType: 'Level Complete' }, 200],
    [{ eventType: 'x'.repeat(65) }, 200],
    // Refused by the scalars while the request is validated: no data at all, the status of the error.
    [{ gameId: 'not-a-uuid' }, 400],
    [{ rewardCredits: 0 }, 400],
    [{ rewardCredits: 1_000_000_000_001 }, 400],
    [{ dailyPlayerCapCredits: -1 }, 400],
    [{ from: 'yesterday' }, 400],
  ];
  for (const [overrides, status] of cases) {
    const result = await simulate(system, owner.token, input(overrides));
    expect([overrides, result.status]).toEqual([overrides, status]);
    expect([overrides, result.body.errors?.[0]?.extensions]).toEqual([
      overrides,
      { code: 'INVALID_REQUEST', status: 400 },
    ]);
    expect(result.body.data ?? null).toBeNull();
  }
  // Exactly 31 days is allowed.
  const longest = await simulate(
    system,
    owner.token,
    input({ to: new Date(windowFrom.getTime() + 31 * DAY_MS).toISOString() }),
  );
  expect(longest.body.data.simulateRule.considered).toBe(EVENTS);
});

test('bounded work: more than SIMULATE_RULE_MAX_EVENTS decisions in the window is SIMULATION_TOO_LARGE', async () => {
  const config = { budgetCredits: 10, maxPayoutCredits: 10, dailyPlayerCapCredits: 10, rules: rulesA };
  const full = await simulationGame(system, owner.token, project, config, []);
  const over = await simulationGame(system, owner.token, project, config, []);
  await insertEvents(system, full.gameId, await insertPlayer(system, full.gameId), MAX_EVENTS);
  await insertEvents(system, over.gameId, await insertPlayer(system, over.gameId), MAX_EVENTS + 1);
  const window = {
    from: new Date(Date.now() - HOUR_MS).toISOString(),
    to: new Date(Date.now() + HOUR_MS).toISOString(),
  };
  const atMax = await simulate(system, owner.token, input({ gameId: full.gameId, ...window }));
  expect(atMax.body.errors).toBeUndefined();
  expect(atMax.body.data.simulateRule.considered).toBe(MAX_EVENTS);
  const past = await simulate(system, owner.token, input({ gameId: over.gameId, ...window }));
  expect(past.status).toBe(200);
  expect(past.body.data).toBeNull();
  expect(past.body.errors?.[0]?.extensions).toEqual({ code: 'SIMULATION_TOO_LARGE', status: 400 });
  expect(past.body.errors?.[0]?.message).toMatch(/more than 100 decisions/);
});

test('the replay streams over the events_by_game index: the plan the function runs has no sort, no table scan', async () => {
  // auto_explain logs the plans of the function's own statements (nested), sent back as notices.
  const client = new pg.Client({ connectionString: system.databaseUrl! });
  const notices: string[] = [];
  client.on('notice', (notice) => notices.push(notice.message ?? ''));
  await client.connect();
  try {
    await client.query(`load 'auto_explain'`);
    for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', 'log_level = notice']) {
      await client.query(`set auto_explain.${setting}`);
    }
    await client.query('begin transaction isolation level repeatable read read only');
    await client.query(`select ledger.simulate_rule($1, 'level.complete', 15, 30, true, $2, $3, 5, 20)`, [
      gameA.gameId,
      windowFrom.toISOString(),
      windowTo.toISOString(),
    ]);
    await client.query('rollback');
    const replay = notices.find((n) => n.includes('join ledger.players pl'));
    expect(replay).toMatch(/Nested Loop[\s\S]*Index Scan Backward using events_by_game on events/);
    expect(replay).not.toMatch(/Sort|Seq Scan|Hash Join/);
  } finally {
    await client.end();
  }
});

test('a request may carry one simulation (each may replay the maximum of decisions)', async () => {
  const result = await gql(
    system,
    owner.token,
    `query Two($input: SimulateRuleInput!) {
      a: simulateRule(input: $input) { considered }
      b: simulateRule(input: $input) { considered }
    }`,
    { input: input() },
  );
  expect(result.status).toBe(200);
  expect(result.body.data).toBeNull();
  expect(result.body.errors?.map((e) => e.extensions)).toEqual([{ code: 'INVALID_REQUEST', status: 400 }]);
});
