// Ledger fixtures written with SQL straight into a migrated database (organizations, projects, games, rules, keys,
// players, and the identity schema's native accounts), for tests of the game SDK that should not depend on the
// console. Budgets follow the allocation invariants the console keeps: a game's budget is carved out of its
// project's (projects.allocated_credits), the project's out of its ceiling.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { issueKeyValue, type KeyKind } from '#runtime/credentials/keys.ts';
import { sql } from './database.ts';

export interface GameFixture {
  organizationId: string;
  projectId: string;
  gameId: string;
  slug: string;
  name: string;
}

export interface GameOptions {
  name?: string;
  platform?: 'android' | 'ios' | 'other' | 'unity' | 'unreal' | 'web';
  status?: 'active' | 'paused';
  budgetCredits?: number;
  maxPayoutCredits?: number;
  dailyPlayerCapCredits?: number;
  spentCredits?: number;
  /** Put the game in an existing project (which must have room for its budget). */
  project?: { organizationId: string; projectId: string };
}

/** An organization and a project whose budget is exactly what its games get (unless more is asked for). */
export async function createProject(
  url: string,
  options: { budgetCredits?: number; maxPayoutCredits?: number } = {},
): Promise<{ organizationId: string; projectId: string }> {
  const organizationId = randomUUID();
  const projectId = randomUUID();
  const budget = options.budgetCredits ?? 0;
  await sql(
    url,
    `with o as (insert into ledger.organizations (id, name, created_by) values ($1, 'Fixture org', 'fixture|owner'))
     insert into ledger.projects (id, organization_id, name, max_payout_credits, budget_credits, allocated_credits)
     values ($2, $1, 'Fixture project', $3, $4, 0)`,
    [organizationId, projectId, options.maxPayoutCredits ?? Math.max(budget, 1_000_000_000), budget],
  );
  return { organizationId, projectId };
}

export async function createGame(url: string, options: GameOptions = {}): Promise<GameFixture> {
  const budget = options.budgetCredits ?? 1_000_000;
  const maxPayout = options.maxPayoutCredits ?? Math.max(budget, 10_000_000);
  let project = options.project;
  if (!project) project = await createProject(url, { budgetCredits: budget });
  const gameId = randomUUID();
  const slug = randomUUID();
  const name = options.name ?? `Game ${gameId.slice(0, 8)}`;
  // One statement: the project's allocation and the game move together, as allocateGame would do them.
  await sql(
    url,
    `with p as (update ledger.projects set allocated_credits = allocated_credits + $5,
                  budget_credits = greatest(budget_credits, allocated_credits + $5)
                where id = $2 returning id)
     insert into ledger.games (id, project_id, organization_id, slug, name, platform, status, max_payout_credits,
       budget_credits, spent_credits, daily_player_cap_credits)
     select $1, p.id, $3, $4, $6, $7, $8, $9, $5, $10, $11 from p`,
    [
      gameId,
      project.projectId,
      project.organizationId,
      slug,
      budget,
      name,
      options.platform ?? 'web',
      options.status ?? 'active',
      maxPayout,
      options.spentCredits ?? 0,
      options.dailyPlayerCapCredits ?? 1_000_000,
    ],
  );
  return { organizationId: project.organizationId, projectId: project.projectId, gameId, slug, name };
}

export async function createRule(
  url: string,
  game: GameFixture,
  eventType: string,
  rewardCredits: number,
  active = true,
): Promise<string> {
  const id = randomUUID();
  await sql(
    url,
    `insert into ledger.rules (id, game_id, organization_id, event_type, reward_credits, active)
     values ($1, $2, $3, $4, $5, $6)`,
    [id, game.gameId, game.organizationId, eventType, rewardCredits, active],
  );
  return id;
}

export async function setRule(url: string, ruleId: string, changes: { active?: boolean; rewardCredits?: number }) {
  await sql(
    url,
    `update ledger.rules set active = coalesce($2, active), reward_credits = coalesce($3, reward_credits)
     where id = $1`,
    [ruleId, changes.active ?? null, changes.rewardCredits ?? null],
  );
}

export interface KeyFixture {
  id: string;
  kind: KeyKind;
  value: string;
}

