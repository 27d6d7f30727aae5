// The rule dry-run (GraphQL simulateRule) after rate-limited traffic, on real PostgreSQL and NATS: the replay holds the
// rate limit's outcome as stored. A decision stored as rate_limited stays rate_limited, and no other decision becomes
// rate_limited, whatever a recount of the stored rows per minute would say (the ledger counts attempts in its own
// minute counters, under the limit of that moment). Previewing another reward then shows the reward's differences
// only. Two sources of stored decisions: rows as the ledger may have stored them (written with SQL: minutes where the
// counter had seen attempts that left no row, and minutes decided under a higher limit), and the event path itself.
import { randomBytes, randomUUID } from 'node:crypto';
import { developer, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  figuresOf,
  postStream,
  type SimGame,
  type StreamEvent,
  seeded,
  simulate,
  simulationGame,
} from './simulate-helpers.ts';

const RATE_LIMIT = 5;
const MINUTES = 20;
const PER_MINUTE = 100;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const REWARD = 25;
const PREVIEW = 30;

let system: TestSystem;
let token: string;
let project: { organizationId: string; projectId: string };

interface StoredRow {
  player: number;
  eventType: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: number;
  createdAt: Date;
}

beforeAll(async () => {
  system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) } });
  const owner = await developer(system);
  token = owner.token;
  const organizationId = (await ok(system, token, { type: 'createOrganization', name: 'Org' })).id;
  await ok(system, token, { type: 'fundOrganization', organizationId, amountCredits: 10_000_000 });
  const projectId = (
    await ok(system, token, { type: 'createProject', organizationId, name: 'P', maxPayoutCredits: 10_000_000 })
  ).id;
  await ok(system, token, { type: 'allocateProject', projectId, amountCredits: 5_000_000 });
  project = { organizationId, projectId };
});

afterAll(async () => {
  await system?.stop();
});

/** A game paying REWARD for level.complete, budget, ceiling and daily cap far away, three linked players. */
function rateLimitedGame(): Promise<SimGame> {
  return simulationGame(
    system,
    token,
    project,
    {
      budgetCredits: 1_000_000,
      maxPayoutCredits: 1_000_000,
      dailyPlayerCapCredits: 1_000_000,
      rules: [{ eventType: 'level.complete', rewardCredits: REWARD, active: true }],
    },
    [{}, {}, {}],
  );
}

/**
 * MINUTES minutes of PER_MINUTE decisions, most of them rate_limited. Even minutes: the counter had already seen
 * attempts that left no row, so only the first 0 to 4 rows passed the limit. Odd minutes: decided under a higher
 * limit, 6 to 9 rows passed. Among those that passed, a few events of a type without a rule.
 */
function storedRows(start: Date): StoredRow[] {
  const random = seeded(6201);
  const rows: StoredRow[] = [];
  for (let m = 0; m < MINUTES; m++) {
    const passed = m % 2 === 0 ? Math.floor(random() * 5) : 6 + Math.floor(random() * 4);
    for (let i = 0; i < PER_MINUTE; i++) {
      const createdAt = new Date(start.getTime() + m * MINUTE_MS + i * 500);
      const player = Math.floor(random() * 3);
      if (i >= passed) {
        rows.push({
          player,
          eventType: 'level.complete',
          status: 'rejected',
          reason: 'rate_limited',
          rewardCredits: 0,
          createdAt,
        });
      } else if (random() < 0.15) {
        rows.push({
          player,
          eventType: 'no.rule',
          status: 'rejected',
          reason: 'unknown_or_inactive_rule',
          rewardCredits: 0,
          createdAt,
        });
      } else {
        rows.push({
          player,
          eventType: 'level.complete',
          status: 'accepted',
          reason: null,
          rewardCredits: REWARD,
          createdAt,
        });
      }
    }
  }
  return rows;
}

/** Writes the rows as the ledger stores decisions (and the game's spend with them). */
async function store(game: SimGame, rows: StoredRow[]): Promise<void> {
  const url = system.databaseUrl!;
  const keyId = randomUUID();
  await sql(
    url,
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
     select $1, g.id, g.organization_id, 'secret', 'fixture', 'cr_sk_sandbox_AAAAAA', null, $2
       from ledger.games g where g.id = $3`,
    [keyId, randomBytes(32), game.gameId],
  );
  await sql(
    url,
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select gen_random_uuid(), g.id, g.project_id, g.organization_id, gen_random_uuid(), r.player_id, $2,
            r.event_type, r.created_at, r.status, r.reason, r.reward_credits, sha256(r.n::text::bytea), r.created_at
       from ledger.games g,
            unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[])
              with ordinality as r(player_id, event_type, status, reason, reward_credits, created_at, n)
      where g.id = $1`,
    [
      game.gameId,
      keyId,
      rows.map((r) => game.players[r.player]),
      rows.map((r) => r.eventType),
      rows.map((r) => r.status),
      rows.map((r) => r.reason),
      rows.map((r) => r.rewardCredits),
      rows.map((r) => r.createdAt.toISOString()),
    ],
  );
  const spent = rows.reduce((sum, r) => sum + r.rewardCredits, 0);
  await sql(url, 'update ledger.games set spent_credits = spent_credits + $2 where id = $1', [game.gameId, spent]);
}

