// Batched decisions: ledger.record_events decides a batch of events of ONE key (so of one game) in one
// call and one transaction, with exactly the per-event semantics of ledger.record_event (0003), which stays as it is
// (the pgbench baseline runs it, and a ledger of the previous version may still call it during a rollout).
// See docs/decisions.md ("Batched decisions").
import { Migration } from '@mikro-orm/migrations';

export class LedgerRecordEvents extends Migration {
  override name = '0004-record-events';

  override up(): void {
    // record_events(key hash, the events as parallel arrays, payload hashes concatenated (32 bytes each), receipt
    // times (null elements: the database's now()), rate limit) returns one row per event, o_index = its position
    // (1-based), with the outcome and decision fields of record_event.
    //
    // The events are decided in arrival order (array order), each as record_event would decide it had it run
    // alone right after the ones before it:
    //   - key: read once; unknown, revoked or public: every event is invalid_key.
    //   - idempotency: decisions already stored for the batch's event ids are read without any lock; an event id
    //     decided earlier in the same batch answers that decision (replay, or event_conflict for another payload).
    //   - invalid_player is answered for an event that is neither stored nor decided earlier in the batch.
    //   - only when some event needs a fresh decision is the game row locked (FOR NO KEY UPDATE, as record_event);
    //     then the key is rechecked (revoked meanwhile: those events are invalid_key) and the stored decisions are
    //     read again under the lock (a copy decided by a concurrent batch is a replay here).
    //   - under the lock, the game row, the rules, the accounts, the minute counters and the daily totals that the
    //     batch can touch are read once; the loop keeps the running spend, minute attempts and day totals, so each
    //     event sees the ones before it. Every writer of those rows holds the game lock, so reading them once is
    //     the same as reading them per event. Rules and accounts are not under the game lock in record_event either:
    //     reading them once at the start of the batch is the serial order "the change came before/after the batch".
    //   - writes, once per batch: one insert of all decisions, one update of the game's spend, one upsert per
    //     (player, day) and per (game, minute); the clean-up of old minute counters that record_event does when a
    //     minute row is created is done once, relative to the newest new minute. That is the same as doing it per
    //     event when the batch's receipt times lie within 5 minutes of each other (always: in production they are all
    //     the transaction's now()).
    // Every invariant keeps its constraint (spent <= budget, credits ranges, one decision per (game, event_id)).
    //
    // Lookups in the loop use array_position over small arrays (C code, no per-element PL/pgSQL evaluation).
    this.addSql(`create function ledger.record_events(
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
        o_created_at_ms bigint)
      language plpgsql
      set enable_seqscan = off
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
              null::bigint, null::text, null::text, null::bigint, null::bigint
            from generate_series(1, n) as g(pos);
          return;
        end if;

        -- Idempotency without the game lock: replays are reads.
        select array_agg(e.event_id), array_agg(e.id), array_agg(e.player_id), array_agg(e.event_type),
            array_agg(e.occurred_at), array_agg(e.status), array_agg(e.reason), array_agg(e.reward_credits),
            array_agg(e.payload_hash), array_agg(e.created_at)
          into s_event_ids, s_ids, s_player_ids, s_event_types, s_occurred, s_status, s_reason, s_reward, s_payload,
            s_created
          from ledger.events e where e.game_id = v_game_id and e.event_id = any(p_event_ids);
        select array_agg(pl.id), array_agg(pl.credits_user_id) into pl_ids, pl_users
          from ledger.players pl where pl.game_id = v_game_id and pl.id = any(p_player_ids);
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
              from ledger.events e where e.game_id = v_game_id and e.event_id = any(p_event_ids);
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
              from ledger.game_minute_counters c where c.game_id = v_game_id and c.minute = any(v_minutes);
            select coalesce(array_agg(t.player_id::text || '|' || t.day::text), '{}'),
                coalesce(array_agg(t.player_id), '{}'), coalesce(array_agg(t.day), '{}'),
                coalesce(array_agg(t.credits), '{}'), coalesce(array_agg(0::bigint), '{}')
              into dt_keys, dt_players, dt_days, dt_stored, dt_added
              from ledger.player_daily_totals t where t.player_id = any(pl_ids) and t.day = any(v_days);
          end if;
          v_spent := v_game.spent_credits;
        end if;

        for i in 1..n loop
          o_index := i;
          o_outcome := null; o_id := null; o_game_id := null; o_organization_id := null; o_player_id := null;
          o_event_type := null; o_occurred_at_ms := null; o_status := null; o_reason := null;
          o_reward_credits := null; o_created_at_ms := null;
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

          -- The decision: the first failing check names the reason (CONTRACT section 7), as in record_event.
          v_reason := null;
          v_reward := null;
          if v_attempts > p_rate_limit_per_minute then
            v_reason := 'rate_limited';
          elsif v_occurred < v_received - interval '5 minutes' or v_occurred > v_received + interval '5 minutes' then
            v_reason := 'timestamp_out_of_window';
          else
            k := array_position(ru_types, p_event_types[i]);
            if k is null then
              v_reason := 'unknown_or_inactive_rule';
            else
              v_reward := ru_rewards[k];
              if v_game.status <> 'active' then
                v_reason := 'game_paused';
              elsif v_user is null then
                v_reason := 'player_not_linked';
              else
                k := array_position(ac_users, v_user);
                v_account_status := case when k is null then null else ac_status[k] end;
                if v_account_status is distinct from 'active' then
                  v_reason := 'user_unavailable';
                else
                  v_day_key := p_player_ids[i]::text || '|' || v_day::text;
                  k := array_position(dt_keys, v_day_key);
                  if k is null then
                    dt_keys := dt_keys || v_day_key;
                    dt_players := dt_players || p_player_ids[i];
                    dt_days := dt_days || v_day;
                    dt_stored := dt_stored || 0::bigint;
                    dt_added := dt_added || 0::bigint;
                    k := array_length(dt_keys, 1);
                  end if;
                  v_day_total := dt_stored[k] + dt_added[k];
                  if v_day_total + v_reward > v_game.daily_player_cap_credits then
                    v_reason := 'daily_player_cap';
                  elsif v_spent + v_reward > v_game.budget_credits then
                    v_reason := 'game_budget_exhausted';
                  elsif v_spent + v_reward > v_game.max_payout_credits then
                    v_reason := 'game_payout_ceiling';
                  else
                    dt_added[k] := dt_added[k] + v_reward;
                    v_spent := v_spent + v_reward;
                  end if;
                end if;
              end if;
            end if;
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
      $fn$`);
  }
}
