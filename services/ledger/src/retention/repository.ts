// The clean-up statements of the ledger's retention (tables and indexes of migrations 0001 and 0005). Each is one
// statement, so one short transaction of its own, that takes at most `limit` of the oldest rows past the horizon
// through the table's time index, FOR UPDATE SKIP LOCKED: replicas running the clean-up at once take disjoint rows
// and never wait for each other nor for a decision that holds a row. Horizons are documented in ./scheduler.ts.
import type { Database } from '#runtime/db/database.ts';

/** Null: the database's now(). */
export type Instant = Date | null;

const NOW = 'coalesce(?::timestamptz, now())';

/** The tables the clean-up trims (the metric label). */
export type RetentionTable = 'game_minute_counters' | 'player_daily_totals' | 'link_intents' | 'webhook_messages';

export interface RetentionHorizons {
  /** Minute counters of minutes that began more than this many minutes before now are removed. */
  minuteCounterMinutes: number;
  /** Daily totals of UTC days more than this many days before today's are removed. */
  dailyTotalDays: number;
  /** Link intents that expired more than this many minutes ago become tombstones. */
  linkIntentGraceMinutes: number;
  /** Webhook messages delivered or failed more than this many days ago are removed, with their attempts. */
  webhookMessageDays: number;
}

async function count(db: Database, sql: string, params: unknown[]): Promise<number> {
  const rows = await db.query<{ n: number }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

export class RetentionRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** Minute counters no decision reads any more: at most `limit`, oldest first. */
  removeMinuteCounters(now: Instant, horizons: RetentionHorizons, limit: number): Promise<number> {
    return count(
      this.db,
      `with old as (
         select game_id, minute from ledger.game_minute_counters
          where minute < ${NOW} - make_interval(mins => ?)
          order by minute limit ? for update skip locked),
       gone as (
         delete from ledger.game_minute_counters c using old
          where c.game_id = old.game_id and c.minute = old.minute returning 1)
       select count(*)::int as n from gone`,
      [now?.toISOString() ?? null, horizons.minuteCounterMinutes, limit],
    );
  }

  /** Daily totals of UTC days no decision reads any more: at most `limit`, oldest first. */
  removeDailyTotals(now: Instant, horizons: RetentionHorizons, limit: number): Promise<number> {
    return count(
      this.db,
      `with old as (
         select player_id, game_id, day from ledger.player_daily_totals
          where day < (${NOW} at time zone 'UTC')::date - ?::int
          order by day limit ? for update skip locked),
       gone as (
         delete from ledger.player_daily_totals t using old
          where t.player_id = old.player_id and t.game_id = old.game_id and t.day = old.day returning 1)
       select count(*)::int as n from gone`,
      [now?.toISOString() ?? null, horizons.dailyTotalDays, limit],
    );
  }

  /**
   * Link intents long past their expiry, moved to tombstones in the same statement (the token's hash and whether it
   * was used): the answer for the token stays 409 invalid_link with the same message.
   */
  retireLinkIntents(now: Instant, horizons: RetentionHorizons, limit: number): Promise<number> {
    return count(
      this.db,
      `with old as (
         select id from ledger.link_intents
          where expires_at < ${NOW} - make_interval(mins => ?)
          order by expires_at limit ? for update skip locked),
       gone as (
         delete from ledger.link_intents i using old
          where i.id = old.id returning i.token_hash, i.consumed_at is not null as used),
       kept as (
         insert into ledger.link_intent_tombstones (token_hash, used)
         select token_hash, used from gone returning 1)
       select count(*)::int as n from kept`,
      [now?.toISOString() ?? null, horizons.linkIntentGraceMinutes, limit],
    );
  }

  /** Webhook messages finished (delivered or failed) long ago, with their attempts (on delete cascade). */
  removeWebhookMessages(now: Instant, horizons: RetentionHorizons, limit: number): Promise<number> {
    return count(
      this.db,
      `with old as (
         select id from ledger.webhook_messages
          where state <> 'pending' and finished_at < ${NOW} - make_interval(days => ?)
          order by finished_at limit ? for update skip locked),
       gone as (delete from ledger.webhook_messages m using old where m.id = old.id returning 1)
       select count(*)::int as n from gone`,
      [now?.toISOString() ?? null, horizons.webhookMessageDays, limit],
    );
  }
}
