// Shared steps of the live decisions tests: a real graphql-ws client (the `ws` WebSocket, any Origin), one
// `decisions` subscription recorded as it goes, a game ready for events (console world, rule, key, player), and
// waits that poll with a deadline.
import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { insertPlayer, ok, type World, world } from './console.ts';
import { api, type TestSystem } from './system.ts';

export const DECISIONS = `subscription Live($gameId: ID!) {
  decisions(gameId: $gameId) { id eventId gameId organizationId playerId eventType occurredAt status reason rewardCredits createdAt }
}`;

export async function until(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = 5000) {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface LiveClient {
  client: Client;
  /** The socket's close, once it closed. */
  closed: { code: number; reason: string } | undefined;
  /** The connection was acknowledged. */
  connected: boolean;
  /** The client's WebSocket once opened (tests pause its reading). */
  socket: WebSocket | undefined;
  dispose(): Promise<void>;
}

/** A graphql-ws client of the system's /graphql, connected at once; no retries (a refusal stays visible). */
export function liveClient(
  baseUrl: string,
  options: { token?: string | undefined; origin?: string; connectionParams?: Record<string, unknown> } = {},
): LiveClient {
  const origin = options.origin;
  class OriginWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, origin ? { headers: { Origin: origin } } : {});
    }
  }
  const state: LiveClient = {
    closed: undefined,
    connected: false,
    socket: undefined,
    client: createClient({
      url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: OriginWebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionParams: options.connectionParams ?? (options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      on: {
        opened: (socket) => {
          state.socket = socket as WebSocket;
        },
        connected: () => {
          state.connected = true;
        },
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: string };
          state.closed = { code, reason: String(reason) };
        },
      },
      onNonLazyError: () => undefined,
    }),
    dispose: async () => {
      await state.client.dispose();
    },
  };
  return state;
}

export interface Recorded {
  events: any[];
  errors: any[];
  completed: boolean;
  stop(): void;
}

/** Subscribes to one game's decisions and records what arrives. */
export function subscribeDecisions(live: LiveClient, gameId: string, query = DECISIONS): Recorded {
  const recorded: Recorded = { events: [], errors: [], completed: false, stop: () => undefined };
  recorded.stop = live.client.subscribe(
    { query, variables: { gameId } },
    {
      next: (result) => {
        if (result.errors) recorded.errors.push(...result.errors);
        if (result.data) recorded.events.push((result.data as { decisions: unknown }).decisions);
      },
      error: (error) => {
        recorded.errors.push(...(Array.isArray(error) ? error : [error]));
      },
      complete: () => {
        recorded.completed = true;
      },
    },
  );
  return recorded;
}

/** The gateway's open decisions subscriptions (metrics gauge). */
export async function liveSubscriptions(baseUrl: string): Promise<number> {
  const response = await api(baseUrl, 'GET', '/metrics');
  const match = /^graphql_live_subscriptions (\d+)$/m.exec(String(response.body));
  return match ? Number(match[1]) : 0;
}

/** Drops counted by reason (metrics counter). */
export async function liveDrops(baseUrl: string, reason: string): Promise<number> {
  const response = await api(baseUrl, 'GET', '/metrics');
  const match = new RegExp(`^graphql_live_subscription_drops_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(
    String(response.body),
  );
  return match ? Number(match[1]) : 0;
}

export interface EventGame extends World {
  key: string;
  playerId: string;
  eventType: string;
}

/** A funded game of `token`'s new organization with a rule, a secret key and a linked player. */
export async function eventGame(system: TestSystem, token: string): Promise<EventGame> {
  const w = await world(system, token);
  const eventType = 'level.complete';
  await ok(system, token, { type: 'createRule', gameId: w.gameId, eventType, rewardCredits: 5 });
  const issued = await ok(system, token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' });
  // The database in use (on the embedded default the PGlite server's loopback URL).
  const playerId = await insertPlayer({ ...system, databaseUrl: system.running.databaseUrl }, w.gameId);
  return { ...w, key: issued.issuedKey as string, playerId, eventType };
}

/** One event of the game's player, occurring now. */
export function gameEvent(game: EventGame): Record<string, unknown> {
  return {
    eventId: randomUUID(),
    playerId: game.playerId,
    eventType: game.eventType,
    occurredAt: new Date().toISOString(),
  };
}

export async function postGameEvent(baseUrl: string, game: EventGame, body: Record<string, unknown>) {
  const response = await api(baseUrl, 'POST', '/api/game-sdk/v2/events', { token: game.key, body });
  if (response.status !== 200) throw new Error(`event refused: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data as Record<string, unknown> & { replayed: boolean };
}

/** A subscription of `token` to the game's decisions, live on the gateway (its gauge went up) when this resolves. */
export async function liveSubscription(baseUrl: string, token: string, gameId: string) {
  const before = await liveSubscriptions(baseUrl);
  const live = liveClient(baseUrl, { token });
  const recorded = subscribeDecisions(live, gameId);
  await until(
    async () => recorded.errors.length > 0 || (await liveSubscriptions(baseUrl)) > before,
    'the subscription to be live',
  );
  if (recorded.errors.length > 0) throw new Error(`subscription refused: ${JSON.stringify(recorded.errors)}`);
  return { live, recorded };
}
