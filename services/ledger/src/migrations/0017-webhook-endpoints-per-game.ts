// At most 20 webhook endpoints per game (CONTRACT section 11.2), held by the database as well: a trigger counts the
// game's endpoints after each insert, under a transaction-scoped advisory lock per game that the console action takes
// too before it counts (so two creations at once are serialized and the action answers its own 400 first).
// Expand only: a ledger of the previous release that creates a 21st endpoint gets the constraint's refusal.
import { Migration } from '@mikro-orm/migrations';
import { WEBHOOK_ENDPOINTS_PER_GAME_MAX } from '../webhooks/limits.ts';

export class LedgerWebhookEndpointsPerGame extends Migration {
  override name = '0017-webhook-endpoints-per-game';

  override up(): void {
    this.addSql(`create or replace function ledger.webhook_endpoints_per_game() returns trigger
      language plpgsql as $fn$
      begin
        perform pg_advisory_xact_lock(hashtext('ledger.webhook_endpoints:' || new.game_id::text));
        if (select count(*) from ledger.webhook_endpoints where game_id = new.game_id)
            > ${WEBHOOK_ENDPOINTS_PER_GAME_MAX} then
          raise exception 'a game has at most ${WEBHOOK_ENDPOINTS_PER_GAME_MAX} webhook endpoints'
            using errcode = 'check_violation', constraint = 'webhook_endpoints_per_game';
        end if;
        return null;
      end
      $fn$`);
    this.addSql(`create trigger webhook_endpoints_per_game after insert on ledger.webhook_endpoints
      for each row execute function ledger.webhook_endpoints_per_game()`);
  }
}
