// Whether a member joined an organization by their own act (issue 44: member e-mails leaked to whoever added an
// identity id): `joined_at` is set when the organization is created (its owner) and when a member accepts the
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
    this.addSql(`alter table ledger.members add constraint members_owner_joined
      check (role <> 'owner' or joined_at is not null)`);
  }
}
