// Live decisions (CONTRACT section 11): the GraphQL subscription `decisions(gameId)` over the graphql-transport-ws
// protocol (graphql-ws on a `ws` server) at the GraphQL path of the gateway's HTTP server; POST /graphql is unchanged.
//
// - Connect: the platform switch, then the developer session of connection_init's payload `Authorization` (a Bearer
//   token), admitted by identity-admission exactly as an HTTP request (jose verification, invitation, and the Origin
//   header of the upgrade request against ALLOWED_ORIGINS), within the developer's limits (auth/developer-limits.ts:
//   a connection attempt costs DEVELOPER_COSTS.connection, counted before the admission when its token was admitted
//   before). Refusals close the socket: 4401 (401: no/invalid token), 4403 (403: foreign origin, revoked invitation,
//   ...), 4029 (429: past the developer's limits), 1013 (503: a dependency or the platform is unavailable); the close
//   reason is the API's error code.
// - Subscribe: first, before the message is parsed, the socket's bounds on subscribe messages: a token bucket
//   (SUBSCRIBE_MESSAGES_BURST at once, then SUBSCRIBE_MESSAGES_PER_SECOND) whose overflow closes the socket with 4029
//   TOO_MANY_SUBSCRIBE_MESSAGES, and the subscriptions it holds (SUBSCRIPTIONS_PER_CONNECTION_MAX, 400
//   INVALID_REQUEST), so that a burst costs neither parsing nor NATS calls past them. Then a request of the
//   developer's limits (429 TOO_MANY_REQUESTS past them, the socket open) and the same game read check as
//   decisionStats (the ledger's membership check: 404 not_found for a game the developer cannot see), answered as a
//   GraphQL error with that code and status.
// - Deliveries: the ledger publishes each fresh decision after commit on the game's subject; the gateway holds one
//   plain NATS subscription per game while it has subscribers to it (no queue group: every replica gets every
//   decision once) and fans it out, as the records API shows it (eventJson of the same DeveloperEvent message).
// - Ends: a removed member's subscriptions end with 404 not_found as soon as the ledger's MembershipChanged notice
//   arrives, and every RECHECK_MS anyway (admission and read check again: a lost notice or a revoked invitation ends
//   them too); the session's `exp` closes the socket with 4401 SESSION_EXPIRED; a consumer too slow to read is
//   dropped (4008 SLOW_CONSUMER) once a subscription has QUEUE_MAX decisions waiting or the socket
//   SOCKET_BUFFER_MAX_BYTES unsent. Shutdown closes every socket with 1001 (graphql-ws dispose) before HTTP closes.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  getOperationAST,
  parse,
  specifiedRules,
  type ValidationRule,
  validate,
} from 'graphql';
import type { CloseCode, makeServer } from 'graphql-ws';
// Renamed: graphql-ws's `useServer` is no React hook (biome's hook rule goes by the name).
import { useServer as serveOverWs } from 'graphql-ws/use/ws';
import { decodeJwt } from 'jose';
import { Counter, Gauge } from 'prom-client';
import { type WebSocket, WebSocketServer } from 'ws';
import type { DeveloperPrincipal } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { decisionsSubject, decisionsTopic, MEMBERSHIP_SUBJECT, membershipTopic } from '#runtime/contracts/subjects.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { CallContext, NoticeSubscription, Transport } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import {
  DEVELOPER_COSTS,
  type DeveloperLease,
  type DeveloperLimits,
  TooManyRequestsError,
} from '../auth/developer-limits.ts';
import { refusesCredential, sameOriginAs } from '../auth/developer-session.ts';
import { consolePrincipal, readDecisionStats } from '../console/service.ts';
import { eventGraphqlJson } from '../console/shapes.ts';
import { findAppError, INTERNAL_MESSAGE, withoutSuggestions } from './errors.ts';
import { LiveChannel } from './live-channel.ts';

