// The audit trail of CONTRACT section 11.2: the entry's fields beside what 0001 stored (organization, actor, action,
// target id, details). Expand only: every new column is nullable, so the previous release keeps inserting its rows
// (they read back with targetKind null, changes {} and no e-mail or request id) and `details` stays as it was (the
// funding invariant reads it). Entries are immutable: a trigger refuses UPDATE and DELETE of any row.
import { Migration } from '@mikro-orm/migrations';

export class LedgerAuditTrail extends Migration {
  override name = '0018-audit-trail';

  override up(): void {
    this.addSql(`alter table ledger.audit_log
      add column if not exists project_id uuid,
      add column if not exists game_id uuid,
      add column if not exists actor_email text,
      add column if not exists target_kind text,
      add column if not exists changes jsonb,
      add column if not exists request_id text`);
    this.addSql(`create or replace function ledger.audit_log_immutable() returns trigger
      language plpgsql as $fn$
      begin
        raise exception 'ledger.audit_log entries are never updated or deleted'
          using errcode = 'insufficient_privilege';
      end
      $fn$`);
    this.addSql(`create or replace trigger audit_log_immutable before update or delete on ledger.audit_log
      for each row execute function ledger.audit_log_immutable()`);
  }
}
