// The operator's audit trail: every invitation created or revoked and every platform switch, with what changed and
// the request's id, written in the change's own statement (services/identity-admission/src/repositories/
// operator-audit.ts) and read through the operator API (GET /api/admin/v1/audit, `npm run admin -- audit`). Entries
// are immutable: a trigger refuses UPDATE and DELETE of any row.
//
// Expand only: a new table, which an identity-admission of the previous release never names (its changes are not
// logged while it still runs beside this one).
import { Migration } from '@mikro-orm/migrations';

export class IdentityOperatorAudit extends Migration {
  override name = '0003-operator-audit';

  override up(): void {
    this.addSql(`create table if not exists identity.operator_audit_log (
      id uuid primary key,
      action text not null check (action in ('createInvitation', 'revokeInvitation', 'setPlatformState')),
      target_kind text not null check (target_kind in ('invitation', 'platform')),
      target_id uuid,
      changes jsonb not null check (jsonb_typeof(changes) = 'object'),
      request_id text not null check (length(request_id) between 1 and 200),
      created_at timestamptz not null default clock_timestamp(),
      constraint operator_audit_target check ((target_kind = 'invitation') = (target_id is not null))
    )`);
    this.addSql(`create index if not exists operator_audit_log_newest
      on identity.operator_audit_log (created_at desc, id desc)`);
    this.addSql(`create or replace function identity.operator_audit_log_immutable() returns trigger
      language plpgsql as $fn$
      begin
        raise exception 'identity.operator_audit_log entries are never updated or deleted'
          using errcode = 'insufficient_privilege';
      end
      $fn$`);
    this.addSql(`create or replace trigger operator_audit_log_immutable
      before update or delete on identity.operator_audit_log
      for each row execute function identity.operator_audit_log_immutable()`);
  }
}