/** Bounds and timings of live subscriptions (documented in docs/graphql.md). */
export const LIVE_LIMITS = {
  /** Decisions waiting in one subscription's queue; one more drops the consumer. */
  queueMax: 256,
  /** Bytes a socket may hold written but not yet sent (ws bufferedAmount); past it the consumer is dropped. */
  socketBufferMaxBytes: 1_048_576,
  /** Admission and read check of every open subscription again, at most this long apart. */
  recheckMs: 60_000,
  /**
   * Subscriptions one connection may hold at once, those still being checked included; one more is refused (400
   * INVALID_REQUEST), before its document is parsed when the connection is already full, before the read check always.
   */
  subscriptionsPerConnectionMax: 25,
  /**
   * Subscribe messages one connection may send at once: a token bucket of this size, counted before a message is
   * parsed; the message past it closes the socket (4029 TOO_MANY_SUBSCRIBE_MESSAGES). Twice
   * subscriptionsPerConnectionMax: every slot filled, and each replaced once, in one go.
   */
  subscribeMessagesBurst: 50,
  /**
   * Tokens given back to that bucket per second: a client may go on subscribing (and completing) at this rate for
   * ever. The web console sends one subscribe message per game page it opens, far below it.
   */
  subscribeMessagesPerSecond: 10,
  /** A client message (connection_init, subscribe) larger than this closes the socket (ws maxPayload). */
  messageMaxBytes: 16_384,
} as const;

/** Close codes of the gateway's own (graphql-ws's are 44xx; see docs/graphql.md). */
export const LIVE_CLOSE = {
  unauthorized: 4401 as CloseCode.Unauthorized,
  forbidden: 4403 as CloseCode.Forbidden,
  /** A consumer too slow to read its decisions. */
  slowConsumer: 4008,
  /** The developer already holds LIVE_CONNECTIONS_PER_DEVELOPER_MAX connections on this gateway (HTTP 429's echo). */
  tooManyConnections: 4029,
  /**
   * The socket sent subscribe messages past LIVE_LIMITS' bucket: HTTP 429's echo as well, told apart by the reason
   * (TOO_MANY_SUBSCRIBE_MESSAGES). Not graphql-ws's 4429, which the protocol gives to a second connection_init.
   */
  tooManySubscribeMessages: 4029,
  /**
   * A connection attempt past the developer's limits (auth/developer-limits.ts): HTTP 429's echo, reason
   * TOO_MANY_REQUESTS. The upgrade itself cannot be refused with 429: the session arrives in connection_init.
   */
  tooManyRequests: 4029,
  /** RFC 6455 1013 Try Again Later: identity-admission or the platform unavailable at connect. */
  tryAgainLater: 1013,
} as const;

export interface LiveDecisionsOptions {
  schema: GraphQLSchema;
  transport: Transport;
  platform: PlatformSwitch;
  logger: Logger;
  metrics?: Metrics | undefined;
  path: string;
  validationRules: ValidationRule[];
  maxTokens: number;
  development: boolean;
  /** GRAPHQL_INTROSPECTION off: no "Did you mean" suggestions in error messages (errors.ts). */
  hideSuggestions: boolean;
  /** The developer limits shared with HTTP (auth/developer-limits.ts): connection attempts and subscriptions count. */
  limits: DeveloperLimits;
  /** LIVE_CONNECTIONS_PER_DEVELOPER_MAX: open connections one developer may hold on this gateway. */
  connectionsPerDeveloperMax: number;
  /** TRUST_PROXY: the upgrade's X-Forwarded-Proto/-Host are believed (the same-origin check uses them). */
  trustProxy: boolean;
}

type EventJson = ReturnType<typeof eventGraphqlJson>;
type Listener = (event: EventJson) => void;

