-- The current body of ledger.record_events (first created by migration 0004-record-events): the one place where it
-- is written. Applied as a repeatable migration
-- (services/runtime/src/db/repeatable.ts): after the versioned migrations, whenever this file's SHA-256 differs
-- from the one recorded in ledger.repeatable_migrations, in one transaction. Edit this file to change the function;
-- never add a `create or replace` of it to a versioned migration. test/integration/migrations.test.ts checks that
-- the applied body equals this file.
--
-- record_events(key hash of each event, the events as parallel arrays, payload hashes concatenated (32 bytes each),
-- receipt times (null elements: the database's now()), rate limit, each event's metadata as RFC 8785 canonical JSON
-- text (null elements, or a null array: none), stored with a fresh decision and never read by it), and the id each
-- event's fresh decision takes (null elements, or a null array: one made here; the ledger proposes them, so that
-- after a lost answer it can tell its own decision from another request's: repository.ts, storedDecision) returns
-- one row
-- per event, o_index = its position (1-based), with the outcome and decision fields of record_event and, for a fresh decision ('decided'), its quota
-- figures after the decision (CONTRACT section 11), from the state the loop already holds (no extra statement):
--   o_rate_remaining     fresh attempts of the game left in the UTC minute of receipt (limit - attempts, at least 0)
--   o_rate_reset_s       seconds until that minute ends (1..60, rounded up)
--   o_daily_remaining    credits the player may still be awarded in this game on the UTC day of receipt on the
--                        game's clock (daily cap - accepted credits that day, at least 0)
--   o_budget_remaining   credits left in the game's budget (budget - spent)
--   o_clock_offset_s     the game's clock offset in seconds the decision was made with (null when 0; migration 0020)
--
-- One call decides the events of one key or of several keys (so of several games): the ledger sends the batches of
-- the keys that are ready together as one call (services/ledger/src/events/batcher.ts). What a call costs beyond
-- its events (each statement's executor start-up, the check constraints an insert prepares, the round trip and
-- the commit) is then paid once for all of its games instead of once per game (docs/benchmarks.md, "One call for
-- several games").
--
-- The events are decided in arrival order (array order), each as record_event would decide it had it run
-- alone right after the ones before it:
--   - keys: read once; an unknown, revoked or public key: its events are invalid_key.
--   - idempotency: decisions already stored for the call's event ids (in their keys' games) are read without any
--     lock; an event id decided earlier in the same call for the same game answers that decision (replay, or
--     event_conflict for another payload).
--   - invalid_player is answered for an event whose player is not one of its key's game (and that is neither stored
--     nor decided earlier in the call).
--   - only the games with some event that needs a fresh decision are locked (FOR NO KEY UPDATE, as record_event), in
--     one statement, in the order of their ids: two calls that share games lock them in the same order, so they
--     cannot deadlock. Then the keys are rechecked (revoked meanwhile: those keys' fresh events are invalid_key)
--     and the stored decisions are read again under the locks (a copy decided by a concurrent call is a replay).
--   - each fresh event is decided by ledger.decision_reason (decision_reason.sql), the one check chain, from the
--     state below;
--   - under the locks, the game rows, the rules, the accounts, the minute counters and the daily totals that the
--     call can touch are read once; the loop keeps each game's running spend and minute attempts and each player's
--     day totals, so each event sees the ones before it. Every writer of those rows holds the game lock, so reading
--     them once is the same as reading them per event. Rules and accounts are not under the game lock in
--     record_event either: reading them once at the start of the call is the serial order "the change came
--     before/after the call".
--   - writes, once per call: one insert of all decisions, one update of the games' spend, one upsert per
--     (game, player, day) and per (game, minute); the clean-up of old minute counters that record_event does when
--     a minute row is created is done once per game, relative to its newest new minute. That is the same as doing
--     it per event when the call's receipt times lie within 5 minutes of each other (always: in production they are
--     all the transaction's now()).
--   - the webhook outbox (docs/webhooks.md): what reports the call's decisions (one row of (endpoint, decision)
--     pairs, made into messages by the delivery worker) and its budget notices, in the same transaction; skipped
--     after one index probe when none of the call's games has an enabled endpoint.
-- Every invariant keeps its constraint (spent <= budget, credits ranges, one decision per (game, event_id)).
--
-- Game clocks (CONTRACT section 11.2, migration 0020): a game's clock is the receipt time plus its
-- clock_offset_seconds, read with the game row the call already locks (no extra statement). The occurredAt window
-- and the UTC day of the daily cap use the game's clock (the edge checks no window: decision_reason is the only
-- place); the rate limit's minute and created_at stay real time. A fresh decision stores its offset (null when 0),
-- so its game time is created_at + offset; a replay answers the stored decision whatever the clock says.
--
-- Lookups in the loop use array_position over small arrays (C code, no per-element PL/pgSQL evaluation); a lookup
-- by (game, something) finds the first match by the second value and moves on while the game differs (the games of
-- one call are few). Arrays the loop fills are assigned by subscript (in place), not appended to (a copy each time).
-- plan_cache_mode = force_generic_plan: the statements below take arrays whose lengths change from call to call,
-- so PostgreSQL's plan cache would find each call's custom plan cheaper than the generic one (estimated for 10
-- elements) and plan every statement again on every call; that planning was a third of a small batch's cost
-- (docs/benchmarks.md, "What a batch costs in PostgreSQL"). Every statement here is an index lookup whose plan does
-- not depend on the values.
-- Its result columns or arguments change with this file, which `create or replace` cannot do: the function is
-- dropped and created again in the same transaction. Callers name the columns they read, so a ledger of the previous
-- release keeps working when a column is added. The signatures of releases before it (no proposed decision ids, no
-- metadata, one key hash for the batch) are dropped: no release that can run beside this one calls them. A later
-- change of the arguments keeps the previous release's signature as a one-line SQL function calling this one.
drop function if exists ledger.record_events(bytea, uuid[], uuid[], text[], bigint[], bytea, timestamptz[], integer);
drop function if exists ledger.record_events(bytea[], uuid[], uuid[], text[], bigint[], bytea, timestamptz[], integer);
drop function if exists ledger.record_events(bytea[], uuid[], uuid[], text[], bigint[], bytea, timestamptz[], integer,
  text[]);
