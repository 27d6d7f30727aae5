// Decision search as the records page keeps it: the filters, the page size and the page's cursor live in the URL's
// hash (`#/records?player=…&status=rejected&size=50&after=…`), so a search is a link that can be shared, and back
// and forward walk through the searches and pages. One GraphQL read per page (`decisions`, docs/graphql.md).
import { gql } from '@apollo/client';
import type { EventRecord } from '../../api.ts';

export {
  DEFAULT_PAGE_SIZE,
  firstPage,
  isExternalPlayerId,
  newerPage,
  olderPage,
  PAGE_SIZES,
  pageNumberOf,
  playerHash,
  readSearch,
  SEARCH_KEYS,
  type Search,
  searchHash,
  searchProblems,
  UUID,
  variablesOf,
} from './url-state.ts';

export const DECISIONS = gql`
  query ConsoleDecisions(
    $organizationId: UUID, $projectId: UUID, $gameId: UUID, $playerId: UUID, $eventId: UUID,
    $status: EventStatus, $reason: EventReason, $eventType: String, $from: DateTime, $to: DateTime,
    $first: Int, $after: String, $last: Int, $before: String
  ) {
    decisions(
      organizationId: $organizationId, projectId: $projectId, gameId: $gameId, playerId: $playerId,
      eventId: $eventId, status: $status, reason: $reason, eventType: $eventType, from: $from, to: $to,
      first: $first, after: $after, last: $last, before: $before
    ) {
      edges {
        cursor
        externalPlayerId
        metadata
        node { id eventId gameId organizationId playerId eventType occurredAt status reason rewardCredits createdAt }
      }
      pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    }
  }
`;

export interface DecisionEdge {
  cursor: string;
  externalPlayerId: string;
  /** The event's metadata object as the game server sent it (RFC 8785 canonical: keys sorted); null when none. */
  metadata?: Record<string, unknown> | null;
  node: EventRecord;
}

export interface DecisionsResult {
  decisions: {
    edges: DecisionEdge[];
    pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
  } | null;
}
