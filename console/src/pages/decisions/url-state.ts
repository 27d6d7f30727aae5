// A decision search as the records page keeps it in the URL's hash (`#/records?player=…&status=rejected&size=50&after=…`):
// reading and writing it, the problems the browser refuses before sending, and the GraphQL variables of a search.
// Pure: no React, no request (console/src/pages/decisions/search.ts adds the query).
import { EVENT_TYPE_REGEX } from '../../../../services/runtime/src/contracts/vocabulary.ts';

/** The page sizes offered (the API allows 1..100). */
export const PAGE_SIZES = [25, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 25;

/** A search: the URL's parameters, by their names in the URL. */
export interface Search {
  org?: string | undefined;
  project?: string | undefined;
  game?: string | undefined;
  player?: string | undefined;
  event?: string | undefined;
  status?: string | undefined;
  reason?: string | undefined;
  type?: string | undefined;
  /** RFC 3339 instants (UTC), createdAt in [from, to). */
  from?: string | undefined;
  to?: string | undefined;
  size: number;
  /** The page after this cursor (older decisions), or before it (newer ones). */
  after?: string | undefined;
  before?: string | undefined;
  /**
   * Which page this is, counted from the newest (2 and up; absent: the first): where "Older page" and "Newer page"
   * have taken the reader, so that the page can say "Page 3". A position to read, not a cursor.
   */
  page?: number | undefined;
}

/** The URL's parameters in the order they are written. */
export const SEARCH_KEYS = [
  'org',
  'project',
  'game',
  'player',
  'event',
  'status',
  'reason',
  'type',
  'from',
  'to',
  'size',
  'after',
  'before',
  'page',
] as const;

/** The search the current URL names (`#/records?…`); `gameId` is the older `#/records/events/<gameId>` route's. */
export function readSearch(hash: string, gameId?: string): Search {
  const query = new URLSearchParams(hash.split('?')[1] ?? '');
  const search: Search = { size: DEFAULT_PAGE_SIZE };
  for (const key of SEARCH_KEYS) {
    const value = query.get(key)?.trim();
    if (!value) continue;
    if (key === 'size') {
      const size = Number(value);
      search.size = (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_PAGE_SIZE;
    } else if (key === 'page') {
      const page = Number(value);
      // Only with a cursor: the first page has no number in its address.
      if (Number.isInteger(page) && page >= 2 && page <= 1_000_000) search.page = page;
    } else search[key] = value;
  }
  if (search.game === undefined && gameId) search.game = gameId;
  if (!search.after && !search.before) search.page = undefined;
  return search;
}

/** The records page's URL for a search: `#/records?…`, empty parameters left out, the default size too. */
export function searchHash(search: Search): string {
  const query = new URLSearchParams();
  for (const key of SEARCH_KEYS) {
    const value = search[key];
    if (value === undefined || value === '') continue;
    if (key === 'size' && value === DEFAULT_PAGE_SIZE) continue;
    query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `#/records?${text}` : '#/records';
}

/** The same search from its first page (filters changed: cursors are bound to the filters). */
export const firstPage = (search: Search): Search => ({
  ...search,
  after: undefined,
  before: undefined,
  page: undefined,
});

/** The page after `search`'s (older decisions, from `cursor`), one further from the newest. */
export const olderPage = (search: Search, cursor: string): Search => ({
  ...search,
  before: undefined,
  after: cursor,
  page: (search.page ?? 1) + 1,
});

/**
 * The page before `search`'s (newer decisions, up to `cursor`), one nearer the newest: from page 2, the newest page
 * itself. A page of unknown number (an address without one) stays unnumbered.
 */
export const newerPage = (search: Search, cursor: string): Search => {
  if (search.page === 2) return firstPage(search);
  return { ...search, after: undefined, before: cursor, page: search.page === undefined ? undefined : search.page - 1 };
};

/** The number of the page `search` names: 1 for the newest, undefined when an address with a cursor gave none. */
export const pageNumberOf = (search: Search): number | undefined =>
  search.page ?? (search.after || search.before ? undefined : 1);

/** A player's decisions (the link a players list or a live table can give). */
export const playerHash = (gameId: string, playerId: string) =>
  searchHash({ game: gameId, player: playerId, size: DEFAULT_PAGE_SIZE });

/** The game's own player id (CreateLinkIntent.externalPlayerId): 1..200 characters, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it refuses
const EXTERNAL_PLAYER_ID = /^[^\u0000-\u001f\u007f]{1,200}$/;

/** A player named by the game's own id (externalPlayerId) rather than the player id (a UUID). */
export const isExternalPlayerId = (player: string | undefined): player is string =>
  player !== undefined && !UUID.test(player);

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The problems of a search, per field, in plain sentences: a search with any is not sent. */
export function searchProblems(search: Search): Partial<Record<keyof Search, string>> {
  const problems: Partial<Record<keyof Search, string>> = {};
  if (search.player !== undefined && !UUID.test(search.player)) {
    if (!EXTERNAL_PLAYER_ID.test(search.player))
      problems.player = "Enter the game's own player id (like hero-9, 1 to 200 characters) or a player id (a UUID).";
    else if (search.game === undefined)
      problems.player = "A game's own player id (like hero-9) is looked up in one game: choose the game too.";
  }
  if (search.event !== undefined && !UUID.test(search.event))
    problems.event = 'An event id is the UUID the game server sent as eventId.';
  if (search.type !== undefined && !EVENT_TYPE_REGEX.test(search.type))
    problems.type = 'An event type starts with a lower-case letter, then up to 63 of a-z, 0-9, _ . - (like level.up).';
  for (const key of ['from', 'to'] as const) {
    if (search[key] !== undefined && Number.isNaN(Date.parse(search[key]))) problems[key] = 'Enter a date and time.';
  }
  if (!problems.from && !problems.to && search.from && search.to && Date.parse(search.to) <= Date.parse(search.from))
    problems.to = 'The end of the window must be after its start.';
  for (const key of ['org', 'project', 'game'] as const) {
    if (search[key] !== undefined && !UUID.test(search[key])) problems[key] = 'Choose one from the list.';
  }
  return problems;
}

/** The GraphQL variables of a search: `before` pages backward (`last`), anything else forward (`first`). */
export function variablesOf(search: Search): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  const filters: Array<[keyof Search, string]> = [
    ['org', 'organizationId'],
    ['project', 'projectId'],
    ['game', 'gameId'],
    ['player', 'playerId'],
    ['event', 'eventId'],
    ['status', 'status'],
    ['reason', 'reason'],
    ['type', 'eventType'],
    ['from', 'from'],
    ['to', 'to'],
  ];
  for (const [key, argument] of filters) if (search[key] !== undefined) variables[argument] = search[key];
  if (search.before) {
    variables.last = search.size;
    variables.before = search.before;
  } else {
    variables.first = search.size;
    if (search.after) variables.after = search.after;
  }
  return variables;
}