export async function createKey(url: string, game: GameFixture, kind: KeyKind = 'secret'): Promise<KeyFixture> {
  const id = randomUUID();
  const key = issueKeyValue(kind);
  await sql(
    url,
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
     values ($1, $2, $3, $4, 'Fixture key', $5, $6, $7)`,
    [id, game.gameId, game.organizationId, kind, key.prefix, kind === 'public' ? key.value : null, key.hash],
  );
  return { id, kind, value: key.value };
}

export async function revokeKey(url: string, keyId: string): Promise<void> {
  await sql(url, `update ledger.keys set revoked_at = now() where id = $1`, [keyId]);
}

export interface PlayerFixture {
  id: string;
  externalPlayerId: string;
  creditsUserId: string | null;
}

export interface PlayerOptions {
  /** Default true. */
  linked?: boolean;
  /** The platform account of a linked player: `active` (default), `disabled`, or `missing` (no identity row). */
  account?: 'active' | 'disabled' | 'missing';
}

export async function createPlayer(
  url: string,
  game: GameFixture,
  options: PlayerOptions = {},
): Promise<PlayerFixture> {
  const id = randomUUID();
  const externalPlayerId = `player-${id.slice(0, 8)}`;
  const linked = options.linked ?? true;
  const creditsUserId = linked ? randomUUID() : null;
  await sql(
    url,
    `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, username, linked_at)
     values ($1, $2, $3, $4, $5, $6, case when $5::uuid is null then null else now() end)`,
    [id, game.gameId, game.organizationId, externalPlayerId, creditsUserId, linked ? 'fixture-user' : null],
  );
  const account = options.account ?? 'active';
  if (creditsUserId && account !== 'missing') await setAccountStatus(url, creditsUserId, account);
  return { id, externalPlayerId, creditsUserId };
}

/** Creates or updates the identity schema's native account (what PUT /api/admin/v1/native-accounts does). */
export async function setAccountStatus(url: string, creditsUserId: string, status: 'active' | 'disabled') {
  await sql(
    url,
    `insert into identity.native_accounts (credits_user_id, status, username) values ($1, $2, 'fixture-user')
     on conflict (credits_user_id) do update set status = excluded.status, updated_at = now()`,
    [creditsUserId, status],
  );
}

export async function setGame(
  url: string,
  gameId: string,
  changes: { status?: 'active' | 'paused'; dailyPlayerCapCredits?: number },
): Promise<void> {
  await sql(
    url,
    `update ledger.games set status = coalesce($2, status),
       daily_player_cap_credits = coalesce($3, daily_player_cap_credits) where id = $1`,
    [gameId, changes.status ?? null, changes.dailyPlayerCapCredits ?? null],
  );
}

/** A ready game: one active rule, a secret key and a linked player with an active account. */
export interface EventWorld {
  game: GameFixture;
  ruleId: string;
  eventType: string;
  rewardCredits: number;
  key: KeyFixture;
  player: PlayerFixture;
}

export async function createEventWorld(
  url: string,
  options: GameOptions & { rewardCredits?: number; eventType?: string } = {},
): Promise<EventWorld> {
  const game = await createGame(url, options);
  const eventType = options.eventType ?? 'level.complete';
  const rewardCredits = options.rewardCredits ?? 10;
  const ruleId = await createRule(url, game, eventType, rewardCredits);
  const key = await createKey(url, game, 'secret');
  const player = await createPlayer(url, game);
  return { game, ruleId, eventType, rewardCredits, key, player };
}

export async function gameState(url: string, gameId: string) {
  const [row] = await sql<{ spent: string; budget: string; accepted_sum: string; decisions: string }>(
    url,
    `select g.spent_credits::text as spent, g.budget_credits::text as budget,
       (select coalesce(sum(reward_credits), 0)::text from ledger.events e where e.game_id = g.id and e.status = 'accepted') as accepted_sum,
       (select count(*)::text from ledger.events e where e.game_id = g.id) as decisions
     from ledger.games g where g.id = $1`,
    [gameId],
  );
  if (!row) throw new Error(`no game ${gameId}`);
  return {
    spentCredits: Number(row.spent),
    budgetCredits: Number(row.budget),
    acceptedSum: Number(row.accepted_sum),
    decisions: Number(row.decisions),
  };
}

/**
 * Holds a game's row (`for update`, in a transaction of a connection of its own), so that fresh decisions of that game
 * wait in PostgreSQL until `release` (idempotent) commits.
 */
export async function holdGameRow(url: string, gameId: string): Promise<{ release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query('begin');
  await holder.query('select 1 from ledger.games where id = $1 for update', [gameId]);
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      await holder.query('commit');
      await holder.end();
    },
  };
}
