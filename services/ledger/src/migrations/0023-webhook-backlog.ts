// An endpoint whose backlog passed its bound is disabled with the reason `backlog` (the delivery worker:
// services/ledger/src/webhooks/worker.ts), so its outbox stops growing: a disabled endpoint is subscribed to nothing
// (CONTRACT section 11.1), and the developer enables it again once its receiver keeps up.
//
// Expand only: the reasons' check widens (a ledger of the previous release writes `developer` and `failing` as before,
// and reads the reason as text). The wider check is added NOT VALID (no scan under the table's lock) and validated by
// 0023-webhook-backlog-validate without blocking writes; the old column check is dropped after it.
import { Migration } from '@mikro-orm/migrations';

export class LedgerWebhookBacklog extends Migration {
  override name = '0023-webhook-backlog';

  override up(): void {
    this.addSql(`alter table ledger.webhook_endpoints add constraint webhook_endpoint_disabled_reasons
      check (disabled_reason in ('developer', 'failing', 'backlog')) not valid`);
  }
}

/** Validates the wider check, then drops the narrower one it replaces. */
export class LedgerWebhookBacklogValidate extends Migration {
  override name = '0023-webhook-backlog-validate';

  override up(): void {
    this.addSql(`alter table ledger.webhook_endpoints validate constraint webhook_endpoint_disabled_reasons`);
    this.addSql(
      `alter table ledger.webhook_endpoints drop constraint if exists webhook_endpoints_disabled_reason_check`,
    );
  }
}
