// Device permits in identity.device_permits: a native session id bound to an account until it expires. The
// native device verification flow that establishes them is outside the contract; operators create them.
import { randomUUID } from 'node:crypto';
import type { Database } from '#runtime/db/database.ts';
import { isoSql } from '#runtime/db/sql.ts';

export interface DevicePermitRow {
  id: string;
  session_id: string;
  credits_user_id: string;
  /** RFC 3339 */
  expires_at: string;
}

/** At most this many distinct accounts are read for one session (one is the normal case). */
const LIVE_OWNERS_LIMIT = 16;

export class DevicePermitRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** The accounts holding an unexpired permit for this session id. */
  async liveOwners(sessionId: string): Promise<string[]> {
    const rows = await this.db.query<{ credits_user_id: string }>(
      `select distinct credits_user_id::text as credits_user_id from identity.device_permits
        where session_id = ? and expires_at > now()
        limit ${LIVE_OWNERS_LIMIT}`,
      [sessionId],
    );
    return rows.map((r) => r.credits_user_id);
  }

  async create(sessionId: string, creditsUserId: string, expiresInSeconds: number): Promise<DevicePermitRow> {
    const rows = await this.db.query<DevicePermitRow>(
      `insert into identity.device_permits (id, session_id, credits_user_id, expires_at)
       values (?, ?, ?, now() + make_interval(secs => ?))
       returning id::text as id, session_id, credits_user_id::text as credits_user_id, ${isoSql('expires_at')}`,
      [randomUUID(), sessionId, creditsUserId, expiresInSeconds],
    );
    return rows[0] as DevicePermitRow;
  }
}