async function preview(game: SimGame, from: Date, to: Date, rewardCredits: number) {
  const result = await simulate(system, token, {
    gameId: game.gameId,
    eventType: 'level.complete',
    rewardCredits,
    dailyPlayerCapCredits: 1_000_000,
    active: true,
    from: from.toISOString(),
    to: to.toISOString(),
  });
  expect(result.body.errors).toBeUndefined();
  return result.body.data.simulateRule;
}

/** What previewing PREVIEW instead of REWARD must answer: every acceptance paid PREVIEW, nothing else moved. */
function rewardOnly(stored: Array<{ status: string; reason: string | null; rewardCredits: number }>) {
  const accepted = stored.filter((d) => d.status === 'accepted').length;
  const figures = figuresOf(stored);
  return {
    accepted,
    flipCount: accepted,
    stored: figures,
    proposed: { ...figures, creditsSpent: accepted * PREVIEW },
  };
}

function expectRewardFlipsOnly(flips: any[]) {
  expect(flips.length).toBeGreaterThan(0);
  for (const flip of flips) {
    expect({ stored: flip.stored, proposed: flip.proposed }).toEqual({
      stored: { status: 'accepted', reason: null, rewardCredits: REWARD },
      proposed: { status: 'accepted', reason: null, rewardCredits: PREVIEW },
    });
  }
}

test('stored rate_limited decisions stay rate_limited and no other becomes one: only the reward differs', async () => {
  const game = await rateLimitedGame();
  const start = new Date(Math.floor((Date.now() - 3 * HOUR_MS) / MINUTE_MS) * MINUTE_MS);
  const rows = storedRows(start);
  await store(game, rows);
  const rateLimited = rows.filter((r) => r.reason === 'rate_limited').length;
  expect(rateLimited / rows.length).toBeGreaterThan(0.9);
  // Both ways a recount would be wrong are in the rows: minutes with fewer, and with more, than RATE_LIMIT passed.
  const passedIn = (m: number) =>
    rows.slice(m * PER_MINUTE, (m + 1) * PER_MINUTE).filter((r) => r.reason !== 'rate_limited').length;
  expect([...Array(MINUTES).keys()].some((m) => passedIn(m) < RATE_LIMIT)).toBe(true);
  expect([...Array(MINUTES).keys()].some((m) => passedIn(m) > RATE_LIMIT)).toBe(true);
  const from = new Date(start.getTime() - MINUTE_MS);
  const to = new Date(start.getTime() + (MINUTES + 1) * MINUTE_MS);

  const answer = await preview(game, from, to, PREVIEW);
  const expected = rewardOnly(rows);
  expect(answer.considered).toBe(rows.length);
  expect(answer.stored).toEqual(expected.stored);
  expect(answer.proposed).toEqual(expected.proposed);
  expect(answer.proposed.reasons).toContainEqual({ reason: 'rate_limited', count: rateLimited });
  expect(answer.flipCount).toBe(expected.flipCount);
  expectRewardFlipsOnly(answer.flips);

  // The rule as it is: the replay decides every row as stored.
  const same = await preview(game, from, to, REWARD);
  expect(same.flipCount).toBe(0);
  expect(same.proposed).toEqual(same.stored);
});

test('differential against the event path: a burst past the limit, then another reward previewed', async () => {
  const game = await rateLimitedGame();
  // Three bursts of 12 events, each inside one UTC minute of receipt, an hour ago.
  const start = Math.floor((Date.now() - HOUR_MS) / MINUTE_MS) * MINUTE_MS;
  const stream: StreamEvent[] = [];
  for (let m = 0; m < 3; m++) {
    for (let i = 0; i < 12; i++) {
      const receivedAt = new Date(start + m * MINUTE_MS + 1_000 + i * 100);
      stream.push({
        eventId: randomUUID(),
        player: i % 3,
        eventType: i % 7 === 3 ? 'no.rule' : 'level.complete',
        receivedAt,
        occurredAt: receivedAt,
      });
    }
  }
  const decisions = await postStream(system, game, stream);
  expect(decisions.filter((d) => d.reason === 'rate_limited')).toHaveLength(3 * (12 - RATE_LIMIT));

  const answer = await preview(game, new Date(start), new Date(start + 4 * MINUTE_MS), PREVIEW);
  const expected = rewardOnly(decisions);
  expect(answer.considered).toBe(stream.length);
  expect(answer.stored).toEqual(expected.stored);
  expect(answer.proposed).toEqual(expected.proposed);
  expect(answer.flipCount).toBe(expected.flipCount);
  expectRewardFlipsOnly(answer.flips);
});