/** One NATS subscription per game with listeners on this gateway; each notice is mapped once and fanned out. */
class DecisionFeed {
  private readonly games = new Map<string, { listeners: Set<Listener>; subscription: Promise<NoticeSubscription> }>();
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Games with listeners on this gateway (its map's entries). */
  get size(): number {
    return this.games.size;
  }

  /** Resolves once the game's subscription is live; the function returned stops this listener. */
  async listen(gameId: string, listener: Listener): Promise<() => void> {
    const key = gameId.toLowerCase();
    let game = this.games.get(key);
    if (!game) {
      const listeners = new Set<Listener>();
      const subscription = this.transport.subscribe(decisionsTopic, decisionsSubject(key), (notice) => {
        if (!notice.decision) return;
        const event = eventGraphqlJson(notice.decision);
        for (const deliver of [...listeners]) deliver(event);
      });
      game = { listeners, subscription };
      this.games.set(key, game);
      subscription.catch(() => {
        if (this.games.get(key) === game) this.games.delete(key);
      });
    }
    const current = game;
    current.listeners.add(listener);
    try {
      await current.subscription;
    } catch (error) {
      current.listeners.delete(listener);
      throw error;
    }
    return () => {
      if (!current.listeners.delete(listener) || current.listeners.size > 0) return;
      if (this.games.get(key) === current) this.games.delete(key);
      void current.subscription.then((s) => s.unsubscribe()).catch(() => undefined);
    };
  }
}

interface LiveSubscription {
  gameId: string;
  channel: LiveChannel<EventJson>;
}

/** One WebSocket connection: its admitted developer, its subscriptions, its expiry and re-check timers. */
export class LiveConnection {
  readonly principal: DeveloperPrincipal;
  private readonly hub: LiveHub;
  private readonly socket: WebSocket;
  private readonly authorization: string;
  private readonly origin: string;
  private readonly subscriptions = new Set<LiveSubscription>();
  /** Subscriptions taken but still being checked (before any await, so that a burst cannot pass the limit). */
  private pending = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Subscribe messages the socket may still send now (LIVE_LIMITS.subscribeMessagesBurst at most). */
  private subscribeTokens: number = LIVE_LIMITS.subscribeMessagesBurst;
  /** When subscribeTokens was last topped up (performance.now(), monotonic). */
  private subscribeTokensAt = performance.now();
  /** The gateway closed the socket (drop): nothing more is started for it. */
  private closing = false;
  private closed = false;

  constructor(
    hub: LiveHub,
    socket: WebSocket,
    admitted: { principal: DeveloperPrincipal; authorization: string; origin: string; expiresAtMs: number | undefined },
  ) {
    this.hub = hub;
    this.socket = socket;
    this.principal = admitted.principal;
    this.authorization = admitted.authorization;
    this.origin = admitted.origin;
    if (admitted.expiresAtMs !== undefined) {
      // setTimeout holds at most 2^31-1 ms (~24.8 days); a longer session is re-armed when that one fires.
      const arm = () => {
        const left = (admitted.expiresAtMs as number) - Date.now();
        if (left <= 0) return this.drop(LIVE_CLOSE.unauthorized, 'SESSION_EXPIRED', 'session_expired');
        this.timers.push(setTimeout(arm, Math.min(left, 2_147_483_647)));
      };
      arm();
    }
    const recheck = setInterval(() => void this.recheck(), LIVE_LIMITS.recheckMs);
    recheck.unref();
    this.timers.push(recheck);
  }

  get identityUserId(): string {
    return this.principal.identityUserId;
  }

  /**
   * A subscribe message arrived (graphql-ws's onSubscribe, before its document is parsed): takes one token of the
   * socket's bucket, and closes the socket (4029 TOO_MANY_SUBSCRIBE_MESSAGES) when none is left. The refusal
   * returned, if any, is answered instead of running the message: the socket closing, or the connection already
   * holding all its subscriptions. No NATS call, no parsing, for either.
   */
  subscribeMessage(): AppError | undefined {
    if (this.closed || this.closing) return closingError();
    const now = performance.now();
    const refill = ((now - this.subscribeTokensAt) * LIVE_LIMITS.subscribeMessagesPerSecond) / 1000;
    this.subscribeTokens = Math.min(LIVE_LIMITS.subscribeMessagesBurst, this.subscribeTokens + refill);
    this.subscribeTokensAt = now;
    if (this.subscribeTokens < 1) {
      this.drop(LIVE_CLOSE.tooManySubscribeMessages, 'TOO_MANY_SUBSCRIBE_MESSAGES', 'too_many_subscribe_messages');
      return closingError();
    }
    this.subscribeTokens -= 1;
    return this.refusal();
  }

  /** Why a new subscription cannot start now (the socket closing, every slot taken), if it cannot. */
  private refusal(): AppError | undefined {
    if (this.closed || this.closing) return closingError();
    if (this.subscriptions.size + this.pending >= LIVE_LIMITS.subscriptionsPerConnectionMax) {
      return new AppError(
        'INVALID_REQUEST',
        `A connection may hold at most ${LIVE_LIMITS.subscriptionsPerConnectionMax} subscriptions.`,
      );
    }
    return undefined;
  }

