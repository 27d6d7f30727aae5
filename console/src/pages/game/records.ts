import { client, type EventRecord, type PlayerRecord, RECORDS, type RecordsPage } from '../../api.ts';

/** The first `first` records of one kind for a game, read from the server (not the cache). */
export async function page(kind: 'events' | 'players', gameId: string, first: number) {
  const result = await client.query<RecordsPage>({
    query: RECORDS,
    variables: { kind, gameId, first },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  return result.data?.records?.edges.map((e) => e.node) ?? [];
}

/** The newest `count` of both lists (the subscription's and the last read), in the records API's order. */
export function newest(received: EventRecord[], read: EventRecord[], count: number): EventRecord[] {
  const byId = new Map([...read, ...received].map((e) => [e.id, e]));
  return [...byId.values()]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    .slice(0, count);
}

/** The most pages of players read to name players by the game's own ids (100 a page). */
export const PLAYER_PAGES_MAX = 20;

/** The game's players, newest first, 100 a page, at most `pages` pages (for the game's own ids of its players). */
export async function gamePlayers(gameId: string, pages = PLAYER_PAGES_MAX): Promise<PlayerRecord[]> {
  const players: PlayerRecord[] = [];
  let after: string | undefined;
  for (let read = 0; read < pages; read += 1) {
    const result = await client.query<RecordsPage>({
      query: RECORDS,
      variables: { kind: 'players', gameId, first: 100, after },
      fetchPolicy: 'network-only',
    });
    if (result.error) throw result.error;
    const records = result.data?.records;
    for (const edge of records?.edges ?? []) if (edge.node.__typename === 'DeveloperPlayer') players.push(edge.node);
    if (!records?.pageInfo.hasNextPage || !records.pageInfo.endCursor) break;
    after = records.pageInfo.endCursor;
  }
  return players;
}
