// The unique index behind games_organization (0014-webhooks attaches it as a constraint), built concurrently so that
// games stay writable while it builds. On a database that applied 0014-webhooks before this migration existed, the
// constraint's index already has this name and nothing is built.
import { type ConcurrentIndex, ConcurrentIndexMigration } from '#runtime/db/migrations.ts';

export class LedgerGamesOrganizationIndex extends ConcurrentIndexMigration {
  override name = '0014-games-organization-index';
  protected override readonly builds: ConcurrentIndex[] = [
    { schema: 'ledger', name: 'games_organization', definition: 'on ledger.games (id, organization_id)', unique: true },
  ];
}