  /** The resolver of Subscription.decisions. */
  async decisions(gameIdArgument: string): Promise<AsyncIterableIterator<EventJson>> {
    if (!isUuid(gameIdArgument)) throw new AppError('INVALID_REQUEST', 'decisions.gameId must be a valid uuid.');
    // Checked again here (subscribeMessage saw the count of an earlier turn: a burst's messages are parsed before any
    // of them reaches this resolver); this check, in the same turn as taking the slot, is the one that holds.
    const refused = this.refusal();
    if (refused) throw refused;
    const gameId = gameIdArgument.toLowerCase();
    // A subscription is a request of its developer: counted, and in flight while it is checked (429 past the limits).
    const lease = this.hub.limits.acquire(this.identityUserId, DEVELOPER_COSTS.request);
    // The slot is taken now, before the first await, and given back once the subscription holds it or was refused.
    this.pending += 1;
    try {
      await this.checkRead(gameId);
    } catch (error) {
      this.pending -= 1;
      throw error;
    } finally {
      lease.release();
    }
    this.pending -= 1;
    // The socket may have been closed during the check: nothing to start for it.
    if (this.closed || this.closing) throw closingError();
    let stop: (() => void) | undefined;
    const subscription: LiveSubscription = {
      gameId,
      channel: new LiveChannel<EventJson>(LIVE_LIMITS.queueMax, () => {
        this.subscriptions.delete(subscription);
        if (stop) this.hub.subscriberGone();
        stop?.();
      }),
    };
    this.subscriptions.add(subscription);
    try {
      stop = await this.hub.feed.listen(gameId, (event) => this.deliver(subscription, event));
    } catch (error) {
      subscription.channel.fail(error);
      throw relabelUnavailable(error, 'DEVELOPER_ACCESS_UNAVAILABLE', 'Live decisions are unavailable; retry later.');
    }
    // The channel may have ended while the feed subscribed (socket closed): then stop now. Counted once live (the
    // gauge is what tests wait for before they post).
    if (!this.subscriptions.has(subscription)) stop();
    else this.hub.subscriberAdded();
    return subscription.channel;
  }

  private deliver(subscription: LiveSubscription, event: EventJson): void {
    if (this.closed || this.closing) return;
    if (this.socket.bufferedAmount > LIVE_LIMITS.socketBufferMaxBytes || !subscription.channel.push(event)) {
      this.drop(LIVE_CLOSE.slowConsumer, 'SLOW_CONSUMER', 'slow_consumer');
    }
  }

  /** The game read check of decisionStats: the ledger's membership check, 404 not_found for a game one cannot see. */
  private async checkRead(gameId: string): Promise<void> {
    await readDecisionStats(
      this.hub.transport,
      consolePrincipal(this.principal),
      { gameId, fromMs: 0n, toMs: 60_000n, bucketSeconds: 60 },
      this.hub.call(),
    );
  }

  /**
   * Admission and read check again. Ends what is no longer allowed: a refused admission closes the socket (4401 or
   * 4403, as at connect), a game no longer readable ends its subscription with that error. An outage (503) ends
   * nothing: the next re-check decides.
   */
  async recheck(): Promise<void> {
    if (this.closed || this.subscriptions.size === 0) return;
    try {
      await this.hub.admit(this.authorization, this.origin);
    } catch (error) {
      if (error instanceof AppError && (error.status === 401 || error.status === 403)) {
        this.drop(closeCodeOf(error), error.code, 'access_lost');
      } else this.hub.logger.warn({ err: error }, 'live decisions: admission re-check failed');
      return;
    }
    const byGame = new Map<string, LiveSubscription[]>();
    for (const subscription of this.subscriptions) {
      byGame.set(subscription.gameId, [...(byGame.get(subscription.gameId) ?? []), subscription]);
    }
    for (const [gameId, subscriptions] of byGame) {
      try {
        await this.checkRead(gameId);
      } catch (error) {
        if (error instanceof AppError && (error.status === 404 || error.status === 403)) {
          this.hub.dropped('access_lost', subscriptions.length);
          for (const subscription of subscriptions) subscription.channel.fail(error);
        } else this.hub.logger.warn({ err: error, gameId }, 'live decisions: read re-check failed');
      }
    }
  }