drop function if exists ledger.record_events(bytea[], uuid[], uuid[], text[], bigint[], bytea, timestamptz[], integer,
  text[], uuid[]);
create function ledger.record_events(
    p_key_hashes bytea[],
    p_event_ids uuid[],
    p_player_ids uuid[],
    p_event_types text[],
    p_occurred_at_ms bigint[],
    p_payload_hashes bytea,
    p_received_at timestamptz[],
    p_rate_limit_per_minute integer,
    p_metadata text[],
    p_decision_ids uuid[])
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
    o_budget_remaining bigint,
    o_clock_offset_s bigint)
  language plpgsql
  set enable_seqscan = off
  set plan_cache_mode = force_generic_plan
  as $fn$
  declare
    n integer := coalesce(array_length(p_event_ids, 1), 0);
    v_now timestamptz := date_trunc('milliseconds', now());
    i integer;
    j integer;
    k integer;
    kx integer;
    gi integer;
    v_game_id uuid;
    v_hash bytea;
    v_received timestamptz;
    v_game_now timestamptz;
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
    v_new_minute boolean := false;
    v_spend_changed boolean := false;
    -- The call's keys that are known, secret and unrevoked, with their games; per event, its key's position here.
    ky_hashes bytea[];
    ky_ids uuid[];
    ky_games uuid[];
    ky_orgs uuid[];
    ky_live uuid[];
    ev_key integer[];
    -- The games with an event that needs a fresh decision (locked), their rows, and their running spend.
    lk_games uuid[] := '{}';
    gm_ids uuid[];
    gm_projects uuid[];
    gm_orgs uuid[];
    gm_status text[];
    gm_cap bigint[];
    gm_budget bigint[];
    gm_ceiling bigint[];
    gm_spent0 bigint[];
    gm_spent bigint[];
    gm_offset bigint[];
    d_offsets bigint[] := '{}';
    -- The decisions of the call's event ids: the stored ones (s_stored of them), then those this call makes, in
    -- order (s_n in all); an event finds the decision it replays here, stored or made earlier in the call.
    s_stored integer;
    s_n integer;
    s_games uuid[];
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
    -- The call's players of its keys' games, their accounts, the locked games' active rules of the call's types.
    pl_ids uuid[];
    pl_games uuid[];
    pl_users uuid[];
    ac_users uuid[];
    ac_status text[];
    ru_games uuid[];
    ru_types text[];
    ru_rewards bigint[];
    -- Minute counters: game, minute, attempts stored, attempts added; whether the row existed.
    mi_n integer := 0;
    mi_games uuid[] := '{}';
    mi_minutes timestamptz[] := '{}';
    mi_stored integer[] := '{}';
    mi_added integer[] := '{}';
    mi_existed boolean[] := '{}';
    -- Daily totals: key (player|day), game, player, day, credits stored, credits added.
    dt_n integer := 0;
    dt_keys text[] := '{}';
    dt_games uuid[] := '{}';
    dt_players uuid[] := '{}';
    dt_days date[] := '{}';
    dt_stored bigint[] := '{}';
    dt_added bigint[] := '{}';
    -- What else the insert of the decisions made by this call needs (the rest is s_*[s_stored + 1:]).
    d_n integer := 0;
    d_projects uuid[] := '{}';
    d_orgs uuid[] := '{}';
    d_key_ids uuid[] := '{}';
    d_metadata text[] := '{}';
  begin
    if n = 0 then
      return;
    end if;
    if n > 1000 or array_length(p_key_hashes, 1) <> n or array_length(p_player_ids, 1) <> n
        or array_length(p_event_types, 1) <> n or array_length(p_occurred_at_ms, 1) <> n
        or length(p_payload_hashes) <> 32 * n or array_length(p_received_at, 1) <> n
        or (p_metadata is not null and array_length(p_metadata, 1) <> n)
        or (p_decision_ids is not null and array_length(p_decision_ids, 1) <> n) then
      raise exception 'record_events: malformed batch of % events', n using errcode = 'invalid_parameter_value';
    end if;

    -- The keys: known, secret, not revoked. A game's organization is every decision's (the events' foreign key
    -- (game, project, organization)).
    select array_agg(k2.key_hash), array_agg(k2.id), array_agg(k2.game_id), array_agg(g.organization_id)
      into ky_hashes, ky_ids, ky_games, ky_orgs
      from ledger.keys k2 join ledger.games g on g.id = k2.game_id
      where k2.key_hash = any(p_key_hashes) and k2.kind = 'secret' and k2.revoked_at is null;
    ev_key := array_fill(null::integer, array[n]);
    if ky_ids is not null then
      for i in 1..n loop
        ev_key[i] := array_position(ky_hashes, p_key_hashes[i]);
      end loop;

      -- Idempotency without the game locks: replays are reads.
      select array_agg(e.game_id), array_agg(e.event_id), array_agg(e.id), array_agg(e.player_id),
          array_agg(e.event_type), array_agg(e.occurred_at), array_agg(e.status), array_agg(e.reason),
          array_agg(e.reward_credits), array_agg(e.payload_hash), array_agg(e.created_at)
        into s_games, s_event_ids, s_ids, s_player_ids, s_event_types, s_occurred, s_status, s_reason, s_reward,
          s_payload, s_created
        -- Through events_one_decision (event_id, game_id) only: the game filter stays outside the subquery, so
        -- no statistics can make this lookup scan the games' histories through events_by_game (migration 0007).
        from (select * from ledger.events e0 where e0.event_id = any(p_event_ids) offset 0) e
        where e.game_id = any(ky_games);
      -- The same for the players: through the primary key only, never an index of all the games' players.
      select array_agg(pl.id), array_agg(pl.game_id), array_agg(pl.credits_user_id) into pl_ids, pl_games, pl_users
        from (select * from ledger.players p0 where p0.id = any(p_player_ids) offset 0) pl
        where pl.game_id = any(ky_games);

      -- The games that need their lock: those with an event neither stored nor of an unknown player.
      for i in 1..n loop
        kx := ev_key[i];
        continue when kx is null;
        v_game_id := ky_games[kx];
        continue when v_game_id = any(lk_games);
        k := array_position(pl_ids, p_player_ids[i]);
        continue when k is null or pl_games[k] <> v_game_id;
        j := array_position(s_event_ids, p_event_ids[i]);
        while j is not null and s_games[j] <> v_game_id loop
          j := array_position(s_event_ids, p_event_ids[i], j + 1);
        end loop;
        if j is null then
          lk_games := lk_games || v_game_id;
        end if;
      end loop;
    end if;

    if cardinality(lk_games) > 0 then
      -- Fresh events: serialize on the game rows (in the order of their ids), then look again.
      select array_agg(g.id), array_agg(g.project_id), array_agg(g.organization_id), array_agg(g.status),
          array_agg(g.daily_player_cap_credits), array_agg(g.budget_credits), array_agg(g.max_payout_credits),
          array_agg(g.spent_credits), array_agg(g.clock_offset_seconds)
        into gm_ids, gm_projects, gm_orgs, gm_status, gm_cap, gm_budget, gm_ceiling, gm_spent0, gm_offset
        from (select * from ledger.games g0 where g0.id = any(lk_games) order by g0.id for no key update) g;
      if coalesce(cardinality(gm_ids), 0) <> cardinality(lk_games) then
        raise exception 'record_events: a game of the call is missing' using errcode = 'internal_error';
      end if;
      gm_spent := gm_spent0;
      select array_agg(k2.id) into ky_live from ledger.keys k2 where k2.id = any(ky_ids) and k2.revoked_at is null;
      -- The stored decisions again, as the arrays the decisions of this call are appended to (from s_stored + 1).
      select coalesce(array_agg(e.game_id), '{}'), coalesce(array_agg(e.event_id), '{}'),
          coalesce(array_agg(e.id), '{}'), coalesce(array_agg(e.player_id), '{}'),
          coalesce(array_agg(e.event_type), '{}'), coalesce(array_agg(e.occurred_at), '{}'),
          coalesce(array_agg(e.status), '{}'), coalesce(array_agg(e.reason), '{}'),
          coalesce(array_agg(e.reward_credits), '{}'), coalesce(array_agg(e.payload_hash), '{}'),
          coalesce(array_agg(e.created_at), '{}'), count(*)
        into s_games, s_event_ids, s_ids, s_player_ids, s_event_types, s_occurred, s_status, s_reason, s_reward,
          s_payload, s_created, s_stored
        from (select * from ledger.events e0 where e0.event_id = any(p_event_ids) offset 0) e
        where e.game_id = any(ky_games);
      s_n := s_stored;
      select array_agg(r.game_id), array_agg(r.event_type), array_agg(r.reward_credits)
        into ru_games, ru_types, ru_rewards
        from ledger.rules r
        where r.game_id = any(gm_ids) and r.event_type = any(p_event_types) and r.active;
      -- The platform account lives in the identity schema of the same database (read only).
      select array_agg(a.credits_user_id), array_agg(a.status) into ac_users, ac_status
        from identity.native_accounts a where a.credits_user_id = any(pl_users);
      select array_agg(distinct date_trunc('minute', date_trunc('milliseconds', coalesce(r, v_now)), 'UTC'))
        into v_minutes
        from unnest(p_received_at) as u(r);
      -- The days on the games' clocks (each receipt time on each offset of the call's games: a superset).
      select array_agg(distinct ((date_trunc('milliseconds', coalesce(r, v_now)) + o * interval '1 second')
            at time zone 'UTC')::date)
        into v_days
        from unnest(p_received_at) as u(r) cross join (select distinct o from unnest(gm_offset) as g(o)) g;
      select coalesce(array_agg(c.game_id), '{}'), coalesce(array_agg(c.minute), '{}'),
          coalesce(array_agg(c.attempts), '{}'), coalesce(array_agg(0), '{}'), coalesce(array_agg(true), '{}'),
          count(*)
        into mi_games, mi_minutes, mi_stored, mi_added, mi_existed, mi_n
        -- OFFSET 0 keeps the minute filter out of the scan: the rows come through the primary key (game_id,
        -- minute), never the retention's index by minute (all games' rows of that minute).
        from (select * from ledger.game_minute_counters c0 where c0.game_id = any(gm_ids) offset 0) c
        where c.minute = any(v_minutes);
      select coalesce(array_agg(t.player_id::text || '|' || t.day::text), '{}'),
          coalesce(array_agg(t.game_id), '{}'), coalesce(array_agg(t.player_id), '{}'),
          coalesce(array_agg(t.day), '{}'), coalesce(array_agg(t.credits), '{}'), coalesce(array_agg(0::bigint), '{}'),
          count(*)
        into dt_keys, dt_games, dt_players, dt_days, dt_stored, dt_added, dt_n
        -- The same for the players' rows (a few days each, the retention keeps three): through the primary key
        -- (player_id, game_id, day), never the index by day (every player's row of the day), whatever the
        -- statistics say.
        from (select * from ledger.player_daily_totals t0 where t0.player_id = any(pl_ids) offset 0) t
        where t.game_id = any(gm_ids) and t.day = any(v_days);
    end if;

    for i in 1..n loop
      o_index := i;
      o_outcome := null; o_id := null; o_game_id := null; o_organization_id := null; o_player_id := null;
      o_event_type := null; o_occurred_at_ms := null; o_status := null; o_reason := null;
      o_reward_credits := null; o_created_at_ms := null;
      o_rate_remaining := null; o_rate_reset_s := null; o_daily_remaining := null; o_budget_remaining := null;
      o_clock_offset_s := null;

      kx := ev_key[i];
      if kx is null then
        o_outcome := 'invalid_key';
        return next;
        continue;
      end if;
      v_game_id := ky_games[kx];
      v_hash := substring(p_payload_hashes from (i - 1) * 32 + 1 for 32);

      -- A decision of this event id in its game, stored or made earlier in the call: a replay (or a conflict).
      j := array_position(s_event_ids, p_event_ids[i]);
      while j is not null and s_games[j] <> v_game_id loop
        j := array_position(s_event_ids, p_event_ids[i], j + 1);
      end loop;
      if j is not null then
        if s_payload[j] <> v_hash then
          o_outcome := 'event_conflict';
        else
          o_outcome := 'replayed';
          o_id := s_ids[j];
          o_game_id := v_game_id;
          o_organization_id := ky_orgs[kx];
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

      k := array_position(pl_ids, p_player_ids[i]);
      if k is null or pl_games[k] <> v_game_id then
        o_outcome := 'invalid_player';
        return next;
        continue;
      end if;
      gi := array_position(gm_ids, v_game_id);
      if gi is null then
        raise exception 'record_events: a fresh event without the game lock' using errcode = 'internal_error';
      end if;
      if not coalesce(ky_ids[kx] = any(ky_live), false) then
        -- Revoked while the call waited for the lock.
        o_outcome := 'invalid_key';
        return next;
        continue;
      end if;
      v_user := pl_users[k];

      v_received := date_trunc('milliseconds', coalesce(p_received_at[i], v_now));
      v_occurred := timestamptz 'epoch' + p_occurred_at_ms[i] * interval '1 millisecond';
      v_game_now := v_received + gm_offset[gi] * interval '1 second';
      v_minute := date_trunc('minute', v_received, 'UTC');
      v_day := (v_game_now at time zone 'UTC')::date;
      v_day_key := p_player_ids[i]::text || '|' || v_day::text;

      -- Rate limit: every fresh attempt of the game in the UTC minute of receipt counts.
      k := array_position(mi_minutes, v_minute);
      while k is not null and mi_games[k] <> v_game_id loop
        k := array_position(mi_minutes, v_minute, k + 1);
      end loop;
      if k is null then
        mi_n := mi_n + 1;
        k := mi_n;
        mi_games[k] := v_game_id;
        mi_minutes[k] := v_minute;
        mi_stored[k] := 0;
        mi_added[k] := 0;
        mi_existed[k] := false;
        v_new_minute := true;
      end if;
      mi_added[k] := mi_added[k] + 1;
      v_attempts := mi_stored[k] + mi_added[k];

      -- The state this event meets, then the decision: ledger.decision_reason names the first failing check
      -- (CONTRACT section 7), the one implementation record_event and simulate_rule call too.
      k := array_position(ru_types, p_event_types[i]);
      while k is not null and ru_games[k] <> v_game_id loop
        k := array_position(ru_types, p_event_types[i], k + 1);
      end loop;
      v_reward := ru_rewards[k];
      k := array_position(ac_users, v_user);
      v_account_status := ac_status[k];
      j := array_position(dt_keys, v_day_key);
      v_day_total := coalesce(dt_stored[j] + dt_added[j], 0);
      v_reason := ledger.decision_reason(v_attempts, p_rate_limit_per_minute, v_occurred, v_game_now, v_reward,
        gm_status[gi], v_user is not null, v_account_status, v_day_total, gm_cap[gi], gm_spent[gi],
        gm_budget[gi], gm_ceiling[gi]);
      if v_reason is null then
        if j is null then
          dt_n := dt_n + 1;
          j := dt_n;
          dt_keys[j] := v_day_key;
          dt_games[j] := v_game_id;
          dt_players[j] := p_player_ids[i];
          dt_days[j] := v_day;
          dt_stored[j] := 0;
          dt_added[j] := v_reward;
        else
          dt_added[j] := dt_added[j] + v_reward;
        end if;
        gm_spent[gi] := gm_spent[gi] + v_reward;
        v_spend_changed := v_spend_changed or v_reward <> 0;
      end if;

      o_outcome := 'decided';
      o_id := coalesce(p_decision_ids[i], gen_random_uuid());
      o_game_id := v_game_id;
      o_organization_id := gm_orgs[gi];
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
      o_daily_remaining := greatest(
        gm_cap[gi] - case when j is null then 0 else dt_stored[j] + dt_added[j] end, 0);
      o_budget_remaining := gm_budget[gi] - gm_spent[gi];
      -- The game's clock offset of a fresh decision (null when 0): its gameTime for the live notice.
      o_clock_offset_s := nullif(gm_offset[gi], 0);

      s_n := s_n + 1;
      s_games[s_n] := v_game_id;
      s_event_ids[s_n] := p_event_ids[i];
      s_ids[s_n] := o_id;
      s_player_ids[s_n] := o_player_id;
      s_event_types[s_n] := o_event_type;
      s_occurred[s_n] := v_occurred;
      s_status[s_n] := o_status;
      s_reason[s_n] := o_reason;
      s_reward[s_n] := o_reward_credits;
      s_payload[s_n] := v_hash;
      s_created[s_n] := v_received;
      d_n := d_n + 1;
      d_projects[d_n] := gm_projects[gi];
      d_orgs[d_n] := gm_orgs[gi];
      d_key_ids[d_n] := ky_ids[kx];
      d_metadata[d_n] := p_metadata[i];
      d_offsets[d_n] := nullif(gm_offset[gi], 0);
      return next;
    end loop;

    if d_n > 0 then
      insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
          occurred_at, status, reason, reward_credits, payload_hash, created_at, metadata, clock_offset_seconds)
        select u.id, u.game_id, u.project_id, u.organization_id, u.event_id, u.player_id, u.key_id, u.event_type,
            u.occurred_at, u.status, u.reason, u.reward, u.payload, u.created, u.metadata, u.clock_offset
          from unnest(s_ids[s_stored + 1:], s_games[s_stored + 1:], d_projects, d_orgs, s_event_ids[s_stored + 1:],
            s_player_ids[s_stored + 1:], d_key_ids, s_event_types[s_stored + 1:], s_occurred[s_stored + 1:],
            s_status[s_stored + 1:], s_reason[s_stored + 1:], s_reward[s_stored + 1:], s_payload[s_stored + 1:],
            s_created[s_stored + 1:], d_metadata, d_offsets)
            as u(id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type, occurred_at,
              status, reason, reward, payload, created, metadata, clock_offset);
      if v_spend_changed then
        update ledger.games g set spent_credits = g.spent_credits + (u.spent - u.spent0)
          from unnest(gm_ids, gm_spent, gm_spent0) as u(id, spent, spent0)
          where g.id = u.id and u.spent <> u.spent0;
      end if;
      insert into ledger.player_daily_totals as t (game_id, player_id, day, credits)
        select u.game_id, u.player_id, u.day, u.added
          from unnest(dt_games, dt_players, dt_days, dt_added) as u(game_id, player_id, day, added)
          where u.added > 0
        on conflict (game_id, player_id, day) do update set credits = t.credits + excluded.credits;
      insert into ledger.game_minute_counters as c (game_id, minute, attempts)
        select u.game_id, u.minute, u.added
          from unnest(mi_games, mi_minutes, mi_added) as u(game_id, minute, added)
          where u.added > 0
        on conflict (game_id, minute) do update set attempts = c.attempts + excluded.attempts;
      if v_new_minute then
        -- A new minute for a game: forget its minutes long past (as record_event does).
        delete from ledger.game_minute_counters c
          using (select u.game_id, max(u.minute) as newest
                   from unnest(mi_games, mi_minutes, mi_existed) as u(game_id, minute, existed)
                   where not u.existed
                   group by u.game_id) m
          where c.game_id = m.game_id and c.minute < m.newest - interval '5 minutes';
      end if;
      -- The webhook outbox (migrations 0014, 0015), in this transaction: one message per fresh decision and enabled
      -- endpoint of its game subscribed to its status, written as one webhook_decision_batches row of (endpoint,
      -- decision) pairs that the delivery worker turns into the messages; game.budget_low when a game's budget left
      -- fell below 10 % of its budget in this call; game.budget_exhausted at the first rejection for an exhausted
      -- game budget per budget amount. Without an enabled endpoint in the call's games this is one probe of
      -- webhook_endpoints_by_game.
      if exists (select 1 from ledger.webhook_endpoints w where w.game_id = any(gm_ids) and w.enabled) then
        insert into ledger.webhook_decision_batches (created_at, endpoint_ids, decision_ids)
          select v_now, array_agg(w.id), array_agg(u.id)
            from unnest(s_ids[s_stored + 1:], s_games[s_stored + 1:], s_status[s_stored + 1:]) as u(id, game_id, status)
            join ledger.webhook_endpoints w on w.game_id = u.game_id and w.enabled
              and ('decision.' || u.status) = any(w.event_types)
          having count(*) > 0;
        insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, created_at, retry_started_at, next_attempt_at)
          select gen_random_uuid(), w.id, w.game_id, 'game.budget_low',
              jsonb_build_object('gameId', u.id, 'organizationId', w.organization_id, 'budgetCredits', u.budget,
                'spentCredits', u.spent, 'remainingCredits', u.budget - u.spent), v_now, v_now, v_now
            from unnest(gm_ids, gm_budget, gm_spent0, gm_spent) as u(id, budget, spent0, spent)
            join ledger.webhook_endpoints w on w.game_id = u.id and w.enabled
              and 'game.budget_low' = any(w.event_types)
            where (u.budget - u.spent0) * 10 >= u.budget and (u.budget - u.spent) * 10 < u.budget;
        with exhausted as (
          insert into ledger.webhook_budget_notices (game_id, budget_credits)
            select distinct u.game_id, gm_budget[array_position(gm_ids, u.game_id)]
              from unnest(s_games[s_stored + 1:], s_reason[s_stored + 1:]) as u(game_id, reason)
              where u.reason = 'game_budget_exhausted'
                and exists (select 1 from ledger.webhook_endpoints w where w.game_id = u.game_id and w.enabled
                  and 'game.budget_exhausted' = any(w.event_types))
            on conflict do nothing
            returning game_id, budget_credits)
        insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, created_at, retry_started_at, next_attempt_at)
          select gen_random_uuid(), w.id, w.game_id, 'game.budget_exhausted',
              jsonb_build_object('gameId', x.game_id, 'organizationId', w.organization_id,
                'budgetCredits', x.budget_credits, 'spentCredits', gm_spent[array_position(gm_ids, x.game_id)],
                'remainingCredits', x.budget_credits - gm_spent[array_position(gm_ids, x.game_id)]), v_now, v_now,
              v_now
            from exhausted x
            join ledger.webhook_endpoints w on w.game_id = x.game_id and w.enabled
              and 'game.budget_exhausted' = any(w.event_types);
      end if;
    end if;
  end
  $fn$;
