// Native platform accounts in identity.native_accounts: created active on first sight of a valid native session,
// disabled or renamed by the operator.
import type { Database } from '#runtime/db/database.ts';
import { isoSql } from '#runtime/db/sql.ts';

export type NativeAccountStatus = 'active' | 'disabled';

export interface NativeAccountRow {
  credits_user_id: string;
  status: NativeAccountStatus;
  username: string | null;
  /** RFC 3339 */
  created_at: string;
}

const COLUMNS = `credits_user_id::text as credits_user_id, status, username, ${isoSql('created_at')}`;

export class NativeAccountRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /**
   * The account of `creditsUserId`, created active (with `username`) if it does not exist yet. One statement: the
   * insert's snapshot cannot see a row a concurrent request inserts at the same moment, so that case reads again.
   */
  async findOrCreate(creditsUserId: string, username: string | undefined): Promise<NativeAccountRow> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const rows = await this.db.query<NativeAccountRow>(
        `with inserted as (
           insert into identity.native_accounts (credits_user_id, status, username) values (?, 'active', ?)
           on conflict (credits_user_id) do nothing
           returning ${COLUMNS}
         )
         select * from inserted
         union all
         select ${COLUMNS} from identity.native_accounts where credits_user_id = ?`,
        [creditsUserId, username ?? null, creditsUserId],
      );
      if (rows[0]) return rows[0];
    }
    throw new Error(`native account ${creditsUserId} neither inserted nor found`);
  }

  /**
   * Creates or updates an account (operator API). `username`: a string or null sets it; undefined keeps the stored
   * one (none for a new account).
   */
  async put(
    creditsUserId: string,
    status: NativeAccountStatus,
    username: string | null | undefined,
  ): Promise<NativeAccountRow> {
    const setUsername = username !== undefined;
    const rows = await this.db.query<NativeAccountRow>(
      `insert into identity.native_accounts as a (credits_user_id, status, username) values (?, ?, ?)
       on conflict (credits_user_id) do update
         set status = excluded.status,
             username = case when ? then excluded.username else a.username end,
             updated_at = now()
       returning a.credits_user_id::text as credits_user_id, a.status, a.username, ${isoSql('a.created_at')}`,
      [creditsUserId, status, username ?? null, setUsername],
    );
    return rows[0] as NativeAccountRow;
  }
}
