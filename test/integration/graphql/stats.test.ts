// decisionStats (GraphQL only, the web console's charts): a game's decisions per bucket, status and reason, counted in
// SQL over the events_by_game index; bounded windows; the game must be visible to the caller.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { addMember, type Developer, developer, insertPlayer, world } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql } from './helpers.ts';

let system: TestSystem;
let owner: Developer;
let viewer: Developer;
let outsider: Developer;
let gameId: string;
const HOUR_MS = 3_600_000;
// A fixed window in the past, so that the rows below are the only ones in it.
const from = new Date(Date.UTC(2026, 0, 10, 0, 0, 0));

const STATS = `query Stats($gameId: UUID!, $from: DateTime!, $to: DateTime!, $bucket: StatsBucket!) {
  decisionStats(gameId: $gameId, from: $from, to: $to, bucket: $bucket) {
    gameId from to bucket
    buckets { start accepted rejected rewardCredits reasons { reason count } }
  }
}`;

/** Inserts one decision created at `at`. */
async function decision(at: Date, status: 'accepted' | 'rejected', reason: string | null, reward: number) {
  const keyId = randomUUID();
  await sql(
    system.databaseUrl!,
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
     select $1, g.id, g.organization_id, 'secret', 'fixture', 'cr_sk_sandbox_AAAAAA', null, $3
       from ledger.games g where g.id = $2`,
    [keyId, gameId, randomBytes(32)],
  );
  await sql(
    system.databaseUrl!,
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select gen_random_uuid(), g.id, g.project_id, g.organization_id, gen_random_uuid(), $1, $2, 'level.up',
            $3, $4, $5, $6, sha256(gen_random_uuid()::text::bytea), $3
       from ledger.games g where g.id = $7`,
    [playerId, keyId, at.toISOString(), status, reason, reward, gameId],
  );
}
let playerId: string;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
  const w = await world(system, owner.token);
  gameId = w.gameId;
  await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
  playerId = await insertPlayer(system, gameId);
  await decision(new Date(from.getTime() + 5 * 60_000), 'accepted', null, 5);
  await decision(new Date(from.getTime() + 10 * 60_000), 'accepted', null, 7);
  await decision(new Date(from.getTime() + 20 * 60_000), 'rejected', 'daily_player_cap', 0);
  await decision(new Date(from.getTime() + 2 * HOUR_MS + 1), 'rejected', 'daily_player_cap', 0);
  await decision(new Date(from.getTime() + 2 * HOUR_MS + 2), 'rejected', 'game_paused', 0);
  // Outside the window: before and at its end (exclusive).
  await decision(new Date(from.getTime() - 1), 'accepted', null, 9);
  await decision(new Date(from.getTime() + 3 * HOUR_MS), 'accepted', null, 9);
});

afterAll(async () => {
  await system?.stop();
});

const window = { from: from.toISOString(), to: new Date(from.getTime() + 3 * HOUR_MS).toISOString() };

test('counts per bucket, status and reason, every bucket of the window answered', async () => {
  for (const who of [owner, viewer]) {
    const result = await gql(system, who.token, STATS, { gameId, ...window, bucket: 'hour' });
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data.decisionStats).toEqual({
      gameId,
      from: window.from,
      to: window.to,
      bucket: 'hour',
      buckets: [
        {
          start: window.from,
          accepted: 2,
          rejected: 1,
          rewardCredits: 12,
          reasons: [{ reason: 'daily_player_cap', count: 1 }],
        },
        {
          start: new Date(from.getTime() + HOUR_MS).toISOString(),
          accepted: 0,
          rejected: 0,
          rewardCredits: 0,
          reasons: [],
        },
        {
          start: new Date(from.getTime() + 2 * HOUR_MS).toISOString(),
          accepted: 0,
          rejected: 2,
          rewardCredits: 0,
          reasons: [
            { reason: 'daily_player_cap', count: 1 },
            { reason: 'game_paused', count: 1 },
          ],
        },
      ],
    });
  }
  const minutes = await gql(system, owner.token, STATS, { gameId, ...window, bucket: 'minute' });
  const buckets = minutes.body.data.decisionStats.buckets;
  expect(buckets).toHaveLength(180);
  expect(buckets.reduce((sum: number, b: any) => sum + b.accepted + b.rejected, 0)).toBe(5);
});

test('windows are bounded, and a game the caller cannot see is not found', async () => {
  const tooWide = await gql(system, owner.token, STATS, {
    gameId,
    from: window.from,
    to: new Date(from.getTime() + 401 * 60_000).toISOString(),
    bucket: 'minute',
  });
  expect(tooWide.body.errors?.[0]?.extensions).toEqual({ code: 'INVALID_STATS_QUERY', status: 400 });
  const backwards = await gql(system, owner.token, STATS, { gameId, from: window.to, to: window.from, bucket: 'day' });
  expect(backwards.body.errors?.[0]?.extensions).toEqual({ code: 'INVALID_STATS_QUERY', status: 400 });
  for (const id of [gameId, randomUUID()]) {
    const hidden = await gql(system, outsider.token, STATS, { gameId: id, ...window, bucket: 'hour' });
    expect(hidden.status).toBe(200);
    expect(hidden.body.data.decisionStats).toBeNull();
    expect(hidden.body.errors?.[0]?.extensions).toEqual({ code: 'not_found', status: 404 });
  }
});

test('the query can read a range of the events_by_game index (no scan of the events table)', async () => {
  // A fixture table this small is cheaper to scan, so sequential scans are priced out to show the index path the
  // planner takes on a table of real size (docs/console-ui.md shows such a plan).
  const client = new pg.Client({ connectionString: system.databaseUrl! });
  await client.connect();
  try {
    await client.query('set enable_seqscan = off');
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `explain select (extract(epoch from date_bin(make_interval(secs => $4), e.created_at, $2::timestamptz)) * 1000)::bigint,
              e.status, e.reason, count(*)::int, coalesce(sum(e.reward_credits), 0)::bigint
         from ledger.events e
        where e.game_id = $1 and e.created_at >= $2::timestamptz and e.created_at < $3::timestamptz
        group by 1, 2, 3 order by 1, 2, 3`,
      [gameId, window.from, window.to, 3600],
    );
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('events_by_game');
    expect(text).not.toMatch(/Seq Scan/);
  } finally {
    await client.end();
  }
});
