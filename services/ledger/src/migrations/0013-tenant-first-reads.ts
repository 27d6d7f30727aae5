// Reads that cost what they show: every console and records read ranges over an index that leads
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
// Built and dropped concurrently: the event path and the console keep writing while it runs.
import { type ConcurrentIndex, ConcurrentIndexMigration } from '#runtime/db/migrations.ts';

export class LedgerTenantFirstReads extends ConcurrentIndexMigration {
  override name = '0013-tenant-first-reads';
  protected override readonly builds: ConcurrentIndex[] = [
    {
      schema: 'ledger',
      name: 'players_linked_by_organization',
      definition: 'on ledger.players (organization_id, created_at desc, id desc) where credits_user_id is not null',
    },
    { schema: 'ledger', name: 'keys_by_organization', definition: 'on ledger.keys (organization_id, created_at, id)' },
    {
      schema: 'ledger',
      name: 'rules_by_organization',
      definition: 'on ledger.rules (organization_id, created_at, id)',
    },
  ];
  protected override readonly drops = ['ledger.events_by_project'];
}
