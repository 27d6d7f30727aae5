// Retention: what the ledger's periodic clean-up (services/ledger/src/retention.ts) needs.
//
//   - Indexes by time on the three tables it trims, so that each run finds its at most N oldest rows through an
//     index instead of scanning: game_minute_counters by minute, player_daily_totals by day, link_intents by
//     expires_at. (The primary keys lead with game_id / player_id and cannot serve a range over time alone.)
//   - ledger.link_intent_tombstones: what is left of a link intent once it is cleaned. The API answers a used or
//     expired token with 409 invalid_link (and a message saying which) for as long as anyone presents it, while an
//     unknown token answers 404; so a cleaned intent leaves its token's hash and whether it was used: the minimal
//     row for the same answer. A token hash is never both an intent and a tombstone (the trigger below, and the
//     clean-up moves a row in one statement).
// See docs/decisions.md ("Retention").
import { Migration } from '@mikro-orm/migrations';
import { APPLIED_BY_EVERY_RELEASE } from '#runtime/db/migrations.ts';

export class LedgerRetention extends Migration {
  override name = '0006-retention';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'require-concurrent-index-creation': APPLIED_BY_EVERY_RELEASE,
  };

  override up(): void {
    this.addSql(`create index game_minute_counters_by_minute on ledger.game_minute_counters (minute)`);
    this.addSql(`create index player_daily_totals_by_day on ledger.player_daily_totals (day)`);
    this.addSql(`create index link_intents_by_expiry on ledger.link_intents (expires_at)`);

    this.addSql(`create table ledger.link_intent_tombstones (
      token_hash bytea primary key check (length(token_hash) = 32),
      used boolean not null
    )`);
    this.addSql(`comment on table ledger.link_intent_tombstones is
      'A cleaned link intent: its token hash and whether it was used (else it expired unused); answers 409 invalid_link'`);
    this.addSql(`create function ledger.refuse_tombstoned_token() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from ledger.link_intent_tombstones t where t.token_hash = new.token_hash) then
          raise exception 'link token already used or expired' using errcode = 'unique_violation',
            constraint = 'link_intent_tombstones_pkey';
        end if;
        return new;
      end $$`);
    this.addSql(`create trigger link_intents_not_tombstoned before insert or update of token_hash
      on ledger.link_intents for each row execute function ledger.refuse_tombstoned_token()`);
  }
}
