// The reads the object pages share: what the search finds for an id (the object itself, with its figures) and a
// player's newest decisions.
import { useQuery } from '@apollo/client/react';
import { failureOf, type ServerFailure } from '../../api.ts';
import { SEARCH, type SearchFound, type SearchResult } from '../../search.ts';
import { DECISIONS, type DecisionEdge, type DecisionsResult } from '../decisions/search.ts';

export function useFound(text: string): {
  found: SearchFound | undefined;
  failure: ServerFailure | undefined;
  loading: boolean;
} {
  const { data, error, loading } = useQuery<SearchResult>(SEARCH, {
    variables: { text },
    fetchPolicy: 'network-only',
  });
  return { found: data?.search ?? undefined, failure: error ? failureOf(error) : undefined, loading };
}

/** The decisions a filter finds (newest first, `first` of them), with the game's own player id and metadata. */
export function useDecisions(
  variables: Record<string, unknown>,
  skip: boolean,
): { edges: DecisionEdge[] | undefined; failure: ServerFailure | undefined } {
  const { data, error } = useQuery<DecisionsResult>(DECISIONS, { variables, skip, fetchPolicy: 'network-only' });
  return { edges: data?.decisions?.edges, failure: error ? failureOf(error) : undefined };
}
