// Reads that cost what they show (issue 44 item 2): every console and records read ranges over an index that leads
// with the tenant (organization, game or player) in the read's order, one range per tenant unit, merged
// (console/read-repository.ts, tenantPage). What that needs besides the indexes 0001-0009 made:
//   - players_linked_by_organization: the snapshot's linked players, newest first, per organization. Through
//     players_by_organization the snapshot skipped every unlinked player of the organization to find its 500 linked
//     ones. Partial: players are inserted unlinked (the event path), so the event path never writes it; linking
//     updates an indexed column anyway (players_one_per_account), so linking pays one entry more.
//   - keys_by_organization, rules_by_organization: the snapshot lists an organization's keys and rules; only
//     indexes by game existed, so the list was a scan of every tenant's keys and rules. The console writes them.
//   - events_by_project is dropped: a project's decisions are read game by game (events_by_game), so no read uses it
//     any more, and it was one of the six index entries each stored decision writes (the event path's hot write).
//
// Built inside the migration's transaction (migrations run in one transaction, runtime/db/database.ts migrate, so
// CREATE INDEX CONCURRENTLY is not possible here): building players_linked_by_organization reads ledger.players
// once, and inserts of new players (first decisions of new players) wait for it; keys and rules are console tables.
// An operator of a large ledger can build the three indexes beforehand with CREATE INDEX CONCURRENTLY and the same
// definitions (and DROP INDEX CONCURRENTLY events_by_project): the statements below then find them and do nothing
// (docs/decisions.md, "Tenant-first reads").
import { Migration } from '@mikro-orm/migrations';

export class LedgerTenantFirstReads extends Migration {
  override name = '0013-tenant-first-reads';

  override up(): void {
    this.addSql(`create index if not exists players_linked_by_organization
      on ledger.players (organization_id, created_at desc, id desc) where credits_user_id is not null`);
    this.addSql(`create index if not exists keys_by_organization on ledger.keys (organization_id, created_at, id)`);
    this.addSql(`create index if not exists rules_by_organization on ledger.rules (organization_id, created_at, id)`);
    this.addSql(`drop index if exists ledger.events_by_project`);
  }
}
