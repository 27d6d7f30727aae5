// The decisions of one player, newest first (GraphQL decisions with `playerId`, the web console's "this player's
// other decisions"): a keyset page is a range of this index, as events_by_game is for a game. Without it a player's
// decisions are a filter over every decision of the game (events_by_game), a scan that grows with the game's history.
// It is one more index for each decision insert to maintain (the price of finding a player's decisions by index).
// Not unique, so it needs no game column to stay distributable by game (0008): a player belongs to one game.
// Built concurrently: the event path keeps inserting decisions while it builds.
import { type ConcurrentIndex, ConcurrentIndexMigration } from '#runtime/db/migrations.ts';

export class LedgerEventsByPlayer extends ConcurrentIndexMigration {
  override name = '0009-events-by-player';
  protected override readonly builds: ConcurrentIndex[] = [
    {
      schema: 'ledger',
      name: 'events_by_player',
      definition: 'on ledger.events (player_id, created_at desc, id desc)',
    },
  ];
}
