// The decision of an event id is found through an index that leads with the event id.
//
// ledger.record_events looks up the decisions already stored for a batch's event ids (`event_id = any(array)` of
// one game). Its statements run on generic plans (plan_cache_mode = force_generic_plan, see record_events.sql), and
// a generic plan is made once per connection and kept until the table's statistics change. With the unique index on
// (game_id, event_id), the planner weighed it against events_by_game (game_id, created_at, id): for an array of
// unknown length it assumes ten index descents, so while a game's history looked short in the statistics (a new
// database, the first minutes after a deployment) it chose events_by_game and filtered every decision of the game,
// on every call, until the next analyze (measured: up to 339 rows read per lookup in a 10 s benchmark).
//
// With the unique index on (event_id, game_id), the lookup reads the event ids through it alone (record_events
// keeps the game filter outside an `offset 0` subquery), so no statistics can send it to another index. The
// constraint keeps its name and meaning: one decision per (game, event id); `on conflict` and the unique-violation
// handling do not depend on the column order. The new index is built inside the migration's transaction: on a large
// table, writes to ledger.events wait for the build (a deployment of this version should expect that pause).
import { Migration } from '@mikro-orm/migrations';
import { APPLIED_BY_EVERY_RELEASE } from '#runtime/db/migrations.ts';

export class LedgerDecisionsByEventId extends Migration {
  override name = '0007-decisions-by-event-id';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'constraint-missing-not-valid': APPLIED_BY_EVERY_RELEASE,
    'disallowed-unique-constraint': APPLIED_BY_EVERY_RELEASE,
  };

  override up(): void {
    this.addSql(`alter table ledger.events drop constraint events_one_decision`);
    this.addSql(`alter table ledger.events add constraint events_one_decision unique (event_id, game_id)`);
  }
}