  private drop(
    code: number,
    reason: string,
    metric: 'slow_consumer' | 'session_expired' | 'access_lost' | 'too_many_subscribe_messages',
  ): void {
    if (this.closed || this.closing) return;
    this.closing = true;
    this.hub.dropped(metric, Math.max(1, this.subscriptions.size));
    this.hub.logger.info({ code, reason, identityUserId: this.identityUserId }, 'live decisions connection dropped');
    this.socket.close(code, reason);
    // ws goes on reading until the client's close frame, to find it; what the client sent before it no longer
    // matters, so graphql-ws (the only listener) stops parsing it: the rest of a burst costs only its framing.
    this.socket.removeAllListeners('message');
  }

  /** The socket closed (graphql-ws already returned every subscription's iterator). */
  ended(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const subscription of [...this.subscriptions]) void subscription.channel.return();
  }
}

/** A subscribe message on a socket the gateway is closing (never sent: the socket no longer takes messages). */
function closingError(): AppError {
  return new AppError('INVALID_REQUEST', 'The connection is closing.');
}

function closeCodeOf(error: AppError): number {
  if (error.status === 401) return LIVE_CLOSE.unauthorized;
  if (error.status === 429) return LIVE_CLOSE.tooManyRequests;
  if (error.status === 403) return LIVE_CLOSE.forbidden;
  if (error.status === 503) return LIVE_CLOSE.tryAgainLater;
  return 4400;
}

/** Everything the connections share: the feed, the transport, the registry by developer, the metrics. */
class LiveHub {
  readonly feed: DecisionFeed;
  readonly transport: Transport;
  readonly logger: Logger;
  readonly limits: DeveloperLimits;
  readonly byDeveloper = new Map<string, Set<LiveConnection>>();
  private readonly subscribers: Gauge | undefined;
  private readonly drops: Counter<'reason'> | undefined;
  private count = 0;

  constructor(transport: Transport, logger: Logger, metrics: Metrics | undefined, limits: DeveloperLimits) {
    this.transport = transport;
    this.logger = logger;
    this.limits = limits;
    this.feed = new DecisionFeed(transport);
    const registers = metrics ? [metrics.registry] : [];
    metrics?.collections.track('gateway', {
      live_developers: () => this.byDeveloper.size,
      live_games: () => this.feed.size,
    });
    this.subscribers = metrics
      ? new Gauge({
          name: 'graphql_live_subscriptions',
          help: 'Open GraphQL decisions subscriptions on this gateway',
          registers,
        })
      : undefined;
    this.drops = metrics
      ? new Counter({
          name: 'graphql_live_subscription_drops_total',
          help:
            'Decisions subscriptions ended by the gateway, by reason (slow_consumer, session_expired, access_lost, ' +
            'too_many_connections, too_many_subscribe_messages)',
          labelNames: ['reason'],
          registers,
        })
      : undefined;
  }

  call(): CallContext {
    return { requestId: randomUUID() };
  }

  /** The developer admission of an HTTP request, for a connection's token and upgrade Origin. */
  async admit(authorization: string, origin: string): Promise<DeveloperPrincipal> {
    const reply = await this.transport
      .call(identityOps.admitDeveloper, { authorization, origin }, this.call())
      .catch((error: unknown) => {
        throw relabelUnavailable(error, 'AUTH_UNAVAILABLE', 'The identity service is temporarily unavailable.');
      });
    if (!reply.principal) throw new AppError('UNAUTHORIZED', 'A valid developer session token is required.');
    return reply.principal;
  }

  subscriberAdded(): void {
    this.count += 1;
    this.subscribers?.set(this.count);
  }

  subscriberGone(): void {
    this.count -= 1;
    this.subscribers?.set(this.count);
  }

  dropped(reason: string, subscriptions: number): void {
    this.drops?.inc({ reason }, subscriptions);
  }

  /** A member was removed: re-check that developer's connections now. */
  membershipChanged(identityUserId: string): void {
    for (const connection of this.byDeveloper.get(identityUserId) ?? []) void connection.recheck();
  }
}

