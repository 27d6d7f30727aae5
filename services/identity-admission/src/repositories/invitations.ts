// Invitations of developers in identity.invitations.
import { randomUUID } from 'node:crypto';
import type { Database } from '#runtime/db/database.ts';
import { isoSql } from '#runtime/db/sql.ts';

export interface InvitationRow {
  id: string;
  email: string;
  status: 'active' | 'revoked';
  identity_user_id: string | null;
  can_create_unlimited_organization: boolean;
  /** RFC 3339 */
  created_at: string;
  bound_at: string | null;
}

const COLUMNS = `id, email, status, identity_user_id, can_create_unlimited_organization, ${isoSql('created_at')}, ${isoSql('bound_at')}`;

export class InvitationRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** The active invitation of an e-mail (case-insensitive), if any. */
  async findActiveByEmail(email: string): Promise<InvitationRow | undefined> {
    const rows = await this.db.query<InvitationRow>(
      `select ${COLUMNS} from identity.invitations where lower(email) = lower(?) and status = 'active'`,
      [email],
    );
    return rows[0];
  }

  /**
   * Binds the active invitation of `email` to `subject` if it is not bound yet; returns the invitation as it is
   * afterwards (bound to `subject` or to whoever bound it first).
   */
  async bindFirstUse(email: string, subject: string): Promise<InvitationRow | undefined> {
    const bound = await this.db.query<InvitationRow>(
      `update identity.invitations set identity_user_id = ?, bound_at = now()
        where lower(email) = lower(?) and status = 'active' and identity_user_id is null
        returning ${COLUMNS}`,
      [subject, email],
    );
    return bound[0] ?? (await this.findActiveByEmail(email));
  }

  /**
   * Creates an active invitation, and its operator audit entry in the same statement; undefined (and no entry) if the
   * e-mail already has one.
   */
  async create(
    email: string,
    canCreateUnlimitedOrganization: boolean,
    requestId: string,
  ): Promise<InvitationRow | undefined> {
    const rows = await this.db.query<InvitationRow>(
      `with created as (
         insert into identity.invitations (id, email, status, can_create_unlimited_organization)
         values (?, ?, 'active', ?)
         on conflict (lower(email)) where status = 'active' do nothing
         returning *),
       logged as (
         insert into identity.operator_audit_log (id, action, target_kind, target_id, changes, request_id)
         select gen_random_uuid(), 'createInvitation', 'invitation', c.id,
                jsonb_build_object('email', jsonb_build_object('from', null, 'to', c.email),
                  'canCreateUnlimitedOrganization',
                  jsonb_build_object('from', null, 'to', c.can_create_unlimited_organization)), ?
           from created c)
       select ${COLUMNS} from created`,
      [randomUUID(), email, canCreateUnlimitedOrganization, requestId],
    );
    return rows[0];
  }

  /**
   * The e-mail of each identity user id whose active invitation is bound to it (bound at that identity's own
   * sign-in; the newest when several are). A revoked invitation names no one any more, and an invitation no one
   * signed in with is bound to no id: an e-mail is never matched from an id someone else typed.
   */
  async emailsOf(ids: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (ids.length === 0) return found;
    const bound = await this.db.query<{ identity_user_id: string; email: string }>(
      `select identity_user_id, email from identity.invitations
        where status = 'active' and identity_user_id in (select jsonb_array_elements_text(?::jsonb))
        order by created_at asc`,
      [JSON.stringify(ids)],
    );
    for (const row of bound) found.set(row.identity_user_id, row.email);
    return found;
  }

  async list(): Promise<InvitationRow[]> {
    return this.db.query<InvitationRow>(
      `select ${COLUMNS} from identity.invitations order by created_at desc, id desc limit 10000`,
    );
  }

  /**
   * Revokes an invitation (idempotent), with its operator audit entry (its status from what it was) in the same
   * statement; undefined (and no entry) if there is none with this id.
   */
  async revoke(id: string, requestId: string): Promise<InvitationRow | undefined> {
    const rows = await this.db.query<InvitationRow>(
      `with before as (select id, status from identity.invitations where id = ? for update),
       revoked as (
         update identity.invitations i set status = 'revoked', revoked_at = coalesce(i.revoked_at, now())
           from before b where i.id = b.id
         returning i.*, b.status as was),
       logged as (
         insert into identity.operator_audit_log (id, action, target_kind, target_id, changes, request_id)
         select gen_random_uuid(), 'revokeInvitation', 'invitation', r.id,
                jsonb_build_object('status', jsonb_build_object('from', r.was, 'to', r.status)), ?
           from revoked r)
       select ${COLUMNS} from revoked`,
      [id, requestId],
    );
    return rows[0];
  }
}
