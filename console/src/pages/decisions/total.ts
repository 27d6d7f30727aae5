// How many decisions a search finds in all, estimated from the game's statistics (GraphQL decisionStats, day
// buckets): only for a search within one game whose filters the statistics count (status, reason, the window), so
// that a long list can say "about 10,000 decisions" and "page 3 of about 500". "About": decisions keep arriving, and
// a window without a start is counted over the last 400 days (the statistics' bound), which older decisions pass.
import { gql } from '@apollo/client';
import type { Search } from './url-state.ts';

export const TOTAL_STATS = gql`
  query ConsoleSearchTotal($gameId: UUID!, $from: DateTime!, $to: DateTime!) {
    decisionStats(gameId: $gameId, from: $from, to: $to, bucket: day) {
      buckets { accepted rejected reasons { reason count } }
    }
  }
`;

export interface TotalBucket {
  accepted: number;
  rejected: number;
  reasons: Array<{ reason: string; count: number }>;
}

const DAY_MS = 86_400_000;
/** decisionStats answers at most 400 buckets. */
const DAYS_MAX = 400;

/** The decisionStats window of a search's total, or undefined when the statistics cannot count its filters. */
export function totalWindow(search: Search, now: number): { gameId: string; from: string; to: string } | undefined {
  if (!search.game || search.player || search.event || search.type) return undefined;
  const to = search.to ? Date.parse(search.to) : now + 60_000;
  const from = Math.max(search.from ? Date.parse(search.from) : -Infinity, to - DAYS_MAX * DAY_MS + 1);
  if (!Number.isFinite(to) || !(from < to)) return undefined;
  return { gameId: search.game, from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

/** The decisions of the buckets that match the search's status and reason. */
export function totalOf(buckets: TotalBucket[], search: Search): number {
  let total = 0;
  for (const bucket of buckets) {
    if (search.reason) {
      if (search.status === 'accepted') continue;
      total += bucket.reasons.find((r) => r.reason === search.reason)?.count ?? 0;
    } else if (search.status === 'accepted') total += bucket.accepted;
    else if (search.status === 'rejected') total += bucket.rejected;
    else total += bucket.accepted + bucket.rejected;
  }
  return total;
}

/** "about 10,000 decisions", "about 1 decision". */
export const aboutDecisions = (total: number) =>
  `about ${total.toLocaleString('en-US')} decision${total === 1 ? '' : 's'}`;

/** How many pages of `size` the total makes (at least 1). */
export const pagesOf = (total: number, size: number) => Math.max(1, Math.ceil(total / size));
