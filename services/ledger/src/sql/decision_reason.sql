-- The current body of ledger.decision_reason: the one place where it is written. Applied as a repeatable migration
-- (services/runtime/src/db/repeatable.ts): after the versioned migrations, whenever this file's SHA-256 differs
-- from the one recorded in ledger.repeatable_migrations, in one transaction. Edit this file to change the function;
-- test/integration/migrations.test.ts checks that the applied body equals this file.
--
-- decision_reason is the decision's check chain: given the state a fresh event meets, it answers the reason of the
-- first failing check (CONTRACT section 7, in the contract's order), or null for an acceptance. The service's
-- decisions (ledger.record_events) and the rule dry-run (ledger.simulate_rule) decide by calling it; they differ only
-- in where the state comes from (the batch's running figures under the game lock, or a replay of stored decisions).
-- The single-event ledger.record_event keeps its own chain on purpose: it is pgbench's baseline and the differential
-- test's independent oracle (test/integration/ingest/batching.test.ts), so a mistake here shows as a difference.
--
--   p_attempts        fresh attempts of the game in the UTC minute of receipt, this one included
--   p_rate_limit      EVENT_RATE_LIMIT_PER_MINUTE
--   p_occurred        the event's occurredAt
--   p_received        its receipt time (createdAt)
--   p_reward          the reward of the game's ACTIVE rule for the event type; null: no such rule, or it is inactive
--   p_game_status     'active' or 'paused'
--   p_linked          whether the player has a creditsUserId
--   p_account_status  the linked platform account's status; null: unknown to the platform
--   p_day_total       the player's accepted credits in this game on the UTC day of receipt, before this event
--   p_daily_cap       the game's dailyPlayerCapCredits
--   p_spent           the game's spentCredits before this event
--   p_budget          the game's budgetCredits
--   p_ceiling         the game's maxPayoutCredits
--
-- project_budget_exhausted and project_payout_ceiling cannot follow a passed game budget check (docs/ingest.md,
-- "Project reasons"): they are not checked.
--
-- A single SQL expression, immutable, with immutable operators only (timestamptz - timestamptz, interval and bigint
-- comparisons): the planner inlines it into the calling statement, so PL/pgSQL callers pay no function call.
create or replace function ledger.decision_reason(
    p_attempts integer,
    p_rate_limit integer,
    p_occurred timestamptz,
    p_received timestamptz,
    p_reward bigint,
    p_game_status text,
    p_linked boolean,
    p_account_status text,
    p_day_total bigint,
    p_daily_cap bigint,
    p_spent bigint,
    p_budget bigint,
    p_ceiling bigint)
  returns text
  language sql
  immutable
  parallel safe
  as $fn$
    select case
      when p_attempts > p_rate_limit then 'rate_limited'
      -- More than 5 minutes before or after receipt; exactly 5 minutes is inside.
      when p_received - p_occurred > interval '5 minutes' or p_occurred - p_received > interval '5 minutes'
        then 'timestamp_out_of_window'
      when p_reward is null then 'unknown_or_inactive_rule'
      when p_game_status <> 'active' then 'game_paused'
      when not p_linked then 'player_not_linked'
      when p_account_status is distinct from 'active' then 'user_unavailable'
      when p_day_total + p_reward > p_daily_cap then 'daily_player_cap'
      when p_spent + p_reward > p_budget then 'game_budget_exhausted'
      when p_spent + p_reward > p_ceiling then 'game_payout_ceiling'
    end
  $fn$;
