// The operator's audit trail in identity.operator_audit_log (migration 0003): written by the invitation and platform
// repositories in the statement that makes each change; read here, newest first.
import type { Database } from '#runtime/db/database.ts';
import { isoMicrosSql, isoSql } from '#runtime/db/sql.ts';

export interface OperatorAuditRow {
  id: string;
  action: string;
  target_kind: string;
  target_id: string | null;
  /** The changes object as JSON text. */
  changes: string;
  request_id: string;
  /** RFC 3339, milliseconds. */
  created_at: string;
  /** RFC 3339, microseconds: the page key with `id`. */
  created_at_us: string;
}

/** Most entries of one page. */
export const OPERATOR_AUDIT_PAGE_MAX = 1000;

export class OperatorAuditRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** At most `limit` entries, newest first (by creation time, then id), after `before` when given. */
  async list(limit: number, before?: { createdAt: string; id: string }): Promise<OperatorAuditRow[]> {
    return this.db.query<OperatorAuditRow>(
      `select id, action, target_kind, target_id, changes::text as changes, request_id, ${isoSql('created_at')},
              ${isoMicrosSql('created_at', 'created_at_us')}
         from identity.operator_audit_log
        where ?::timestamptz is null or (created_at, id) < (?::timestamptz, ?::uuid)
        order by created_at desc, id desc
        limit ?`,
      [before?.createdAt ?? null, before?.createdAt ?? null, before?.id ?? null, limit],
    );
  }
}
