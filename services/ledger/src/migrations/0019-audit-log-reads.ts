// What the audit reads (GET /api/developer/v1/audit, GraphQL auditLog) use: an organization's entries newest first
// by (created_at, id), the keyset order of their pages. Built concurrently: audit_log is an existing table.
import { type ConcurrentIndex, ConcurrentIndexMigration } from '#runtime/db/migrations.ts';

export class LedgerAuditLogReads extends ConcurrentIndexMigration {
  override name = '0019-audit-log-reads';
  protected override readonly builds: ConcurrentIndex[] = [
    {
      schema: 'ledger',
      name: 'audit_log_by_organization_and_id',
      definition: `on ledger.audit_log (organization_id, created_at desc, id desc)`,
    },
  ];
}
