// Helpers of the game-server client's tests: a fetch that records what the client sent (each request's path and
// body) before it goes to the real service, the events each body carried, and the decisions stored for a game.
import type { FetchLike } from '../../../clients/game-server/src/index.ts';
import { sql } from '../../support/database.ts';

export interface SentRequest {
  url: string;
  body: string;
}

/** globalThis.fetch, recording each request the client makes; `before` runs first (a test's fault goes there). */
export function recordingFetch(before?: (request: SentRequest, index: number) => void): {
  fetch: FetchLike;
  sent: SentRequest[];
} {
  const sent: SentRequest[] = [];
  const fetch: FetchLike = async (url, init) => {
    const request = { url, body: init.body };
    sent.push(request);
    before?.(request, sent.length - 1);
    return globalThis.fetch(url, init);
  };
  return { fetch, sent };
}

/** Each event's text as a request carried it: the body itself, or the batch's items cut out of its text. */
export function eventTexts(request: SentRequest): string[] {
  if (!request.url.endsWith('/batch')) return [request.body];
  const prefix = '{"events":[';
  expect(request.body.startsWith(prefix) && request.body.endsWith(']}')).toBe(true);
  const items = (JSON.parse(request.body) as { events: unknown[] }).events;
  // The texts are cut where the parsed items say they end: each item re-serialized has the client's bytes (it wrote
  // them with JSON.stringify), so the concatenation must give the body back exactly.
  const texts = items.map((item) => JSON.stringify(item));
  expect(`${prefix}${texts.join(',')}]}`).toBe(request.body);
  return texts;
}

/** The decisions stored for a game: event id to the decision ids (one each, if every event was decided once). */
export async function storedDecisions(databaseUrl: string, gameId: string): Promise<Map<string, string[]>> {
  const rows = await sql<{ event_id: string; id: string }>(
    databaseUrl,
    'select event_id::text, id::text from ledger.events where game_id = $1 order by created_at, id',
    [gameId],
  );
  const byEvent = new Map<string, string[]>();
  for (const row of rows) byEvent.set(row.event_id, [...(byEvent.get(row.event_id) ?? []), row.id]);
  return byEvent;
}
