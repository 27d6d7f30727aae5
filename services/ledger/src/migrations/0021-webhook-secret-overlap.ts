// Webhook secret rotation with an overlap (CONTRACT section 11.2): rotateWebhookSecret keeps the previous secret
// (encrypted as the current one) and the end of the overlap; until then the delivery worker signs with both.
// Expand only: nullable columns, which a ledger of the previous release never names (it signs with the current
// secret only, as before).
import { Migration } from '@mikro-orm/migrations';

export class LedgerWebhookSecretOverlap extends Migration {
  override name = '0021-webhook-secret-overlap';

  override up(): void {
    this.addSql(`alter table ledger.webhook_endpoints add column if not exists previous_secret_ciphertext bytea`);
    this.addSql(`alter table ledger.webhook_endpoints add column if not exists previous_secret_expires_at timestamptz`);
  }
}
