// Game clocks (CONTRACT section 11.2): a game's clock is real time plus the seconds it was advanced
// (advanceGameClock), which only grow. ledger.record_events reads the offset with the game row it already locks and
// decides the occurredAt window and the daily cap's UTC day on the game's clock; each fresh decision keeps the offset
// it was decided with (null: 0, as on every row before this migration), so its game time is created_at + offset.
// Expand only: both columns are a default or nullable, and a ledger of the previous release (which never names them)
// keeps working; its calls of the older record_events signatures reach the same body.
// Games before events: the event path's lock order.
import { Migration } from '@mikro-orm/migrations';

export class LedgerGameClocks extends Migration {
  override name = '0020-game-clocks';

  override up(): void {
    this.addSql(`alter table ledger.games add column if not exists clock_offset_seconds bigint not null default 0`);
    this.addSql(`alter table ledger.events add column if not exists clock_offset_seconds bigint`);
  }
}
