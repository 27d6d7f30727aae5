// The event hot path as one SQL function, so that a fresh event costs one round trip to PostgreSQL: key, idempotency,
// player, the decision's checks in the contract's order, the immutable decision row and, on acceptance, the spend.
// See docs/ingest.md for the order of checks and docs/decisions.md for the choices made here.
import { Migration } from '@mikro-orm/migrations';
import { APPLIED_BY_EVERY_RELEASE } from '#runtime/db/migrations.ts';

export class LedgerRecordEvent extends Migration {
  override name = '0003-record-event';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'constraint-missing-not-valid': APPLIED_BY_EVERY_RELEASE,
    'disallowed-unique-constraint': APPLIED_BY_EVERY_RELEASE,
    'adding-foreign-key-constraint': APPLIED_BY_EVERY_RELEASE,
  };

  override up(): void {
    // Every event row used to take a FOR KEY SHARE lock on its project and organization rows through the foreign
    // keys of 0001: with many games of one project writing at once, those rows become shared lock hot spots
    // (MultiXacts on one tuple). The project and organization of an event are its game's, so one composite foreign
    // key to the game row (which the decision locks anyway) keeps the same integrity without touching
    // any project-wide row.
    this.addSql(`alter table ledger.games add constraint games_scope unique (id, project_id, organization_id)`);
    this.addSql(`alter table ledger.events drop constraint events_project_id_fkey`);
    this.addSql(`alter table ledger.events drop constraint events_organization_id_fkey`);
    this.addSql(`alter table ledger.events drop constraint events_game_id_fkey`);
    this.addSql(`alter table ledger.events add constraint events_game_scope
      foreign key (game_id, project_id, organization_id) references ledger.games (id, project_id, organization_id)`);

    // record_event decides one event. Outcomes: 'decided' (a fresh decision was stored), 'replayed' (the stored
    // decision of the same payload), and the errors 'invalid_key', 'invalid_player', 'event_conflict' (nothing
    // stored, no counter touched). Times: p_occurred_at_ms is the instant in epoch milliseconds; p_received_at is
    // the receipt time, null meaning the database's now() (tests pass an explicit one).
    //
    // Concurrency: replays and conflicts are answered from a plain read, without any lock. A fresh event locks its
    // game row, then reads the key and the (game, eventId) again: under READ COMMITTED every statement of a
    // volatile function takes a new snapshot, so a copy of the same event decided while this one waited for the
    // lock, or a key revoked meanwhile, is seen here. Fresh decisions of one game are thereby serialized, which is
    // what makes the minute counter, the daily totals and the budget exact. Nothing project-wide is written or
    // locked. The unique (game_id, event_id) constraint stays the last line of defence: a violation aborts the
    // whole transaction (counter included) and the caller retries, reading the stored decision.
    //
    // project_budget_exhausted and project_payout_ceiling cannot occur after the game-level checks passed: a game's
    // budget is carved out of its project's budget at allocation time (sum of game budgets = projects.allocated_credits
    // <= budget_credits <= max_payout_credits), so the project's remaining budget and ceiling are at least the
    // game's. game_payout_ceiling likewise follows game_budget_exhausted (budget_credits <= max_payout_credits is
    // a CHECK constraint). The ceiling check is still evaluated in its place; the project ones are documented only.
    //
    // enable_seqscan = off: the function's statements are planned once per connection and reused; every lookup has
    // a unique index, and a plan made while `events` was nearly empty must not keep scanning it as it grows.
    this.addSql(`create function ledger.record_event(
        p_key_hash bytea,
        p_event_id uuid,
        p_player_id uuid,
        p_event_type text,
        p_occurred_at_ms bigint,
        p_payload_hash bytea,
        p_received_at timestamptz,
        p_rate_limit_per_minute integer,
        out o_outcome text,
        out o_id uuid,
        out o_game_id uuid,
        out o_organization_id uuid,
        out o_player_id uuid,
        out o_event_type text,
        out o_occurred_at_ms bigint,
        out o_status text,
        out o_reason text,
        out o_reward_credits bigint,
        out o_created_at_ms bigint)
      language plpgsql
      set enable_seqscan = off
      as $fn$
      declare
        v_received timestamptz := date_trunc('milliseconds', coalesce(p_received_at, now()));
        v_occurred timestamptz := timestamptz 'epoch' + p_occurred_at_ms * interval '1 millisecond';
        v_minute timestamptz := date_trunc('minute', v_received, 'UTC');
        v_day date := (v_received at time zone 'UTC')::date;
        v_key_id uuid;
        v_game_id uuid;
        v_event ledger.events%rowtype;
        v_credits_user_id uuid;
        v_game ledger.games%rowtype;
        v_attempts integer;
        v_reward bigint;
        v_day_total bigint;
        v_account_status text;
        v_reason text;
      begin
        -- The key: known, secret, not revoked.
        select k.id, k.game_id into v_key_id, v_game_id
          from ledger.keys k
          where k.key_hash = p_key_hash and k.kind = 'secret' and k.revoked_at is null;
        if not found then
          o_outcome := 'invalid_key';
          return;
        end if;

        -- Idempotency, without the game lock: a replay is a read.
        select * into v_event from ledger.events e where e.game_id = v_game_id and e.event_id = p_event_id;
        if not found then
          -- The player must be one of the key's game.
          select pl.credits_user_id into v_credits_user_id
            from ledger.players pl
            where pl.id = p_player_id and pl.game_id = v_game_id;
          if not found then
            o_outcome := 'invalid_player';
            return;
          end if;

          -- A fresh event: serialize on the game row, then look again.
          select * into strict v_game from ledger.games g where g.id = v_game_id for no key update;
          perform 1 from ledger.keys k where k.id = v_key_id and k.revoked_at is null;
          if not found then
            o_outcome := 'invalid_key';
            return;
          end if;
          select * into v_event from ledger.events e where e.game_id = v_game_id and e.event_id = p_event_id;
        end if;

        if v_event.id is not null then
          if v_event.payload_hash <> p_payload_hash then
            o_outcome := 'event_conflict';
            return;
          end if;
          o_outcome := 'replayed';
          o_id := v_event.id;
          o_game_id := v_event.game_id;
          o_organization_id := v_event.organization_id;
          o_player_id := v_event.player_id;
          o_event_type := v_event.event_type;
          o_occurred_at_ms := floor(extract(epoch from v_event.occurred_at) * 1000);
          o_status := v_event.status;
          o_reason := v_event.reason;
          o_reward_credits := v_event.reward_credits;
          o_created_at_ms := floor(extract(epoch from v_event.created_at) * 1000);
          return;
        end if;

        -- Rate limit: every fresh attempt of the game in the UTC minute of receipt counts, the excess is rejected.
        insert into ledger.game_minute_counters as c (game_id, minute, attempts)
          values (v_game_id, v_minute, 1)
          on conflict (game_id, minute) do update set attempts = c.attempts + 1
          returning c.attempts into v_attempts;
        if v_attempts = 1 then
          -- A new minute for this game: forget minutes long past (a few are kept for receipts that waited).
          delete from ledger.game_minute_counters c
            where c.game_id = v_game_id and c.minute < v_minute - interval '5 minutes';
        end if;

        -- The decision: the first failing check names the reason (CONTRACT section 7).
        if v_attempts > p_rate_limit_per_minute then
          v_reason := 'rate_limited';
        elsif v_occurred < v_received - interval '5 minutes' or v_occurred > v_received + interval '5 minutes' then
          v_reason := 'timestamp_out_of_window';
        else
          select r.reward_credits into v_reward
            from ledger.rules r
            where r.game_id = v_game_id and r.event_type = p_event_type and r.active;
          if not found then
            v_reason := 'unknown_or_inactive_rule';
          elsif v_game.status <> 'active' then
            v_reason := 'game_paused';
          elsif v_credits_user_id is null then
            v_reason := 'player_not_linked';
          else
            -- The platform account lives in the identity schema of the same database (read only, see
            -- docs/decisions.md); an account the platform does not know is not available either.
            select a.status into v_account_status
              from identity.native_accounts a
              where a.credits_user_id = v_credits_user_id;
            if v_account_status is distinct from 'active' then
              v_reason := 'user_unavailable';
            else
              select t.credits into v_day_total
                from ledger.player_daily_totals t
                where t.player_id = p_player_id and t.day = v_day;
              if coalesce(v_day_total, 0) + v_reward > v_game.daily_player_cap_credits then
                v_reason := 'daily_player_cap';
              elsif v_game.spent_credits + v_reward > v_game.budget_credits then
                v_reason := 'game_budget_exhausted';
              elsif v_game.spent_credits + v_reward > v_game.max_payout_credits then
                v_reason := 'game_payout_ceiling';
              end if;
            end if;
          end if;
        end if;

        o_outcome := 'decided';
        o_id := gen_random_uuid();
        o_game_id := v_game_id;
        o_organization_id := v_game.organization_id;
        o_player_id := p_player_id;
        o_event_type := p_event_type;
        o_occurred_at_ms := p_occurred_at_ms;
        o_status := case when v_reason is null then 'accepted' else 'rejected' end;
        o_reason := v_reason;
        o_reward_credits := case when v_reason is null then v_reward else 0 end;
        o_created_at_ms := floor(extract(epoch from v_received) * 1000);

        insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
            occurred_at, status, reason, reward_credits, payload_hash, created_at)
          values (o_id, v_game_id, v_game.project_id, v_game.organization_id, p_event_id, p_player_id, v_key_id,
            p_event_type, v_occurred, o_status, v_reason, o_reward_credits, p_payload_hash, v_received);
        if v_reason is null then
          update ledger.games g set spent_credits = g.spent_credits + v_reward where g.id = v_game_id;
          insert into ledger.player_daily_totals as t (player_id, day, credits)
            values (p_player_id, v_day, v_reward)
            on conflict (player_id, day) do update set credits = t.credits + excluded.credits;
        end if;
      end
      $fn$`);
  }
}
