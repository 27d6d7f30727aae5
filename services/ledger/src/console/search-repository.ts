// The SQL of the console's search box (GraphQL search): what a text finds in the caller's organizations. Every
// statement is scoped to the organizations where the caller is a member right now, and reads through an index that
// leads with the tenant: the console tables by organization (their few rows per organization), players and
// decisions one probe per game of the caller ((id, game_id) primary keys, players_one_per_external_id,
// events_one_decision), a player's rewards through events_by_player, a key's use through events_by_game.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoSql } from '#runtime/db/sql.ts';
import { credits, numeric, optionalText, queryRows, rowReader, text } from '../db/rows.ts';
import {
  EVENT_COLUMNS,
  type EventRecord,
  eventRow,
  MEMBER_ORGS,
  PLAYER_COLUMNS,
  type Player,
  playerRow,
  type Statement,
} from './read-repository.ts';

/** The most objects of each kind one search answers. */
export const SEARCH_LIMIT = 10;

export interface SearchQuery {
  identityUserId: string;
  /** Trimmed, 1..200 characters. */
  text: string;
  /** Whether the text is a UUID (ids are looked up only then). */
  uuid: boolean;
}

export interface PlayerRewards {
  player: Player;
  rewardedTodayCredits: bigint;
  rewardedCredits: bigint;
}

export interface KeyUse {
  keyId: string;
  decisionsToday: number;
  lastUsedTodayAt?: string;
}

export interface SearchRows {
  organizationIds: string[];
  projectIds: string[];
  gameIds: string[];
  keys: KeyUse[];
  players: PlayerRewards[];
  decisions: EventRecord[];
}

/** The games of the caller's organizations, each a unit the player and decision probes run in. */
const MEMBER_GAMES = `(select g.id from ledger.games g where g.organization_id in ${MEMBER_ORGS})`;

