// The operator's platform switch, one row in identity.platform_state.
import type { Database } from '#runtime/db/database.ts';

export class PlatformRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  async isEnabled(): Promise<boolean> {
    const rows = await this.db.query<{ enabled: boolean }>('select enabled from identity.platform_state where id');
    return rows[0]?.enabled ?? true;
  }

  /** Switches the platform, with its operator audit entry (from what it was) in the same statement. */
  async setEnabled(enabled: boolean, requestId: string): Promise<boolean> {
    const rows = await this.db.query<{ enabled: boolean }>(
      // The update reads `before` (its FROM), so the row is locked and read before it is changed; a FOR UPDATE scan
      // run after the change in the same statement would skip the row.
      `with before as (select enabled from identity.platform_state where id for update),
       switched as (
         update identity.platform_state p set enabled = ?, updated_at = now() from before b
          where p.id returning p.enabled, b.enabled as was),
       logged as (
         insert into identity.operator_audit_log (id, action, target_kind, target_id, changes, request_id)
         select gen_random_uuid(), 'setPlatformState', 'platform', null,
                jsonb_build_object('enabled', jsonb_build_object('from', s.was, 'to', s.enabled)), ?
           from switched s)
       select enabled from switched`,
      [enabled, requestId],
    );
    return rows[0]?.enabled ?? enabled;
  }
}
