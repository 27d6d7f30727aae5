// The ledger schema. Every invariant the code relies on is also a constraint here, so that even wrong code cannot
// overspend: budgets within ceilings, spending within budgets, balances never negative, decisions immutable.
import { Migration } from '@mikro-orm/migrations';

const CREDITS = 'bigint not null check (%s between 0 and 1000000000000)';
const credits = (column: string, extra = '') => `${column} ${CREDITS.replace('%s', column)}${extra}`;
const NAME = "text not null check (char_length(name) between 1 and 100 and name !~ '[\\x00-\\x1f\\x7f]')";
const EVENT_TYPE = "text not null check (event_type ~ '^[a-z][a-z0-9_.-]{0,63}$')";

export class LedgerInitial extends Migration {
  override name = '0001-initial';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'prefer-bigint-over-int': 'a bounded count (attempts), never near 2^31',
  };

  override up(): void {
    this.addSql(`create table ledger.settings (
      id boolean primary key default true check (id),
      cursor_key bytea not null check (length(cursor_key) = 32),
      created_at timestamptz not null default now()
    )`);

    this.addSql(`create table ledger.organizations (
      id uuid primary key,
      name ${NAME},
      unlimited_funding boolean not null default false,
      ${credits('balance_credits')} default 0,
      created_by text not null,
      created_at timestamptz not null default now(),
      constraint unlimited_has_no_balance check (not unlimited_funding or balance_credits = 0)
    )`);

    this.addSql(`create table ledger.members (
      id uuid primary key,
      organization_id uuid not null references ledger.organizations (id),
      identity_user_id text not null check (char_length(identity_user_id) between 1 and 200),
      role text not null check (role in ('owner', 'admin', 'viewer')),
      created_at timestamptz not null default now(),
      constraint members_one_per_identity unique (organization_id, identity_user_id)
    )`);
    this.addSql(`create unique index members_one_owner on ledger.members (organization_id) where role = 'owner'`);
    this.addSql(`create index members_by_identity on ledger.members (identity_user_id)`);

    // budget_credits: allocated from the organization so far; allocated_credits: carved out of it for games.
    // The project's spentCredits is the sum of its games' spending, computed on read (no hot project row).
    this.addSql(`create table ledger.projects (
      id uuid primary key,
      organization_id uuid not null references ledger.organizations (id),
      name ${NAME},
      ${credits('max_payout_credits')},
      ${credits('budget_credits')} default 0,
      ${credits('allocated_credits')} default 0,
      created_at timestamptz not null default now(),
      constraint project_budget_within_ceiling check (budget_credits <= max_payout_credits),
      constraint project_allocation_within_budget check (allocated_credits <= budget_credits)
    )`);
    this.addSql(`create index projects_by_organization on ledger.projects (organization_id, created_at)`);

    this.addSql(`create table ledger.games (
      id uuid primary key,
      project_id uuid not null references ledger.projects (id),
      organization_id uuid not null references ledger.organizations (id),
      slug uuid not null unique,
      name ${NAME},
      platform text not null check (platform in ('android', 'ios', 'other', 'unity', 'unreal', 'web')),
      status text not null default 'active' check (status in ('active', 'paused')),
      ${credits('max_payout_credits')},
      ${credits('budget_credits')} default 0,
      ${credits('spent_credits')} default 0,
      ${credits('daily_player_cap_credits')},
      created_at timestamptz not null default now(),
      constraint game_budget_within_ceiling check (budget_credits <= max_payout_credits),
      constraint game_spent_within_budget check (spent_credits <= budget_credits)
    )`);
    this.addSql(`create index games_by_project on ledger.games (project_id, created_at)`);
    this.addSql(`create index games_by_organization on ledger.games (organization_id, created_at)`);

    this.addSql(`create table ledger.rules (
      id uuid primary key,
      game_id uuid not null references ledger.games (id),
      organization_id uuid not null references ledger.organizations (id),
      event_type ${EVENT_TYPE},
      reward_credits bigint not null check (reward_credits between 1 and 1000000000000),
      active boolean not null default true,
      created_at timestamptz not null default now(),
      constraint rules_one_per_event_type unique (game_id, event_type)
    )`);

    // key_hash: SHA-256 of the whole key value (secret and public); secrets are never stored in clear.
    this.addSql(`create table ledger.keys (
      id uuid primary key,
      game_id uuid not null references ledger.games (id),
      organization_id uuid not null references ledger.organizations (id),
      kind text not null check (kind in ('public', 'secret')),
      name ${NAME},
      prefix text not null check (char_length(prefix) between 1 and 40),
      public_key text,
      key_hash bytea not null unique check (length(key_hash) = 32),
      created_at timestamptz not null default now(),
      revoked_at timestamptz,
      constraint only_public_keys_in_clear check ((kind = 'public') = (public_key is not null))
    )`);
    this.addSql(`create index keys_by_game on ledger.keys (game_id, created_at)`);

    this.addSql(`create table ledger.players (
      id uuid primary key,
      game_id uuid not null references ledger.games (id),
      organization_id uuid not null references ledger.organizations (id),
      external_player_id text not null
        check (char_length(external_player_id) between 1 and 200 and external_player_id !~ '[\\x00-\\x1f\\x7f]'),
      credits_user_id uuid,
      username text,
      linked_at timestamptz,
      created_at timestamptz not null default now(),
      constraint players_one_per_external_id unique (game_id, external_player_id),
      constraint linked_has_account check ((credits_user_id is null) = (linked_at is null))
    )`);
    this.addSql(
      `create unique index players_one_per_account on ledger.players (game_id, credits_user_id) where credits_user_id is not null`,
    );
    this.addSql(`create index players_by_organization on ledger.players (organization_id, created_at desc, id desc)`);
    this.addSql(`create index players_by_game on ledger.players (game_id, created_at desc, id desc)`);

    this.addSql(`create table ledger.link_intents (
      id uuid primary key,
      game_id uuid not null references ledger.games (id),
      player_id uuid not null references ledger.players (id),
      token_hash bytea not null unique check (length(token_hash) = 32),
      expires_at timestamptz not null,
      consumed_at timestamptz,
      consumed_by uuid,
      created_at timestamptz not null default now(),
      constraint consumed_by_someone check ((consumed_at is null) = (consumed_by is null))
    )`);

    this.addSql(`create table ledger.events (
      id uuid primary key,
      game_id uuid not null references ledger.games (id),
      project_id uuid not null references ledger.projects (id),
      organization_id uuid not null references ledger.organizations (id),
      event_id uuid not null,
      player_id uuid not null references ledger.players (id),
      key_id uuid not null references ledger.keys (id),
      event_type ${EVENT_TYPE},
      occurred_at timestamptz not null,
      status text not null check (status in ('accepted', 'rejected')),
      reason text check (reason in ('daily_player_cap', 'game_budget_exhausted', 'game_paused', 'game_payout_ceiling',
        'player_not_linked', 'project_budget_exhausted', 'project_payout_ceiling', 'rate_limited',
        'timestamp_out_of_window', 'unknown_or_inactive_rule', 'user_unavailable')),
      ${credits('reward_credits')},
      payload_hash bytea not null check (length(payload_hash) = 32),
      created_at timestamptz not null default now(),
      constraint events_one_decision unique (game_id, event_id),
      constraint decision_shape check (
        (status = 'accepted' and reason is null and reward_credits > 0)
        or (status = 'rejected' and reason is not null and reward_credits = 0))
    )`);
    this.addSql(`create index events_by_organization on ledger.events (organization_id, created_at desc, id desc)`);
    this.addSql(`create index events_by_project on ledger.events (project_id, created_at desc, id desc)`);
    this.addSql(`create index events_by_game on ledger.events (game_id, created_at desc, id desc)`);
    this.addSql(`create function ledger.refuse_event_change() returns trigger language plpgsql as $$
      begin
        raise exception 'event decisions are immutable' using errcode = 'restrict_violation';
      end $$`);
    this.addSql(`create trigger events_immutable before update or delete on ledger.events
      for each row execute function ledger.refuse_event_change()`);

    // The player's accepted rewards per game and UTC day (the daily cap) and the game's fresh events per minute.
    this.addSql(`create table ledger.player_daily_totals (
      player_id uuid not null references ledger.players (id),
      day date not null,
      ${credits('credits')},
      primary key (player_id, day)
    )`);
    this.addSql(`create table ledger.game_minute_counters (
      game_id uuid not null references ledger.games (id),
      minute timestamptz not null,
      attempts integer not null check (attempts >= 0),
      primary key (game_id, minute)
    )`);

    // Who changed what in the console, for operators.
    this.addSql(`create table ledger.audit_log (
      id bigint generated always as identity primary key,
      organization_id uuid references ledger.organizations (id),
      actor text not null,
      action text not null,
      target_id uuid not null,
      details jsonb not null default '{}',
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index audit_log_by_organization on ledger.audit_log (organization_id, created_at desc)`);
  }
}
