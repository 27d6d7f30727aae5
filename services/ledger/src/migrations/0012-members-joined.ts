// Whether a member joined an organization by their own act (member e-mails are shown only to whom the member
// joined): `joined_at` is set when the organization is created (its owner) and when a member accepts the
// membership (the console action acceptMembership); a member added by an owner stays unjoined (null) until then. The
// gateway shows a member's e-mail only once they joined, and the member's console marks an organization they did
// not join.
//
// Every owner created their organization, so existing owners joined at their membership's creation; every other
// existing member was added by an owner and has not accepted anything yet (null). The owner's check is a constraint
// as well: an owner is always a joined member.
import { Migration } from '@mikro-orm/migrations';

export class LedgerMembersJoined extends Migration {
  override name = '0012-members-joined';

  override up(): void {
    this.addSql(`alter table ledger.members add column joined_at timestamptz`);
    this.addSql(`update ledger.members set joined_at = created_at where role = 'owner'`);
    // Added NOT VALID (no scan under the table's lock); 0012-members-joined-validate checks the existing rows.
    this.addSql(`alter table ledger.members add constraint members_owner_joined
      check (role <> 'owner' or joined_at is not null) not valid`);
  }
}

/** Validates members_owner_joined without blocking writes (a no-op where 0012 added it valid). */
export class LedgerMembersJoinedValidate extends Migration {
  override name = '0012-members-joined-validate';

  override up(): void {
    this.addSql(`alter table ledger.members validate constraint members_owner_joined`);
  }
}