/**
 * The Origin an upgrade request is admitted with: empty when it is the gateway's own origin (as over HTTP). The
 * forwarded scheme and host count only behind a trusted proxy (TRUST_PROXY), as Koa's ctx.protocol and ctx.host.
 */
function upgradeOrigin(request: IncomingMessage, trustProxy: boolean): string {
  const origin = request.headers.origin ?? '';
  const first = (name: string) =>
    trustProxy
      ? String(request.headers[name] ?? '')
          .split(',')[0]
          ?.trim()
      : '';
  const protocol =
    first('x-forwarded-proto') || ('encrypted' in request.socket && request.socket.encrypted ? 'https' : 'http');
  const host = first('x-forwarded-host') || String(request.headers.host ?? '');
  return sameOriginAs(origin, `${protocol}://${host}`) ? '' : origin;
}

/** A GraphQL error as the HTTP path formats it: REST's code and status in `extensions`. */
function formatLiveError(
  error: GraphQLError,
  logger: Logger,
  development: boolean,
  hideSuggestions: boolean,
): GraphQLFormattedError {
  const where = {
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
  };
  const appError = findAppError(error);
  if (appError) {
    return {
      message: appError.message,
      ...where,
      extensions: { code: appError.code, status: appError.status, ...appError.extra },
    };
  }
  // No path: the request itself (variables that do not coerce, a document that does not validate).
  if (!error.path) {
    const message = hideSuggestions ? withoutSuggestions(error.message) : error.message;
    return { message, ...where, extensions: { code: 'INVALID_REQUEST', status: 400 } };
  }
  logger.error({ err: error }, 'GraphQL subscription failed');
  return {
    message: development ? error.message : INTERNAL_MESSAGE,
    ...where,
    extensions: { code: 'internal_error', status: 500 },
  };
}

export interface LiveDecisions {
  /** Accepts WebSocket upgrades at the GraphQL path of this HTTP server. */
  attach(server: Server): void;
  /** Closes every socket (1001) and the WebSocket server; idempotent. */
  dispose(): Promise<void>;
}

type Extra = { socket: WebSocket; request: IncomingMessage };

