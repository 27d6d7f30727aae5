// Test players (CONTRACT section 11.2): createTestPlayer makes a game's player linked to a test account of the
// sandbox (an active identity.native_accounts row made for it, no native app, no device permit); `test` marks such a
// player for GraphQL. Its events are decided as any linked player's: record_events never reads the column.
// Expand only: a column with a constant default (no rewrite), which a ledger of the previous release never names.
import { Migration } from '@mikro-orm/migrations';

export class LedgerTestPlayers extends Migration {
  override name = '0022-test-players';

  override up(): void {
    this.addSql(`alter table ledger.players add column if not exists test boolean not null default false`);
  }
}
