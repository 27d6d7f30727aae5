// Live decisions of a game: the GraphQL subscription `decisions(gameId)` over graphql-transport-ws at the page's own
// origin and the GraphQL path (ws:// or wss://), with the in-memory session token in connection_init (never stored).
// Loaded with the game page only (its own chunk: graphql-ws and Apollo's GraphQLWsLink); api.ts sends every
// subscription here and everything else over HTTP.
//
// When the socket cannot connect or closes for any other reason than a normal end (1013 a dependency unavailable,
// 4008 SLOW_CONSUMER, 4403, a network error, the gateway going away, a GraphQL error of the subscription), the page
// falls back to polling and tries the socket again after 3 s, 6 s, 12 s, ... up to 60 s. A close with 4401
// (SESSION_EXPIRED, or a token refused at connect) ends the session: the app shows the signed-out state.
import { gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient } from 'graphql-ws/client';
import { useEffect, useState } from 'react';
import { client, currentSessionToken, type EventRecord, endSession, failureOf, GRAPHQL_PATH } from './api.ts';

const RETRY_FIRST_MS = 3000;
const RETRY_MAX_MS = 60_000;
/** Decisions kept from the socket (the page shows the newest 20). */
const RECEIVED_MAX = 20;

interface CloseInfo {
  code: number;
  reason: string;
}
let lastClose: CloseInfo | undefined;
const connectedListeners = new Set<() => void>();
const subscribedListeners = new Set<() => void>();

const socketUrl = () =>
  `${window.location.protocol === 'https:' ? 'wss:' : 'ws:'}//${window.location.host}${GRAPHQL_PATH}`;

/** One socket for the page, opened with the first subscription and closed with the last (lazy). */
const socket = createClient({
  url: socketUrl,
  lazy: true,
  // The page decides what a failure means (polling, then another attempt later): graphql-ws never retries itself.
  retryAttempts: 0,
  connectionParams: () => {
    const token = currentSessionToken();
    return token ? { Authorization: `Bearer ${token}` } : {};
  },
  on: {
    connecting: () => {
      lastClose = undefined;
    },
    connected: () => {
      for (const listener of [...connectedListeners]) listener();
    },
    closed: (event) => {
      const { code, reason } = event as CloseInfo;
      lastClose = { code, reason };
    },
    // The gateway pings `{subscribed: id}` once a subscription is live on its side (gateway/src/graphql/live.ts): a
    // decision committed before that reached no socket, so the page reads the decisions once more.
    ping: (received, payload) => {
      if (!received || payload?.subscribed === undefined) return;
      for (const listener of [...subscribedListeners]) listener();
    },
  },
});

export const liveLink = new GraphQLWsLink(socket);

const DECISIONS = gql`
  subscription ConsoleDecisions($gameId: ID!) {
    decisions(gameId: $gameId) {
      id gameId organizationId createdAt eventId playerId eventType occurredAt status reason rewardCredits
    }
  }
`;

export type LiveMode = 'live' | 'polling';

export interface LiveDecisions {
  mode: LiveMode;
  /** Why the page polls (while connecting, or the failure that ended the socket). */
  detail: string;
  /** Decisions received over the socket, newest first. */
  received: EventRecord[];
  /** How many decisions arrived over the socket since the page opened (charts refetch on each change). */
  count: number;
  /** How many times the gateway said a subscription became live (the page reads the decisions again on each). */
  subscribed: number;
}

/** What a failed socket or subscription says, for the indicator. */
function describe(error: unknown): string {
  if (lastClose && lastClose.code !== 1000) {
    return `the connection closed with ${lastClose.code}${lastClose.reason ? ` ${lastClose.reason}` : ''}`;
  }
  if (error === undefined) return 'the subscription ended';
  const failure = failureOf(error);
  return failure.code === 'network_error' ? 'the connection failed' : `${failure.code}: ${failure.message}`;
}

/**
 * The game's decisions over the subscription while it works; `mode` says whether the page may rely on it ('live')
 * or must poll ('polling', also while connecting).
 */
export function useLiveDecisions(gameId: string): LiveDecisions {
  const [state, setState] = useState<LiveDecisions>({
    mode: 'polling',
    detail: 'connecting to live updates',
    received: [],
    count: 0,
    subscribed: 0,
  });
  useEffect(() => {
    setState({ mode: 'polling', detail: 'connecting to live updates', received: [], count: 0, subscribed: 0 });
    let stopped = false;
    let failures = 0;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let subscription: { unsubscribe(): void } | undefined;
    const live = () => {
      if (stopped || !subscription) return;
      failures = 0;
      setState((s) => ({ ...s, mode: 'live', detail: '' }));
    };
    connectedListeners.add(live);
    const subscribed = () => {
      if (!stopped && subscription) setState((s) => ({ ...s, subscribed: s.subscribed + 1 }));
    };
    subscribedListeners.add(subscribed);
    const fail = (error: unknown) => {
      subscription?.unsubscribe();
      subscription = undefined;
      if (stopped) return;
      if (lastClose?.code === 4401) {
        endSession({
          code: lastClose.reason || 'UNAUTHORIZED',
          message: 'Your session has ended; sign in again.',
        });
        return;
      }
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures);
      failures += 1;
      const detail = `${describe(error)}; trying again in ${Math.round(delay / 1000)} s`;
      setState((s) => ({ ...s, mode: 'polling', detail }));
      retry = setTimeout(connect, delay);
    };
    function connect() {
      subscription = client
        .subscribe<{ decisions: EventRecord }>({ query: DECISIONS, variables: { gameId } })
        .subscribe({
          next: (result) => {
            if (result.error) return fail(result.error);
            const decision = result.data?.decisions;
            if (!decision || stopped) return;
            live();
            setState((s) => ({
              ...s,
              received: [decision, ...s.received.filter((d) => d.id !== decision.id)].slice(0, RECEIVED_MAX),
              count: s.count + 1,
            }));
          },
          error: fail,
          complete: () => fail(undefined),
        });
    }
    connect();
    return () => {
      stopped = true;
      connectedListeners.delete(live);
      subscribedListeners.delete(subscribed);
      if (retry) clearTimeout(retry);
      subscription?.unsubscribe();
    };
  }, [gameId]);
  return state;
}