export async function createLiveDecisions(options: LiveDecisionsOptions): Promise<LiveDecisions> {
  const { transport, platform, logger } = options;
  const hub = new LiveHub(transport, logger, options.metrics, options.limits);
  const connections = new WeakMap<WebSocket, LiveConnection>();
  const membership = await transport.subscribe(membershipTopic, MEMBERSHIP_SUBJECT, (notice) =>
    hub.membershipChanged(notice.identityUserId),
  );
  const format = (errors: readonly GraphQLError[]) =>
    errors.map((e) => formatLiveError(e, logger, options.development, options.hideSuggestions));
  const rules = [...specifiedRules, ...options.validationRules];
  let server: WebSocketServer | undefined;
  let cleanup: ReturnType<typeof serveOverWs> | undefined;
  let disposing: Promise<void> | undefined;

  const serverOptions: Parameters<typeof makeServer<Record<string, unknown>, Extra>>[0] = {
    schema: options.schema,
    context: (ctx) => ({ live: connections.get(ctx.extra.socket) }),
    async onConnect(ctx) {
      const { socket, request } = ctx.extra;
      const authorization = ctx.connectionParams?.Authorization;
      // The connection attempt is a request of its developer (auth/developer-limits.ts), in flight while admitted.
      let lease: DeveloperLease | undefined;
      try {
        await platform.assertEnabled(hub.call()).catch((error: unknown) => {
          if (error instanceof AppError && error.status === 503 && error.code !== 'PLATFORM_DISABLED') {
            throw new AppError('AUTH_UNAVAILABLE', 'A dependency is temporarily unavailable; retry later.');
          }
          throw error;
        });
        const origin = upgradeOrigin(request, options.trustProxy);
        const token = typeof authorization === 'string' ? authorization : '';
        // A token admitted before pays its own bucket, and is refused there, before the identity service is asked
        // (reconnects after a close cost no admission once it is empty); the developer's bucket is charged only
        // after admission, so an expired or refused token never spends it (auth/developer-limits.ts).
        const known = hub.limits.beforeAdmission(token, DEVELOPER_COSTS.connection);
        const principal = await hub.admit(token, origin).catch((error: unknown) => {
          if (refusesCredential(findAppError(error))) hub.limits.forget(token);
          throw error;
        });
        const remembered =
          known?.subject === principal.identityUserId
            ? known
            : hub.limits.remember(token, principal.identityUserId, DEVELOPER_COSTS.connection);
        lease = hub.limits.acquire(principal.identityUserId, DEVELOPER_COSTS.connection, remembered);
        const exp = decodeJwt(token.replace(/^Bearer\s+/i, '')).exp;
        const connection = new LiveConnection(hub, socket, {
          principal,
          authorization: token,
          origin,
          expiresAtMs: exp === undefined ? undefined : exp * 1000,
        });
        // Counted and added in the same turn as this check (no await between): a burst of connections cannot pass it.
        const mine = hub.byDeveloper.get(connection.identityUserId) ?? new Set();
        if (mine.size >= options.connectionsPerDeveloperMax) {
          connection.ended();
          hub.dropped('too_many_connections', 1);
          socket.close(LIVE_CLOSE.tooManyConnections, 'TOO_MANY_CONNECTIONS');
          return false;
        }
        connections.set(socket, connection);
        mine.add(connection);
        hub.byDeveloper.set(connection.identityUserId, mine);
        return true;
      } catch (error) {
        const appError = findAppError(error);
        if (!appError) logger.error({ err: error }, 'live decisions: connection refused by a failure');
        // A developer that keeps reconnecting past its refusals has them closed later (developer-limits.ts).
        if (appError instanceof TooManyRequestsError) await appError.held();
        socket.close(appError ? closeCodeOf(appError) : 4500, appError?.code ?? 'internal_error');
        return false;
      } finally {
        lease?.release();
      }
    },
    onClose(ctx) {
      const connection = connections.get(ctx.extra.socket);
      if (!connection) return;
      connection.ended();
      const mine = hub.byDeveloper.get(connection.identityUserId);
      mine?.delete(connection);
      if (mine?.size === 0) hub.byDeveloper.delete(connection.identityUserId);
    },
    // Errors returned here go out in an `error` message, formatted by onError.
    onSubscribe(ctx, _id, payload) {
      // The socket's bounds come first, before the document is parsed (LiveConnection.subscribeMessage).
      const refused = connections.get(ctx.extra.socket)?.subscribeMessage();
      if (refused) return [new GraphQLError(refused.message, { originalError: refused })];
      let document: DocumentNode;
      try {
        document = parse(payload.query, { maxTokens: options.maxTokens });
      } catch (error) {
        return [error instanceof GraphQLError ? error : new GraphQLError(String(error))];
      }
      const errors = validate(options.schema, document, rules);
      if (errors.length > 0) return errors;
      if (getOperationAST(document, payload.operationName)?.operation !== 'subscription') {
        return [
          new GraphQLError('Only subscriptions run over WebSocket; send queries and mutations to POST /graphql.'),
        ];
      }
      return {
        schema: options.schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
      };
    },
    // The subscription is live: its resolver returned once the game's NATS subscription was (DecisionFeed.listen). A
    // ping says so, with the subscription's id (graphql-transport-ws lets either side ping at any time; a client
    // answers pong): every decision committed from now on reaches the socket, so a client that reads the game's
    // decisions after this ping has missed none (the web console does: console/src/live.ts).
    onOperation(ctx, id, _payload, _args, result) {
      if (!(Symbol.asyncIterator in result)) return;
      const { socket } = ctx.extra;
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: 'ping', payload: { subscribed: id } }));
    },
    onNext(_ctx, _id, _payload, _args, result) {
      if (!result.errors?.length) return undefined;
      return { ...result, errors: format(result.errors) } as never;
    },
    onError(_ctx, _id, _payload, errors) {
      return format(errors) as never;
    },
  };

  return {
    attach(httpServer: Server) {
      server = new WebSocketServer({ server: httpServer, path: options.path, maxPayload: LIVE_LIMITS.messageMaxBytes });
      cleanup = serveOverWs(serverOptions, server);
    },
    dispose() {
      disposing ??= (async () => {
        membership.unsubscribe();
        await cleanup?.dispose();
      })();
      return disposing;
    },
  };
}
