import { client, type EventRecord, RECORDS, type RecordsPage } from '../../api.ts';

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
