-- The current body of ledger.simulate_rule: the one place where it is written. Applied as a repeatable migration
-- (services/runtime/src/db/repeatable.ts): after the versioned migrations, whenever this file's SHA-256 differs
-- from the one recorded in ledger.repeatable_migrations, in one transaction. Edit this file to change the function;
-- test/integration/migrations.test.ts checks that the applied body equals this file.
--
-- simulate_rule: the rule dry-run (GraphQL simulateRule, CONTRACT section 11). It replays a game's stored fresh
-- decisions (every row of ledger.events is one; replays are not stored) created in [p_from, p_to), in their original
-- order (created_at, id: the events_by_game index read backwards, streamed through a cursor), through
-- ledger.decision_reason (the ledger's own check chain) under a proposed rule, and answers what would change. It
-- writes nothing (STABLE: PostgreSQL refuses any write inside it; callers run it in a READ ONLY transaction).
--
-- The state evolves as the ledger's would have, starting from:
--   - spend: the game's spend before p_from (games.spent_credits minus the accepted rewards created since p_from,
--     which equals the sum of the accepted rewards created before p_from), plus the replay's own acceptances;
--   - the player's day total on the UTC day of p_from: the player's accepted credits that day before p_from; each
--     later day starts at 0; plus the replay's own acceptances;
--   - the rate limit: held as stored. A decision stored as rate_limited stays rate_limited (the check comes first,
--     so such an event never touched the spend or a day total), and any other decision passes the rate limit in the
--     replay. The minute's attempts cannot be counted again from the stored rows: the ledger counted them in its
--     minute counters (ledger.game_minute_counters) under the EVENT_RATE_LIMIT_PER_MINUTE of that moment, so a
--     recount would move decisions between rate_limited and the other reasons for causes the proposal has no part in.
--     p_rate_limit_per_minute is kept in the signature for its callers and no longer read;
--   - the rules: the proposed one (p_event_type, p_reward, p_active) in place of the game's rule of that type,
--     the others as they are now; the game's budget, ceiling and status as they are now, its daily player cap the
--     proposed p_daily_cap; players' links and platform accounts as they are now.
-- Events of one receipt instant (one batch) replay in id order, which may differ from their arrival order.
-- Game clocks (migration 0020): each decision replays at its stored game time (created_at + its
-- clock_offset_seconds, null: 0): the occurredAt window and the UTC day of the daily cap on the game's clock as the
-- ledger decided it; the days of the answer are days of the game's clock. The day of p_from
-- is taken on the clock of the game's last decision before p_from.
--
-- Answer (jsonb): considered, spentBefore, flipCount, stored / proposed { accepted, rejected, credits, reasons {reason:
-- count} }, days [{ day, stored {accepted, rejected, credits}, proposed {...} }] (UTC days with events, oldest first),
-- flips: the first p_max_flips events whose decision differs (status, reason or reward), in replay order.
create or replace function ledger.simulate_rule(
    p_game_id uuid,
    p_event_type text,
    p_reward bigint,
    p_daily_cap bigint,
    p_active boolean,
    p_from timestamptz,
    p_to timestamptz,
    p_rate_limit_per_minute integer,
    p_max_flips integer)
  returns jsonb
  language plpgsql
  stable
  set enable_seqscan = off
  set enable_sort = off
  as $fn$
  declare
    c_reasons constant text[] := array['rate_limited', 'timestamp_out_of_window', 'unknown_or_inactive_rule',
      'game_paused', 'player_not_linked', 'user_unavailable', 'daily_player_cap', 'game_budget_exhausted',
      'project_budget_exhausted', 'game_payout_ceiling', 'project_payout_ceiling'];
    v_game ledger.games%rowtype;
    v_spent_before bigint;
    v_spent bigint;
    ru_types text[];
    ru_rewards bigint[];
    e record;
    k integer;
    v_reward bigint;
    v_reason text;
    v_status text;
    v_paid bigint;
    v_day date;
    v_cur_day date := (p_from at time zone 'UTC')::date;
    v_day_total bigint;
    v_from_offset bigint;
    -- Day totals of the current UTC day: player, credits.
    dt_players uuid[];
    dt_credits bigint[];
    -- Totals: then / proposed.
    v_considered integer := 0;
    t_accepted integer := 0;
    t_credits bigint := 0;
    t_reasons integer[] := array_fill(0, array[11]);
    pr_accepted integer := 0;
    pr_credits bigint := 0;
    pr_reasons integer[] := array_fill(0, array[11]);
    -- The current day of the series.
    d_started boolean := false;
    d_t_accepted integer := 0;
    d_t_rejected integer := 0;
    d_t_credits bigint := 0;
    d_p_accepted integer := 0;
    d_p_rejected integer := 0;
    d_p_credits bigint := 0;
    v_days jsonb := '[]';
    v_flips jsonb := '[]';
    v_flip_count integer := 0;
    -- The window's decisions in their original order, streamed: a bound cursor is planned for its first rows
    -- (cursor_tuple_fraction), and sorts are priced out (enable_sort = off), so the order comes from walking
    -- events_by_game backwards, with the player and the account looked up per row.
    c_events cursor for
      select e2.id, e2.event_id, e2.player_id, e2.event_type, e2.occurred_at, e2.created_at, e2.status, e2.reason,
          e2.reward_credits, pl.credits_user_id,
          e2.created_at + coalesce(e2.clock_offset_seconds, 0) * interval '1 second' as game_time,
          (select a.status from identity.native_accounts a where a.credits_user_id = pl.credits_user_id)
            as account_status
        from ledger.events e2
        join ledger.players pl on pl.id = e2.player_id and pl.game_id = e2.game_id
        where e2.game_id = p_game_id and e2.created_at >= p_from and e2.created_at < p_to
        order by e2.created_at, e2.id;
  begin
    -- Read only by construction: refused outside a READ ONLY transaction (and, STABLE, it cannot write anyway).
    if current_setting('transaction_read_only') <> 'on' then
      raise exception 'ledger.simulate_rule runs in a READ ONLY transaction only' using errcode = 'invalid_transaction_state';
    end if;
    select * into v_game from ledger.games g where g.id = p_game_id;
    if not found then
      return null;
    end if;

    -- The rules: the proposal replaces the game's rule of its type; an inactive rule decides like no rule.
    select coalesce(array_agg(r.event_type), '{}'), coalesce(array_agg(r.reward_credits), '{}')
      into ru_types, ru_rewards
      from ledger.rules r
      where r.game_id = p_game_id and r.active and r.event_type <> p_event_type;
    if p_active then
      ru_types := ru_types || p_event_type;
      ru_rewards := ru_rewards || p_reward;
    end if;

    -- The state at p_from. The day of p_from on the game's clock then (the offset of its last decision before).
    select coalesce((select e2.clock_offset_seconds from ledger.events e2
                      where e2.game_id = p_game_id and e2.created_at < p_from
                      order by e2.created_at desc, e2.id desc limit 1), 0)
      into v_from_offset;
    v_cur_day := ((p_from + v_from_offset * interval '1 second') at time zone 'UTC')::date;
    -- (Never below 0: only rows written outside the ledger could make the difference negative.)
    select greatest(v_game.spent_credits - coalesce(sum(e2.reward_credits), 0), 0) into v_spent_before
      from ledger.events e2
      where e2.game_id = p_game_id and e2.created_at >= p_from and e2.status = 'accepted';
    v_spent := v_spent_before;
    select coalesce(array_agg(s.player_id), '{}'), coalesce(array_agg(s.credits), '{}')
      into dt_players, dt_credits
      from (select e2.player_id, sum(e2.reward_credits)::bigint as credits
              from ledger.events e2
              where e2.game_id = p_game_id and e2.status = 'accepted'
                and e2.created_at >= (v_cur_day::timestamp at time zone 'UTC') - v_from_offset * interval '1 second'
                and e2.created_at < p_from
                and ((e2.created_at + coalesce(e2.clock_offset_seconds, 0) * interval '1 second')
                  at time zone 'UTC')::date = v_cur_day
              group by e2.player_id) s;
    for e in c_events
    loop
      v_considered := v_considered + 1;
      v_day := (e.game_time at time zone 'UTC')::date;
      if v_day <> v_cur_day then
        if d_started then
          v_days := v_days || jsonb_build_object('day', v_cur_day::text,
            'stored', jsonb_build_object('accepted', d_t_accepted, 'rejected', d_t_rejected, 'credits', d_t_credits),
            'proposed', jsonb_build_object('accepted', d_p_accepted, 'rejected', d_p_rejected, 'credits', d_p_credits));
        end if;
        v_cur_day := v_day;
        dt_players := '{}';
        dt_credits := '{}';
        d_t_accepted := 0; d_t_rejected := 0; d_t_credits := 0;
        d_p_accepted := 0; d_p_rejected := 0; d_p_credits := 0;
      end if;
      d_started := true;

      -- The state this event meets under the proposal, then the ledger's own decision; the rate limit's outcome as
      -- stored (one attempt of a limit of one: never rate_limited unless it was).
      k := array_position(ru_types, e.event_type);
      v_reward := ru_rewards[k];
      k := array_position(dt_players, e.player_id);
      v_day_total := coalesce(dt_credits[k], 0);
      if e.reason = 'rate_limited' then
        v_reason := 'rate_limited';
      else
        v_reason := ledger.decision_reason(1, 1, e.occurred_at, e.game_time, v_reward,
          v_game.status, e.credits_user_id is not null, e.account_status, v_day_total, p_daily_cap, v_spent,
          v_game.budget_credits, v_game.max_payout_credits);
      end if;
      if v_reason is null then
        v_status := 'accepted';
        v_paid := v_reward;
        v_spent := v_spent + v_reward;
        if k is null then
          dt_players := dt_players || e.player_id;
          dt_credits := dt_credits || v_reward;
        else
          dt_credits[k] := dt_credits[k] + v_reward;
        end if;
        pr_accepted := pr_accepted + 1;
        pr_credits := pr_credits + v_reward;
        d_p_accepted := d_p_accepted + 1;
        d_p_credits := d_p_credits + v_reward;
      else
        v_status := 'rejected';
        v_paid := 0;
        k := array_position(c_reasons, v_reason);
        pr_reasons[k] := pr_reasons[k] + 1;
        d_p_rejected := d_p_rejected + 1;
      end if;

      -- What was decided then.
      if e.status = 'accepted' then
        t_accepted := t_accepted + 1;
        t_credits := t_credits + e.reward_credits;
        d_t_accepted := d_t_accepted + 1;
        d_t_credits := d_t_credits + e.reward_credits;
      else
        k := array_position(c_reasons, e.reason);
        t_reasons[k] := t_reasons[k] + 1;
        d_t_rejected := d_t_rejected + 1;
      end if;

      if e.status <> v_status or e.reason is distinct from v_reason or e.reward_credits <> v_paid then
        v_flip_count := v_flip_count + 1;
        if v_flip_count <= p_max_flips then
          v_flips := v_flips || jsonb_build_object(
            'id', e.id, 'eventId', e.event_id, 'playerId', e.player_id, 'eventType', e.event_type,
            'createdAtMs', floor(extract(epoch from e.created_at) * 1000)::bigint,
            'stored', jsonb_build_object('status', e.status, 'reason', e.reason, 'rewardCredits', e.reward_credits),
            'proposed', jsonb_build_object('status', v_status, 'reason', v_reason, 'rewardCredits', v_paid));
        end if;
      end if;
    end loop;

    if d_started then
      v_days := v_days || jsonb_build_object('day', v_cur_day::text,
        'stored', jsonb_build_object('accepted', d_t_accepted, 'rejected', d_t_rejected, 'credits', d_t_credits),
        'proposed', jsonb_build_object('accepted', d_p_accepted, 'rejected', d_p_rejected, 'credits', d_p_credits));
    end if;

    return jsonb_build_object(
      'considered', v_considered,
      'spentBefore', v_spent_before,
      'flipCount', v_flip_count,
      'stored', jsonb_build_object('accepted', t_accepted, 'rejected', v_considered - t_accepted, 'credits', t_credits,
        'reasons', (select coalesce(jsonb_object_agg(r.reason, r.n), '{}')
                      from unnest(c_reasons, t_reasons) as r(reason, n) where r.n > 0)),
      'proposed', jsonb_build_object('accepted', pr_accepted, 'rejected', v_considered - pr_accepted,
        'credits', pr_credits,
        'reasons', (select coalesce(jsonb_object_agg(r.reason, r.n), '{}')
                      from unnest(c_reasons, pr_reasons) as r(reason, n) where r.n > 0)),
      'days', v_days,
      'flips', v_flips);
  end
  $fn$;
