// Distributable by game (DESIGN.md "Growth beyond one machine"): every primary key, unique
// constraint and unique index of the tables the event path touches includes the game column, and every foreign key
// between two of them carries it on both sides, so that they can be distributed by game on Citus, co-located with
// ledger.games (docs/deploy.md, "Writes past one PostgreSQL"). test/integration/schema-distribution.test.ts reads the
// catalog and fails on any key that does not.
//
// The game column is APPENDED to each key, never put first: every index keeps leading with the column its lookups
// use (a record by its id, a player by its id in ledger.record_events, a token by its hash), so no plan changes.
//   - rules, players, link_intents, events: primary key (id) -> (id, game_id). An id is still unique across games by
//     construction (gen_random_uuid() / randomUUID(): 122 random bits, never taken from a caller).
//   - players' key is referenced by (player, game) now: an event, a link intent and a daily total belong to a player
//     OF THEIR GAME (the foreign keys used to check only that the player exists; record_events always kept it so).
//   - player_daily_totals gets game_id (the player's, backfilled), in its primary key (player_id, game_id, day): the
//     ledger's reads by player_id = any(...) keep leading with the player, and the key's prefix (player_id, game_id)
//     serves the foreign key to players.
//   - link_intents: the token hash was unique across all games (link_intents_token_hash_key); now per game
//     (link_intents_one_per_token (token_hash, game_id), which still serves the lookup by token). Across games a token
//     hash is unique by construction: the SHA-256 of 32 CSPRNG bytes (runtime/credentials/keys.ts, issueLinkToken).
//   - games: the slug was unique across games (games_slug_key); nothing looks a game up by its slug (it is only
//     shown), and it is a random UUID given at creation (console/write-repository.ts), unique by construction. The index
//     is dropped. If a lookup by slug ever comes, it needs a reference table slug -> game (as keys are one).
// keys keep their global unique key_hash: keys are to be a reference table (replicated), see docs/deploy.md.
//
// The SQL functions follow in the same release (sql/record_event.sql, record_events.sql: the daily total's game and
// `on conflict (game_id, player_id, day)`); they are repeatable migrations, applied right after this one. The
// previous version's bodies cannot run on this schema (their daily-total upsert names no game_id, and its arbiter
// (player_id, day) is gone), so:
//   - between this migration's commit and the new bodies' commit (milliseconds), a call that makes a fresh decision
//     fails (nothing stored) and its events are answered with an error;
//   - a ledger of a previous version that STARTS on this schema (a restart during the rollout, a rollback of the
//     Deployment) applies its own bodies again (repeatable migrations run at every start), and fresh decisions fail
//     until a ledger of this version starts and applies these. Do not roll the ledger back past this migration.
//
// Building the new primary keys and validating the new foreign keys reads each table once, inside the migration's
// transaction: on a large ledger.events, writes wait for it (as for 0007).
import { Migration } from '@mikro-orm/migrations';
import { APPLIED_BY_EVERY_RELEASE } from '#runtime/db/migrations.ts';

export class LedgerDistributableByGame extends Migration {
  override name = '0008-distributable-by-game';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'constraint-missing-not-valid': APPLIED_BY_EVERY_RELEASE,
    'adding-serial-primary-key-field': APPLIED_BY_EVERY_RELEASE,
    'adding-not-nullable-field': APPLIED_BY_EVERY_RELEASE,
    'adding-foreign-key-constraint': APPLIED_BY_EVERY_RELEASE,
    'disallowed-unique-constraint': APPLIED_BY_EVERY_RELEASE,
  };

  override up(): void {
    // The foreign keys to players (id) go first: the key they reference changes.
    this.addSql(`alter table ledger.events drop constraint events_player_id_fkey`);
    this.addSql(`alter table ledger.link_intents drop constraint link_intents_player_id_fkey`);
    this.addSql(`alter table ledger.player_daily_totals drop constraint player_daily_totals_player_id_fkey`);

    for (const table of ['rules', 'players', 'link_intents', 'events']) {
      this.addSql(`alter table ledger.${table} drop constraint ${table}_pkey,
        add constraint ${table}_pkey primary key (id, game_id)`);
    }

    this.addSql(`alter table ledger.player_daily_totals add column game_id uuid`);
    this.addSql(`update ledger.player_daily_totals t set game_id = p.game_id
      from ledger.players p where p.id = t.player_id`);
    this.addSql(`alter table ledger.player_daily_totals alter column game_id set not null`);
    this.addSql(`alter table ledger.player_daily_totals drop constraint player_daily_totals_pkey,
      add constraint player_daily_totals_pkey primary key (player_id, game_id, day)`);

    this.addSql(`alter table ledger.events add constraint events_player_of_game
      foreign key (game_id, player_id) references ledger.players (game_id, id)`);
    this.addSql(`alter table ledger.link_intents add constraint link_intents_player_of_game
      foreign key (game_id, player_id) references ledger.players (game_id, id)`);
    this.addSql(`alter table ledger.player_daily_totals add constraint player_daily_totals_player_of_game
      foreign key (game_id, player_id) references ledger.players (game_id, id)`);

    this.addSql(`alter table ledger.link_intents drop constraint link_intents_token_hash_key,
      add constraint link_intents_one_per_token unique (token_hash, game_id)`);

    this.addSql(`alter table ledger.games drop constraint games_slug_key`);
  }
}