/** `%` and `_` in the text are literal in a name search. */
const likePattern = (value: string) => `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The most words of a text a name is matched on (the rest still has to be in the name as typed). */
const NAME_WORDS_MAX = 8;

/**
 * The patterns a name must all match (`ilike all`), as JSON text: each word of the text, in any order and case, so
 * that "quest moon" and "moo que" find "Moon Quest"; a text of one word is that word, as before.
 */
function namePatterns(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const kept = words.length > NAME_WORDS_MAX ? [text] : words;
  return JSON.stringify(kept.map(likePattern));
}
const NAME_MATCHES = (column: string) => `${column} ilike all (array(select jsonb_array_elements_text(?::jsonb)))`;

/**
 * The statements of one search, by kind. Organizations, projects and games by id or by a name that contains each
 * word of the text (namePatterns); keys by id or prefix; players by id or the game's own id; decisions by id or event id.
 */
export function searchStatements(
  q: SearchQuery,
): Record<'organizations' | 'projects' | 'games' | 'keys' | 'players' | 'decisions', Statement> {
  const id = q.uuid ? q.text.toLowerCase() : null;
  const name = namePatterns(q.text);
  const named = (table: 'projects' | 'games'): Statement => ({
    sql: `select p.id from ledger.${table} p
           where p.organization_id in ${MEMBER_ORGS} and (p.id = ?::uuid or ${NAME_MATCHES('p.name')})
           order by p.created_at, p.id limit ?`,
    params: [q.identityUserId, id, name, SEARCH_LIMIT],
  });
  // One probe per game of the caller: by id ((id, game_id) primary key) or by the game's own id.
  const probe = (table: 'players' | 'events', columns: string, where: string, params: unknown[]): Statement => ({
    sql: `select q.* from ${MEMBER_GAMES} s cross join lateral (
            select ${columns}, p.created_at as sort_at from ledger.${table} p where p.game_id = s.id and ${where}) q
          order by q.sort_at desc, q.id desc limit ?`,
    params: [q.identityUserId, ...params, SEARCH_LIMIT],
  });
  return {
    organizations: {
      sql: `select o.id from ledger.organizations o
             where o.id in ${MEMBER_ORGS} and (o.id = ?::uuid or ${NAME_MATCHES('o.name')})
             order by o.created_at, o.id limit ?`,
      params: [q.identityUserId, id, name, SEARCH_LIMIT],
    },
    projects: named('projects'),
    games: named('games'),
    keys: {
      sql: `select p.id, p.game_id from ledger.keys p
             where p.organization_id in ${MEMBER_ORGS}
               and (p.id = ?::uuid or starts_with(p.prefix, ?) or starts_with(?, p.prefix))
             order by p.created_at desc, p.id desc limit ?`,
      params: [q.identityUserId, id, q.text, q.text, SEARCH_LIMIT],
    },
    players: q.uuid
      ? probe('players', PLAYER_COLUMNS, '(p.id = ?::uuid or p.external_player_id = ?)', [id, q.text])
      : probe('players', PLAYER_COLUMNS, 'p.external_player_id = ?', [q.text]),
    decisions: q.uuid
      ? probe('events', EVENT_COLUMNS, '(p.id = ?::uuid or p.event_id = ?::uuid)', [id, id])
      : { sql: 'select 1 where false', params: [] },
  };
}

/** What the ledger paid a player: on the UTC day of `dayStart` (the daily cap's total) and over every decision. */
export function playerRewardsStatement(player: { id: string; gameId: string }, day: string): Statement {
  return {
    sql: `select
            (select coalesce(sum(t.credits), 0) from ledger.player_daily_totals t
              where t.player_id = ? and t.game_id = ? and t.day = ?::date)::text as today,
            (select coalesce(sum(e.reward_credits), 0) from ledger.events e
              where e.player_id = ? and e.status = 'accepted')::text as total`,
    params: [player.id, player.gameId, day, player.id],
  };
}

/** A key's decisions of the UTC day from `dayStart`: a range of its game's events_by_game, filtered by the key. */
export function keyUseStatement(key: { id: string; gameId: string }, dayStart: Date): Statement {
  return {
    sql: `select count(*)::int as decisions, ${isoSql('max(e.created_at)', 'last_used_at')}
            from ledger.events e where e.game_id = ? and e.created_at >= ? and e.key_id = ?`,
    params: [key.gameId, dayStart.toISOString(), key.id],
  };
}

const idRow = text('id');
const keyUseRow = rowReader<{ decisions: number; lastUsedAt: string | undefined }>({
  decisions: numeric('decisions'),
  lastUsedAt: optionalText('last_used_at'),
});
const rewardsRow = rowReader<{ today: bigint; total: bigint }>({ today: credits('today'), total: credits('total') });

/**
 * One search, on one database snapshot (the caller's transaction); `now` sets the UTC day of the figures (null: the
 * database's now(), as the event path stamps decisions).
 */
export async function readSearch(em: EntityManager, q: SearchQuery, clockNow: Date | null): Promise<SearchRows> {
  const now = clockNow ?? new Date(text('now')((await queryRows(em, `select ${isoSql('now()', 'now')}`))[0]!));
  const statements = searchStatements(q);
  const rows = async (statement: Statement) => queryRows(em, statement.sql, statement.params);
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const day = dayStart.toISOString().slice(0, 10);
  const keys: KeyUse[] = [];
  for (const row of await rows(statements.keys)) {
    const key = { id: idRow(row), gameId: text('game_id')(row) };
    const use = keyUseRow((await rows(keyUseStatement(key, dayStart)))[0]!);
    keys.push({
      keyId: key.id,
      decisionsToday: use.decisions,
      ...(use.lastUsedAt ? { lastUsedTodayAt: use.lastUsedAt } : {}),
    });
  }
  const players: PlayerRewards[] = [];
  for (const player of (await rows(statements.players)).map(playerRow)) {
    const rewards = rewardsRow((await rows(playerRewardsStatement(player, day)))[0]!);
    players.push({ player, rewardedTodayCredits: rewards.today, rewardedCredits: rewards.total });
  }
  return {
    organizationIds: (await rows(statements.organizations)).map(idRow),
    projectIds: (await rows(statements.projects)).map(idRow),
    gameIds: (await rows(statements.games)).map(idRow),
    keys,
    players,
    decisions: (await rows(statements.decisions)).map(eventRow),
  };
}
