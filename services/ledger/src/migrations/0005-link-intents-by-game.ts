// The link intents of one game, newest first (GraphQL linkIntents, the web console's game page): a keyset page is a
// range of this index, like players_by_game for the players of a game. 0001 only indexed intents by their token.
import { Migration } from '@mikro-orm/migrations';
import { APPLIED_BY_EVERY_RELEASE } from '#runtime/db/migrations.ts';

export class LedgerLinkIntentsByGame extends Migration {
  override name = '0005-link-intents-by-game';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'require-concurrent-index-creation': APPLIED_BY_EVERY_RELEASE,
  };

  override up(): void {
    this.addSql(`create index link_intents_by_game on ledger.link_intents (game_id, created_at desc, id desc)`);
  }
}
