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

  async setEnabled(enabled: boolean): Promise<boolean> {
    const rows = await this.db.query<{ enabled: boolean }>(
      'update identity.platform_state set enabled = ?, updated_at = now() where id returning enabled',
      [enabled],
    );
    return rows[0]?.enabled ?? enabled;
  }
}
