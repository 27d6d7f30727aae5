-- The current body of ledger.record_events (first created by migration 0004-record-events): the one place where it
-- is written. Applied as a repeatable migration
-- (services/runtime/src/db/repeatable.ts): after the versioned migrations, whenever this file's SHA-256 differs
-- from the one recorded in ledger.repeatable_migrations, in one transaction. Edit this file to change the function;
-- never add a `create or replace` of it to a versioned migration. test/integration/migrations.test.ts checks that
-- the applied body equals this file.
--
-- record_events(key hash, the events as parallel arrays, payload hashes concatenated (32 bytes each), receipt
-- times (null elements: the database's now()), rate limit) returns one row per event, o_index = its position
-- (1-based), with the outcome and decision fields of record_event and, for a fresh decision ('decided'), its quota
-- figures after the decision (CONTRACT section 11), from the state the loop already holds (no extra statement):
--   o_rate_remaining     fresh attempts of the game left in the UTC minute of receipt (limit - attempts, at least 0)
--   o_rate_reset_s       seconds until that minute ends (1..60, rounded up)
--   o_daily_remaining    credits the player may still be awarded in this game on the UTC day of receipt
--                        (daily cap - accepted credits that day, at least 0)
--   o_budget_remaining   credits left in the game's budget (budget - spent)
--
-- The events are decided in arrival order (array order), each as record_event would decide it had it run
-- alone right after the ones before it:
--   - key: read once; unknown, revoked or public: every event is invalid_key.
--   - idempotency: decisions already stored for the batch's event ids are read without any lock; an event id
--     decided earlier in the same batch answers that decision (replay, or event_conflict for another payload).
--   - invalid_player is answered for an event that is neither stored nor decided earlier in the batch.
--   - only when some event needs a fresh decision is the game row locked (FOR NO KEY UPDATE, as record_event);
--     then the key is rechecked (revoked meanwhile: those events are invalid_key) and the stored decisions are
--     read again under the lock (a copy decided by a concurrent batch is a replay here).
--   - each fresh event is decided by ledger.decision_reason (decision_reason.sql), the one check chain, from the
--     state below;
--   - under the lock, the game row, the rules, the accounts, the minute counters and the daily totals that the
--     batch can touch are read once; the loop keeps the running spend, minute attempts and day totals, so each
--     event sees the ones before it. Every writer of those rows holds the game lock, so reading them once is
--     the same as reading them per event. Rules and accounts are not under the game lock in record_event either:
--     reading them once at the start of the batch is the serial order "the change came before/after the batch".
--   - writes, once per batch: one insert of all decisions, one update of the game's spend, one upsert per
--     (player, day) and per (game, minute); the clean-up of old minute counters that record_event does when a
--     minute row is created is done once, relative to the newest new minute. That is the same as doing it per
--     event when the batch's receipt times lie within 5 minutes of each other (always: in production they are all
--     the transaction's now()).
-- Every invariant keeps its constraint (spent <= budget, credits ranges, one decision per (game, event_id)).
--
-- Lookups in the loop use array_position over small arrays (C code, no per-element PL/pgSQL evaluation).
-- plan_cache_mode = force_generic_plan: the statements below take arrays whose lengths change from call to call,
-- so PostgreSQL's plan cache would find each call's custom plan cheaper than the generic one (estimated for 10
-- elements) and plan every statement again on every call; that planning was a third of a small batch's cost
-- (docs/benchmarks.md, "What a batch costs in PostgreSQL"). Every statement here is an index lookup whose plan does
-- not depend on the values.
-- Its result columns change with this file, which `create or replace` cannot do: the function is dropped and created
-- again in the same transaction (callers name the columns they read, so a ledger of the previous version keeps
-- working during a rollout).
drop function if exists ledger.record_events(bytea, uuid[], uuid[], text[], bigint[], bytea, timestamptz[], integer);
create function ledger.record_events(
    p_key_hash bytea,
    p_event_ids uuid[],
    p_player_ids uuid[],
    p_event_types text[],
    p_occurred_at_ms bigint[],
    p_payload_hashes bytea,
    p_received_at timestamptz[],
    p_rate_limit_per_minute integer)
  returns table (
    o_index integer,
    o_outcome text,
    o_id uuid,
    o_game_id uuid,
    o_organization_id uuid,
    o_player_id uuid,
    o_event_type text,
    o_occurred_at_ms bigint,
    o_status text,
    o_reason text,
    o_reward_credits bigint,
    o_created_at_ms bigint,
    o_rate_remaining integer,
    o_rate_reset_s integer,
    o_daily_remaining bigint,
    o_budget_remaining bigint)
  language plpgsql
  set enable_seqscan = off
  set plan_cache_mode = force_generic_plan
  as $fn$
  declare
    n integer := coalesce(array_length(p_event_ids, 1), 0);
    v_now timestamptz := date_trunc('milliseconds', now());
    v_key_id uuid;
    v_game_id uuid;
    v_organization_id uuid;
    v_game ledger.games%rowtype;
    v_need_lock boolean := false;
    v_key_valid boolean := true;
    v_spent bigint;
    i integer;
    j integer;
    k integer;
    v_hash bytea;
    v_received timestamptz;
    v_occurred timestamptz;
    v_minute timestamptz;
    v_day date;
    v_attempts integer;
    v_reward bigint;
    v_user uuid;
    v_account_status text;
    v_day_key text;
    v_day_total bigint;
    v_reason text;
    v_minutes timestamptz[];
    v_days date[];
    v_newest_new_minute timestamptz;
    -- Stored decisions among the batch's event ids.
    s_event_ids uuid[];
    s_ids uuid[];
    s_player_ids uuid[];
    s_event_types text[];
    s_occurred timestamptz[];
    s_status text[];
    s_reason text[];
    s_reward bigint[];
    s_payload bytea[];
    s_created timestamptz[];
    -- The batch's players of this game, their accounts, the game's active rules of the batch's types.
    pl_ids uuid[];
    pl_users uuid[];
    ac_users uuid[];
    ac_status text[];
    ru_types text[];
    ru_rewards bigint[];
    -- Minute counters: minute, attempts stored, attempts added; whether the row existed.
    mi_minutes timestamptz[] := '{}';
    mi_stored integer[] := '{}';
    mi_added integer[] := '{}';
    mi_existed boolean[] := '{}';
    -- Daily totals: key (player|day), player, day, credits stored, credits added.
    dt_keys text[] := '{}';
    dt_players uuid[] := '{}';
    dt_days date[] := '{}';
    dt_stored bigint[] := '{}';
    dt_added bigint[] := '{}';
    -- Decisions made by this batch.
    d_event_ids uuid[] := '{}';
    d_ids uuid[] := '{}';
    d_player_ids uuid[] := '{}';
    d_event_types text[] := '{}';
    d_occurred timestamptz[] := '{}';
    d_status text[] := '{}';
    d_reason text[] := '{}';
    d_reward bigint[] := '{}';
    d_payload bytea[] := '{}';
    d_created timestamptz[] := '{}';
  begin
    if n = 0 then
      return;
    end if;
    if n > 1000 or array_length(p_player_ids, 1) <> n or array_length(p_event_types, 1) <> n
        or array_length(p_occurred_at_ms, 1) <> n or length(p_payload_hashes) <> 32 * n
        or array_length(p_received_at, 1) <> n then
      raise exception 'record_events: malformed batch of % events', n using errcode = 'invalid_parameter_value';
    end if;

    -- The key: known, secret, not revoked.
    -- The game's organization is every decision's (the events' foreign key (game, project, organization)).
    select k2.id, k2.game_id, g.organization_id into v_key_id, v_game_id, v_organization_id
      from ledger.keys k2 join ledger.games g on g.id = k2.game_id
      where k2.key_hash = p_key_hash and k2.kind = 'secret' and k2.revoked_at is null;
    if not found then
      return query select g.pos, 'invalid_key'::text, null::uuid, null::uuid, null::uuid, null::uuid, null::text,
          null::bigint, null::text, null::text, null::bigint, null::bigint, null::integer, null::integer,
          null::bigint, null::bigint
        from generate_series(1, n) as g(pos);
      return;
    end if;

    -- Idempotency without the game lock: replays are reads.
    select array_agg(e.event_id), array_agg(e.id), array_agg(e.player_id), array_agg(e.event_type),
        array_agg(e.occurred_at), array_agg(e.status), array_agg(e.reason), array_agg(e.reward_credits),
        array_agg(e.payload_hash), array_agg(e.created_at)
      into s_event_ids, s_ids, s_player_ids, s_event_types, s_occurred, s_status, s_reason, s_reward, s_payload,
        s_created
      -- Through events_one_decision (event_id, game_id) only: the game filter stays outside the subquery, so
      -- no statistics can make this lookup scan the game's history through events_by_game (migration 0007).
      from (select * from ledger.events e0 where e0.event_id = any(p_event_ids) offset 0) e
      where e.game_id = v_game_id;
    -- The same for the players: through the primary key only, never an index of all the game's players.
    select array_agg(pl.id), array_agg(pl.credits_user_id) into pl_ids, pl_users
      from (select * from ledger.players p0 where p0.id = any(p_player_ids) offset 0) pl
      where pl.game_id = v_game_id;
    for i in 1..n loop
      if array_position(s_event_ids, p_event_ids[i]) is null
          and array_position(pl_ids, p_player_ids[i]) is not null then
        v_need_lock := true;
        exit;
      end if;
    end loop;

    if v_need_lock then
      -- Fresh events: serialize on the game row, then look again.
      select * into strict v_game from ledger.games g where g.id = v_game_id for no key update;
      perform 1 from ledger.keys k2 where k2.id = v_key_id and k2.revoked_at is null;
      v_key_valid := found;
      if v_key_valid then
        select array_agg(e.event_id), array_agg(e.id), array_agg(e.player_id), array_agg(e.event_type),
            array_agg(e.occurred_at), array_agg(e.status), array_agg(e.reason), array_agg(e.reward_credits),
            array_agg(e.payload_hash), array_agg(e.created_at)
          into s_event_ids, s_ids, s_player_ids, s_event_types, s_occurred, s_status, s_reason, s_reward,
            s_payload, s_created
          from (select * from ledger.events e0 where e0.event_id = any(p_event_ids) offset 0) e
          where e.game_id = v_game_id;
        select array_agg(r.event_type), array_agg(r.reward_credits) into ru_types, ru_rewards
          from ledger.rules r
          where r.game_id = v_game_id and r.event_type = any(p_event_types) and r.active;
        -- The platform account lives in the identity schema of the same database (read only).
        select array_agg(a.credits_user_id), array_agg(a.status) into ac_users, ac_status
          from identity.native_accounts a where a.credits_user_id = any(pl_users);
        select array_agg(distinct date_trunc('minute', date_trunc('milliseconds', coalesce(r, v_now)), 'UTC')),
            array_agg(distinct (date_trunc('milliseconds', coalesce(r, v_now)) at time zone 'UTC')::date)
          into v_minutes, v_days
          from unnest(p_received_at) as u(r);
        select coalesce(array_agg(c.minute), '{}'), coalesce(array_agg(c.attempts), '{}'),
            coalesce(array_agg(0), '{}'), coalesce(array_agg(true), '{}')
          into mi_minutes, mi_stored, mi_added, mi_existed
          -- OFFSET 0 keeps the minute filter out of the scan: the rows come through the primary key (game_id,
          -- minute), never the retention's index by minute (all games' rows of that minute).
          from (select * from ledger.game_minute_counters c0 where c0.game_id = v_game_id offset 0) c
          where c.minute = any(v_minutes);
        select coalesce(array_agg(t.player_id::text || '|' || t.day::text), '{}'),
            coalesce(array_agg(t.player_id), '{}'), coalesce(array_agg(t.day), '{}'),
            coalesce(array_agg(t.credits), '{}'), coalesce(array_agg(0::bigint), '{}')
          into dt_keys, dt_players, dt_days, dt_stored, dt_added
          -- The same for the players' rows (a few days each, the retention keeps three): through the primary key
          -- (player_id, day), never the index by day (every player's row of the day), whatever the statistics say.
          from (select * from ledger.player_daily_totals t0 where t0.player_id = any(pl_ids) offset 0) t
          where t.day = any(v_days);
      end if;
      v_spent := v_game.spent_credits;
    end if;

    for i in 1..n loop
      o_index := i;
      o_outcome := null; o_id := null; o_game_id := null; o_organization_id := null; o_player_id := null;
      o_event_type := null; o_occurred_at_ms := null; o_status := null; o_reason := null;
      o_reward_credits := null; o_created_at_ms := null;
      o_rate_remaining := null; o_rate_reset_s := null; o_daily_remaining := null; o_budget_remaining := null;
      v_hash := substring(p_payload_hashes from (i - 1) * 32 + 1 for 32);

      j := array_position(s_event_ids, p_event_ids[i]);
      if j is not null then
        if s_payload[j] <> v_hash then
          o_outcome := 'event_conflict';
        else
          o_outcome := 'replayed';
          o_id := s_ids[j];
          o_game_id := v_game_id;
          o_organization_id := v_organization_id;
          o_player_id := s_player_ids[j];
          o_event_type := s_event_types[j];
          o_occurred_at_ms := floor(extract(epoch from s_occurred[j]) * 1000);
          o_status := s_status[j];
          o_reason := s_reason[j];
          o_reward_credits := s_reward[j];
          o_created_at_ms := floor(extract(epoch from s_created[j]) * 1000);
        end if;
        return next;
        continue;
      end if;

      j := array_position(d_event_ids, p_event_ids[i]);
      if j is not null then
        if d_payload[j] <> v_hash then
          o_outcome := 'event_conflict';
        else
          o_outcome := 'replayed';
          o_id := d_ids[j];
          o_game_id := v_game_id;
          o_organization_id := v_organization_id;
          o_player_id := d_player_ids[j];
          o_event_type := d_event_types[j];
          o_occurred_at_ms := floor(extract(epoch from d_occurred[j]) * 1000);
          o_status := d_status[j];
          o_reason := d_reason[j];
          o_reward_credits := d_reward[j];
          o_created_at_ms := floor(extract(epoch from d_created[j]) * 1000);
        end if;
        return next;
        continue;
      end if;

      k := array_position(pl_ids, p_player_ids[i]);
      if k is null then
        o_outcome := 'invalid_player';
        return next;
        continue;
      end if;
      if not v_key_valid then
        o_outcome := 'invalid_key';
        return next;
        continue;
      end if;
      if not v_need_lock then
        raise exception 'record_events: a fresh event without the game lock' using errcode = 'internal_error';
      end if;
      v_user := pl_users[k];

      v_received := date_trunc('milliseconds', coalesce(p_received_at[i], v_now));
      v_occurred := timestamptz 'epoch' + p_occurred_at_ms[i] * interval '1 millisecond';
      v_minute := date_trunc('minute', v_received, 'UTC');
      v_day := (v_received at time zone 'UTC')::date;
      v_day_key := p_player_ids[i]::text || '|' || v_day::text;

      -- Rate limit: every fresh attempt of the game in the UTC minute of receipt counts.
      k := array_position(mi_minutes, v_minute);
      if k is null then
        mi_minutes := mi_minutes || v_minute;
        mi_stored := mi_stored || 0;
        mi_added := mi_added || 0;
        mi_existed := mi_existed || false;
        k := array_length(mi_minutes, 1);
      end if;
      mi_added[k] := mi_added[k] + 1;
      v_attempts := mi_stored[k] + mi_added[k];

      -- The state this event meets, then the decision: ledger.decision_reason names the first failing check
      -- (CONTRACT section 7), the one implementation record_event and simulate_rule call too.
      k := array_position(ru_types, p_event_types[i]);
      v_reward := ru_rewards[k];
      k := array_position(ac_users, v_user);
      v_account_status := ac_status[k];
      j := array_position(dt_keys, v_day_key);
      v_day_total := coalesce(dt_stored[j] + dt_added[j], 0);
      v_reason := ledger.decision_reason(v_attempts, p_rate_limit_per_minute, v_occurred, v_received, v_reward,
        v_game.status, v_user is not null, v_account_status, v_day_total, v_game.daily_player_cap_credits, v_spent,
        v_game.budget_credits, v_game.max_payout_credits);
      if v_reason is null then
        if j is null then
          dt_keys := dt_keys || v_day_key;
          dt_players := dt_players || p_player_ids[i];
          dt_days := dt_days || v_day;
          dt_stored := dt_stored || 0::bigint;
          dt_added := dt_added || v_reward;
        else
          dt_added[j] := dt_added[j] + v_reward;
        end if;
        v_spent := v_spent + v_reward;
      end if;

      o_outcome := 'decided';
      o_id := gen_random_uuid();
      o_game_id := v_game_id;
      o_organization_id := v_organization_id;
      o_player_id := p_player_ids[i];
      o_event_type := p_event_types[i];
      o_occurred_at_ms := p_occurred_at_ms[i];
      o_status := case when v_reason is null then 'accepted' else 'rejected' end;
      o_reason := v_reason;
      o_reward_credits := case when v_reason is null then v_reward else 0 end;
      o_created_at_ms := floor(extract(epoch from v_received) * 1000);
      -- The quota figures after this decision.
      o_rate_remaining := greatest(p_rate_limit_per_minute - v_attempts, 0);
      o_rate_reset_s := ceil(extract(epoch from (v_minute + interval '1 minute') - v_received))::integer;
      k := array_position(dt_keys, v_day_key);
      o_daily_remaining := greatest(
        v_game.daily_player_cap_credits - case when k is null then 0 else dt_stored[k] + dt_added[k] end, 0);
      o_budget_remaining := v_game.budget_credits - v_spent;

      d_event_ids := d_event_ids || p_event_ids[i];
      d_ids := d_ids || o_id;
      d_player_ids := d_player_ids || o_player_id;
      d_event_types := d_event_types || o_event_type;
      d_occurred := d_occurred || v_occurred;
      d_status := d_status || o_status;
      d_reason := d_reason || o_reason;
      d_reward := d_reward || o_reward_credits;
      d_payload := d_payload || v_hash;
      d_created := d_created || v_received;
      return next;
    end loop;

    if coalesce(array_length(d_ids, 1), 0) > 0 then
      insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
          occurred_at, status, reason, reward_credits, payload_hash, created_at)
        select u.id, v_game_id, v_game.project_id, v_game.organization_id, u.event_id, u.player_id, v_key_id,
            u.event_type, u.occurred_at, u.status, u.reason, u.reward, u.payload, u.created
          from unnest(d_ids, d_event_ids, d_player_ids, d_event_types, d_occurred, d_status, d_reason, d_reward,
            d_payload, d_created)
            as u(id, event_id, player_id, event_type, occurred_at, status, reason, reward, payload, created);
      if v_spent <> v_game.spent_credits then
        update ledger.games g set spent_credits = g.spent_credits + (v_spent - v_game.spent_credits)
          where g.id = v_game_id;
      end if;
      insert into ledger.player_daily_totals as t (player_id, day, credits)
        select u.player_id, u.day, u.added
          from unnest(dt_players, dt_days, dt_added) as u(player_id, day, added)
          where u.added > 0
        on conflict (player_id, day) do update set credits = t.credits + excluded.credits;
      insert into ledger.game_minute_counters as c (game_id, minute, attempts)
        select v_game_id, u.minute, u.added
          from unnest(mi_minutes, mi_added) as u(minute, added)
          where u.added > 0
        on conflict (game_id, minute) do update set attempts = c.attempts + excluded.attempts;
      select max(u.minute) into v_newest_new_minute
        from unnest(mi_minutes, mi_existed, mi_added) as u(minute, existed, added)
        where not u.existed and u.added > 0;
      if v_newest_new_minute is not null then
        -- A new minute for this game: forget minutes long past (as record_event does).
        delete from ledger.game_minute_counters c
          where c.game_id = v_game_id and c.minute < v_newest_new_minute - interval '5 minutes';
      end if;
    end if;
  end
  $fn$;
