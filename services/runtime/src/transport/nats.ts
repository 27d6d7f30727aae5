// The NATS transport: request-reply with protobuf bodies, one queue group per state owner, served through the
// NATS service framework (ADR-32: $SRV.PING/INFO/STATS discovery, per-endpoint stats, error headers).

import { randomUUID } from 'node:crypto';
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { type Service, ServiceError, Svcm } from '@nats-io/services';
import {
  connect,
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  headers as natsHeaders,
} from '@nats-io/transport-node';
import { DependencyUnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import {
  decodeError,
  decodeReply,
  encodeNotice,
  encodeRequest,
  InFlight,
  noticeReceiver,
  runEndpoint,
  ServedServices,
} from './codec.ts';
import {
  BUDGET_HEADER,
  DEFAULT_TRY_TIMEOUT_PERCENT,
  deadlineFromBudget,
  isEventWrite,
  isRepeatable,
  requestBudget,
  timeoutFor,
} from './deadline.ts';
import { NATS_NO_SECURITY, type NatsSecurity, natsSecurityOptions } from './nats-security.ts';
import {
  type CallContext,
  type CallOptions,
  type EncodedNotice,
  headerNames,
  type NoticeSubscription,
  type Operation,
  type ServedService,
  type ServiceDefinition,
  serviceNames,
  type Topic,
  type Transport,
} from './operation.ts';
import { traceHandler, traceRequest } from './trace-context.ts';

export interface NatsTransportOptions {
  url: string;
  /** Shown in the server's connection list, e.g. `ledger` or `all-in-one`. */
  connectionName: string;
  /**
   * The subject prefix of this connection's reply inbox; default `_INBOX.<connectionName>` (inboxPrefixOf). A
   * program's NATS user may then subscribe to its own program's replies only (`_INBOX.<program>.>` in
   * charts/sandbox-rewards/nats-authorization.conf), not to every program's `_INBOX.>`.
   */
  inboxPrefix?: string;
  requestTimeoutMs: number;
  /**
   * NATS_EVENT_REQUEST_TIMEOUT_MS: the timeout of the ledger's event operations (RecordEvent, RecordEvents), shorter
   * than requestTimeoutMs. Such a request whose message was lost in the cluster (the owner's server died with it)
   * gets its honest "outcome unknown" 503 after this, not after the general timeout; a retry with the same eventId
   * answers the stored decision. Defaults to requestTimeoutMs.
   */
  eventRequestTimeoutMs?: number;
  /**
   * NATS_UNDELIVERED_WAIT_MS: how long a request that was never delivered (no responders, or this connection down)
   * is tried again, with back-off, before its 503: a state owner restarting or a client moving to another server of
   * the cluster is back within it. 0: fail at once. Default 1000.
   */
  undeliveredWaitMs?: number;
  logger: Logger;
  metrics: Metrics;
  /**
   * NATS_TRY_TIMEOUT_PERCENT: a request of an operation safe to repeat (deadline.ts isRepeatable) that has no answer
   * after this share of its timeout is sent again, the first copy still awaited: whichever answers first is the
   * answer. A state owner cut from NATS keeps its queue group's share until nats-server notices (2 min x 2 on the
   * server's defaults); the copy reaches another member. At most 6 copies more; 0: never. Default 15.
   */
  tryTimeoutPercent?: number;
  /** Keep trying the first connection (every 0.5 s) instead of failing: the program stays up, not ready. */
  waitForFirstConnection?: boolean;
  /** Credentials and TLS (NATS_USER, NATS_TOKEN, NATS_NKEY_SEED_FILE, NATS_CREDS_FILE, NATS_TLS_*); none if absent. */
  security?: NatsSecurity;
}

/**
 * The client's pings: one every NATS_PING_INTERVAL_MS; with NATS_MAX_PINGS_OUT of them unanswered at the next, the
 * connection is declared stale, dropped and reconnected. A dead connection (a cut path, a frozen server) is noticed
 * within (NATS_MAX_PINGS_OUT + 1) x NATS_PING_INTERVAL_MS = 1.5 s, not the library's 2 min x 2: requests fail at once
 * from then on, /readyz says not ready, and a state owner is out of its queue groups until it reconnects
 * (queue-groups.ts). The server notices a dead client by its own ping settings (docs/deploy.md, "NATS").
 */
export const NATS_PING_INTERVAL_MS = 500;
export const NATS_MAX_PINGS_OUT = 2;
/**
 * How long one connection attempt may take (the library's default is 20 s). An attempt made while the path to the
 * server is cut waits for TCP to send its SYN again, at 1, 3, 7, 15 s after the first: after the heal, the client
 * would wait for the next of those. Given up after 2 s, the attempt is made anew (every NATS reconnect wait, 0.5 s,
 * at most), so a SYN goes out about every second and the client is back within about a second of the heal.
 */
export const NATS_CONNECT_TIMEOUT_MS = 2000;

/**
 * A connection's reply inbox prefix: its option, or `_INBOX.<connectionName>` (the program's name: the NATS user the
 * recommended authorization gives that program may subscribe to `_INBOX.<program>.>` only).
 */
function inboxPrefixOf(options: Pick<NatsTransportOptions, 'connectionName' | 'inboxPrefix'>): string {
  return options.inboxPrefix ?? `_INBOX.${options.connectionName}`;
}

/**
 * Why a message on a served subject is not a request this program answers, or undefined when it is one. A request
 * names a reply subject in an inbox (`_INBOX.<program>.<random>...` from a program, `_INBOX.<random>` from a NATS
 * client such as the CLI) and is not itself a reply (no service error header). Anything else is dropped unanswered:
 * above all a state owner's reply steered onto another operation's subject (a requester that names
 * `rewards.v1.identity.SetPlatformState` as its reply subject), which would otherwise be read as that operation's
 * request, and a state owner never replies outside an inbox, so a requester cannot make it publish a command.
 */
export function requestRefusal(msg: Pick<Msg, 'reply' | 'headers'>): 'reply_not_inbox' | 'not_a_request' | undefined {
  const reply = msg.reply ?? '';
  if (!reply.startsWith('_INBOX.') || reply.length <= '_INBOX.'.length || /[*>\s]/.test(reply)) {
    return 'reply_not_inbox';
  }
  if (msg.headers?.has(SERVICE_ERROR_HEADER)) return 'not_a_request';
  return undefined;
}

/** The NATS service framework's error header (ADR-32), set on error replies only. */
const SERVICE_ERROR_HEADER = 'Nats-Service-Error';

/** The most copies of one request sent after the first. */
const MAX_EXTRA_COPIES = 6;

/**
 * How many copies may be sent (gRPC's retry throttling): a token per copy from a bucket of COPY_TOKENS_MAX, refilled
 * by COPY_TOKENS_PER_ANSWER for each request answered; copies stop while the bucket is at most half full. So when
 * every state owner is slow (an overload) copies stop after a burst instead of doubling the load, while one member of
 * a queue group that swallows requests (half of them unanswered) keeps being worked around.
 */
class CopyBudget {
  private tokens = COPY_TOKENS_MAX;

  take(): boolean {
    if (this.tokens <= COPY_TOKENS_MAX / 2) return false;
    this.tokens -= 1;
    return true;
  }

  answered(): void {
    this.tokens = Math.min(COPY_TOKENS_MAX, this.tokens + COPY_TOKENS_PER_ANSWER);
  }
}
const COPY_TOKENS_MAX = 100;
const COPY_TOKENS_PER_ANSWER = 1;

/** How long a subscription's flush waits for a dropped connection to come back (flushLive). */
const FLUSH_RECONNECT_WAIT_MS = 30_000;

/** Back-off between tries of an undelivered request: 25, 50, 100, 200, 400 ms, then 400 ms. */
function undeliveredBackoffMs(attempt: number): number {
  return Math.min(400, 25 * 2 ** attempt);
}

/** Replies that answered while more than one copy of their request was out (CallOptions.copied). */
const copiedReplies = new WeakSet<Msg>();

export class NatsTransport implements Transport {
  readonly kind = 'nats' as const;
  private readonly nc: NatsConnection;
  private readonly options: NatsTransportOptions;
  private readonly served = new ServedServices();
  private connected = true;
  private readonly requestTurn = new TurnGate();
  /** The replies of every served endpoint and the notices, written together at the end of a loop turn. */
  private readonly turnWrites = new TurnWrites();
  /** The requests in flight and their replies: a lost connection loses them all, at once (see watchStatus). */
  private readonly inbox: ReplyInbox;
  /** Requests waiting for the connection to come back (undeliveredWaitMs). */
  private readonly reconnectWaiters = new Set<() => void>();
  /** The copies of repeatable requests this connection may still send (sendWithCopies). */
  private readonly copies = new CopyBudget();

  private constructor(nc: NatsConnection, options: NatsTransportOptions, inboxPrefix: string) {
    this.nc = nc;
    this.options = options;
    this.inbox = new ReplyInbox(nc, inboxPrefix);
    void this.watchStatus();
  }

  static async connect(options: NatsTransportOptions): Promise<NatsTransport> {
    const inboxPrefix = inboxPrefixOf(options);
    const nc = await connect({
      servers: options.url.split(',').map((s) => s.trim()),
      name: options.connectionName,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: NATS_CONNECT_TIMEOUT_MS,
      waitOnFirstConnect: options.waitForFirstConnection ?? false,
      pingInterval: NATS_PING_INTERVAL_MS,
      maxPingOut: NATS_MAX_PINGS_OUT,
      // Without this, every request builds two Error objects up front (a RequestError and a TimeoutError, each
      // capturing a stack trace) in case it fails: a measurable share of the ingest edge's CPU under load
      // (docs/decisions.md, "The NATS client runs without async traces"). Failures still reject with the same error classes, only without the caller's async stack. (This
      // transport's own requests go through ReplyInbox, below, which makes no Error unless a request fails.)
      noAsyncTraces: true,
      // nats.js's own requests (none of ours: ReplyInbox below) would use it too.
      inboxPrefix,
      ...natsSecurityOptions(options.security ?? NATS_NO_SECURITY),
    });
    options.logger.info({ server: nc.getServer() }, 'connected to NATS');
    return new NatsTransport(nc, options, inboxPrefix);
  }

  /**
   * While disconnected, requests fail at once (not sent: 503 before any timeout) and /readyz says not ready. When the
   * connection drops, the requests in flight are answered 503 at once: their replies cannot come back on a new
   * connection (the reply subscription of the old one is gone with it), so waiting for their timeout would only make
   * every caller wait, including any that shares such a request (the platform switch).
   */
  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect' || status.type === 'staleConnection') {
        this.connected = false;
        this.inbox.failAll('lost', 'NATS connection lost');
      }
      if (status.type === 'reconnect') {
        this.connected = true;
        const waiting = [...this.reconnectWaiters];
        this.reconnectWaiters.clear();
        for (const wake of waiting) wake();
      }
      if (status.type === 'disconnect' || status.type === 'reconnect') {
        this.options.logger.warn({ status: status.type }, 'NATS connection status changed');
      }
    }
  }

  /** Resolves when the connection is back, or at `deadline` (performance.now() time), whichever comes first. */
  private waitForReconnect(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.reconnectWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, deadline - performance.now()));
      this.reconnectWaiters.add(wake);
    });
  }

  /**
   * The request's reply, or its failure (no responders, timeout, or the connection that carries it lost). Each try
   * carries its budget (transport/deadline.ts): the timeout less the reply margin, or less when the caller's own
   * deadline (`ctx.deadline`) ends sooner.
   */
  private send(subject: string, data: Uint8Array, headers: MsgHdrs, callerDeadline: number | undefined): Promise<Msg> {
    const timeout = timeoutFor(subject, this.options);
    const tryTimeout = Math.floor((timeout * (this.options.tryTimeoutPercent ?? DEFAULT_TRY_TIMEOUT_PERCENT)) / 100);
    if (tryTimeout <= 0 || tryTimeout >= timeout || !isRepeatable(subject)) {
      headers.set(BUDGET_HEADER, String(requestBudget(timeout, callerDeadline)));
      return this.inbox.request(subject, data, headers, timeout);
    }
    return this.sendWithCopies(subject, data, headers, callerDeadline, timeout, tryTimeout);
  }

  /**
   * A repeatable request sent again each `tryTimeout` without an answer (at most MAX_EXTRA_COPIES more, while the
   * copy budget allows), every copy awaited until the request's own timeout. Each copy carries the budget left of the
   * whole request (its work is as useful when it ends after the copy's try: another copy finds it done).
   * - The first reply that is not a service error is the answer; later ones are dropped.
   * - A service error reply is the answer when it is the only copy; once copies were sent it is the answer only if
   *   every other copy also answered an error or was never delivered, and never for an event write (each copy's
   *   error speaks for that copy only). Otherwise another copy may have done the work, so its "nothing was stored"
   *   would not be true: the request fails as timed out (outcome unknown). A reply that answers while copies are out
   *   marks the call's options `copied` (its per-event refusals are then of unknown outcome to the edge).
   * - The first copy undelivered (no responders) fails at once, as a single request would (the caller's loop sends
   *   it again); once copies were sent, the request fails as undelivered only if none was delivered.
   */
  private sendWithCopies(
    subject: string,
    data: Uint8Array,
    headers: MsgHdrs,
    callerDeadline: number | undefined,
    timeout: number,
    tryTimeout: number,
  ): Promise<Msg> {
    const endsAt = performance.now() + timeout;
    return new Promise<Msg>((resolve, reject) => {
      let sent = 0;
      let settledCopies = 0;
      let undelivered = 0;
      let errorReplies = 0;
      let errorReply: Msg | undefined;
      let lastFailure: unknown;
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: () => void) => {
        done = true;
        clearTimeout(timer);
        timer = undefined;
        outcome();
      };
      /** Once every copy sent has settled and no other will be sent: the verdict described above. */
      const concludeIfSettled = () => {
        if (done || settledCopies < sent || timer !== undefined) return;
        // An event write's copies each answered for itself: one's "nothing was stored" does not cover another that
        // was delivered, so with several sent the outcome is unknown (a timeout), whatever the errors say.
        const errorAnswers = errorReply !== undefined && (sent === 1 || !isEventWrite(subject));
        if (errorAnswers && errorReplies + undelivered === sent) finish(() => resolve(errorReply as Msg));
        else if (undelivered === sent) finish(() => reject(lastFailure));
        else finish(() => reject(new RequestFailure('timeout', `request to ${subject} timed out (${sent} copies)`)));
      };
      const sendCopy = () => {
        const left = Math.max(1, Math.floor(endsAt - performance.now()));
        headers.set(BUDGET_HEADER, String(requestBudget(left, callerDeadline)));
        sent++;
        this.inbox.request(subject, data, headers, left).then(
          (reply) => {
            settledCopies++;
            if (done) return;
            if (!ServiceError.isServiceError(reply)) {
              this.copies.answered();
              if (sent > 1) copiedReplies.add(reply);
              finish(() => resolve(reply));
            } else if (sent === 1) {
              finish(() => resolve(reply));
            } else {
              errorReplies++;
              errorReply ??= reply;
              concludeIfSettled();
            }
          },
          (error: unknown) => {
            settledCopies++;
            lastFailure = error;
            if (done) return;
            // The connection lost or closed: every copy fails with it, at once (outcome unknown, as for one request).
            if (error instanceof RequestFailure && (error.kind === 'lost' || error.kind === 'closed')) {
              finish(() => reject(error));
              return;
            }
            if (error instanceof RequestFailure && error.kind === 'no_responders') {
              undelivered++;
              if (sent === 1) {
                finish(() => reject(error));
                return;
              }
            }
            concludeIfSettled();
          },
        );
        scheduleNext();
      };
      const scheduleNext = () => {
        timer = undefined;
        if (sent > MAX_EXTRA_COPIES || endsAt - performance.now() <= tryTimeout) return;
        timer = setTimeout(() => {
          timer = undefined;
          if (done) return;
          if (!this.copies.take()) {
            this.options.metrics.transportRequestCopies.inc({ subject, outcome: 'not_sent' });
            concludeIfSettled();
            return;
          }
          this.options.metrics.transportRequestCopies.inc({ subject, outcome: 'sent' });
          sendCopy();
        }, tryTimeout);
        timer.unref?.();
      };
      sendCopy();
    });
  }

  call<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
    options?: CallOptions,
  ): Promise<MessageShape<O>> {
    return traceRequest(operation, 'nats', ctx, (carried) => this.request(operation, request, carried, options));
  }

  private async request<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
    options: CallOptions | undefined,
  ): Promise<MessageShape<O>> {
    const gathered = options?.gathered === true;
    const started = performance.now();
    let outcome = 'ok';
    try {
      const headers = natsHeaders();
      headers.set(headerNames.requestId, ctx.requestId);
      if (ctx.traceparent) headers.set(headerNames.traceparent, ctx.traceparent);
      if (ctx.tracestate) headers.set(headerNames.tracestate, ctx.tracestate);
      let reply: Msg;
      // Requests started in one event-loop turn leave together at its end: the NATS client writes what it buffered
      // in one socket write per microtask checkpoint, so this makes one write for all the HTTP requests an edge read
      // in one poll phase instead of one write each (fewer system calls in the edge and fewer wake-ups of
      // nats-server under load; see docs/benchmarks.md). A caller that gathered its turn's requests itself (the edge's
      // batcher, at the end of the turn already) does not wait another turn: its requests leave together anyway.
      if (!gathered) await this.requestTurn.next();
      const data = encodeRequest(operation, request);
      // A request that was never delivered (this connection down, or no responders: no state owner subscribed at
      // that moment) is safe to send again: tried with back-off until undeliveredWaitMs has passed, then 503.
      const deadline = performance.now() + (this.options.undeliveredWaitMs ?? 1000);
      for (let attempt = 0; ; attempt++) {
        if (this.nc.isClosed()) {
          outcome = 'unavailable';
          throw new DependencyUnavailableError(operation.service, 'NATS connection closed', 'not_delivered');
        }
        if (!this.connected) {
          if (performance.now() < deadline) {
            await this.waitForReconnect(deadline);
            continue;
          }
          outcome = 'unavailable';
          throw new DependencyUnavailableError(
            operation.service,
            `NATS is disconnected: ${operation.subject} not sent`,
            'not_delivered',
          );
        }
        try {
          reply = await this.send(operation.subject, data, headers, ctx.deadline);
          break;
        } catch (error) {
          const undelivered = error instanceof RequestFailure && error.kind === 'no_responders';
          if (undelivered && options?.failNoResponders) options.noResponders = true;
          const pause = undeliveredBackoffMs(attempt);
          if (undelivered && !options?.failNoResponders && performance.now() + pause < deadline) {
            this.options.metrics.transportUndeliveredRetries.inc({ subject: operation.subject });
            await new Promise((resolve) => setTimeout(resolve, pause));
            continue;
          }
          outcome = 'unavailable';
          throw new DependencyUnavailableError(
            operation.service,
            describeRequestFailure(error, operation.subject),
            undelivered ? 'not_delivered' : 'unknown',
          );
        }
      }
      if (ServiceError.isServiceError(reply)) {
        outcome = 'error';
        throw decodeError(reply.data);
      }
      if (options && copiedReplies.has(reply)) options.copied = true;
      return decodeReply(operation, reply.data);
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.options.metrics.transportRequests.inc({ subject: operation.subject, outcome });
      this.options.metrics.transportDuration.observe({ subject: operation.subject, outcome }, seconds);
    }
  }

  async serve(definition: ServiceDefinition): Promise<ServedService> {
    const name = serviceNames[definition.service];
    const service: Service = await new Svcm(this.nc).add({
      name,
      version: definition.version,
      description: definition.description,
      queue: name,
    });
    const inFlight = new InFlight();
    const logger = this.options.logger;
    for (const binding of definition.endpoints) {
      service.addEndpoint(binding.operation.name, {
        subject: binding.operation.subject,
        handler: (err, msg) => {
          if (err) {
            logger.error({ err, subject: binding.operation.subject }, 'NATS endpoint stopped with an error');
            return;
          }
          const refusal = requestRefusal(msg);
          if (refusal) {
            logger.warn(
              { subject: binding.operation.subject, reply: msg.reply ?? null, reason: refusal },
              'NATS message refused: not a request',
            );
            this.options.metrics.transportRefusedRequests.inc({ subject: binding.operation.subject, reason: refusal });
            return;
          }
          const ctx: CallContext = {
            requestId: msg.headers?.get(headerNames.requestId) || randomUUID(),
            traceparent: msg.headers?.get(headerNames.traceparent) || undefined,
            tracestate: msg.headers?.get(headerNames.tracestate) || undefined,
            deadline: deadlineFromBudget(msg.headers?.get(BUDGET_HEADER)),
          };
          void inFlight.track(
            traceHandler(binding.operation, 'nats', ctx, () =>
              runEndpoint(binding, msg.data, ctx, logger, this.options.metrics),
            ).then((outcome) =>
              this.turnWrites.send(() => {
                if (outcome.ok) msg.respond(outcome.data);
                else msg.respondError(outcome.status, outcome.code, outcome.data);
              }),
            ),
          );
        },
      });
    }
    // The subscriptions are live on the server once a flush returns: only then is the service reachable.
    await this.flushLive();
    logger.info({ service: name, endpoints: definition.endpoints.length }, 'serving on NATS');
    return this.served.add(inFlight, () => service.stop().then(() => undefined));
  }

  /**
   * A core NATS publish: encoded at once, handed to the client with the replies of the same loop turn (TurnWrites),
   * so that a decision's notice and its reply go out in one socket write, and the caller never waits for the network.
   * While disconnected the client buffers it for the reconnection (bounded by the client's reconnect buffer); on a
   * closed connection or a message that does not encode it is logged and counted as failed.
   */
  publish<M extends DescMessage>(
    topic: Topic<M>,
    subject: string,
    message: MessageInitShape<M> | EncodedNotice<M>,
  ): void {
    const data = encodeNotice(topic, message, this.options.logger, this.options.metrics);
    if (!data) return;
    const publishNow = () => {
      try {
        this.nc.publish(subject, data);
        this.options.metrics.transportPublishes.inc({ topic: topic.name, outcome: 'ok' });
      } catch (error) {
        this.options.logger.warn({ err: error, subject }, 'notice not published');
        this.options.metrics.transportPublishes.inc({ topic: topic.name, outcome: 'failed' });
      }
    };
    if (this.nc.isClosed()) publishNow();
    else void this.turnWrites.send(publishNow);
  }

  /** A plain subscription (no queue group): every subscribing process gets every notice once. */
  async subscribe<M extends DescMessage>(
    topic: Topic<M>,
    subject: string,
    handler: (message: MessageShape<M>) => void,
  ): Promise<NoticeSubscription> {
    const receive = noticeReceiver(topic, subject, handler, this.options.logger);
    const subscription = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) {
          this.options.logger.warn({ err, subject }, 'notice subscription stopped with an error');
          return;
        }
        receive(msg.data);
      },
    });
    // Live on the server once a flush returns: a notice published after this resolves reaches the subscription.
    await this.flushLive();
    return {
      unsubscribe: () => {
        if (!subscription.isClosed()) subscription.unsubscribe();
      },
    };
  }

  /**
   * A flush that outlives a dropped connection: the client sends every subscription again when it reconnects, so a
   * flush that failed with the connection (a start whose event loop was busy loading code for longer than the
   * server's pings allow, on a loaded machine) is made again once it is back, for up to FLUSH_RECONNECT_WAIT_MS.
   */
  private async flushLive(): Promise<void> {
    const deadline = performance.now() + FLUSH_RECONNECT_WAIT_MS;
    for (;;) {
      try {
        await this.nc.flush();
        return;
      } catch (error) {
        if (this.nc.isClosed() || performance.now() >= deadline) throw error;
        this.options.logger.warn({ err: error }, 'NATS flush failed with the connection: waiting for it to come back');
        if (this.connected) await new Promise((resolve) => setTimeout(resolve, 100));
        else await this.waitForReconnect(deadline);
      }
    }
  }

  isReady(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  async close(): Promise<void> {
    await this.served.stopAll();
    // Notices published just before: handed to the client now, so that the drain writes them.
    this.turnWrites.flush();
    if (!this.nc.isClosed()) await this.nc.drain();
    this.inbox.failAll('closed', 'NATS connection closed');
  }
}

/** Why a request got no reply. Made only when one fails: a reply costs no Error (and no stack trace). */
class RequestFailure extends Error {
  readonly kind: 'no_responders' | 'timeout' | 'lost' | 'closed';

  constructor(kind: RequestFailure['kind'], message: string) {
    super(message);
    this.name = 'RequestFailure';
    this.kind = kind;
  }
}

interface PendingReply {
  resolve: (msg: Msg) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Request-reply over one wildcard inbox subscription of the connection (what nats.js's own request() does), doing
 * less per request: a Map entry and a timer. nats.js's request() also builds a request object, a deferred, a timeout
 * promise and, on every reply, a RequestError("cancelled") whose stack trace is captured and thrown away (a visible
 * share of the ingest edge's CPU per event in npm run bench's profile, docs/benchmarks.md). A reply that arrives after its
 * request timed out or was failed finds no entry and is dropped, as nats.js drops it.
 */
class ReplyInbox {
  private readonly nc: NatsConnection;
  private readonly prefix: string;
  private readonly pending = new Map<string, PendingReply>();
  private sequence = 0;

  constructor(nc: NatsConnection, inboxPrefix: string) {
    this.nc = nc;
    this.prefix = `${createInbox(inboxPrefix)}.`;
    // Subscriptions are sent again on a reconnection (by the client), so the inbox lives as long as the connection.
    nc.subscribe(`${this.prefix}*`, {
      callback: (err, msg) => {
        if (err) this.failAll('lost', `reply subscription failed: ${err.message}`);
        else this.receive(msg);
      },
    });
  }

  request(subject: string, data: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<Msg> {
    const token = (this.sequence++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new RequestFailure('timeout', `request to ${subject} timed out`));
      }, timeoutMs);
      this.pending.set(token, { resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + token, headers });
      } catch (error) {
        clearTimeout(timer);
        this.pending.delete(token);
        reject(error);
      }
    });
  }

  private receive(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length);
    const pending = this.pending.get(token);
    if (pending === undefined) return;
    this.pending.delete(token);
    clearTimeout(pending.timer);
    // The server's "no responders" status: an empty message with status 503 (nats.js tells it apart the same way).
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      pending.reject(new RequestFailure('no_responders', 'no responders'));
    } else {
      pending.resolve(msg);
    }
  }

  /** Fails every request in flight at once (their replies cannot come back). */
  failAll(kind: RequestFailure['kind'], message: string): void {
    if (this.pending.size === 0) return;
    const failed = [...this.pending.values()];
    this.pending.clear();
    for (const { reject, timer } of failed) {
      clearTimeout(timer);
      reject(new RequestFailure(kind, message));
    }
  }
}

/** Resolves every waiter of one event-loop turn together, in its check phase (setImmediate). */
class TurnGate {
  private waiting: Array<() => void> = [];

  next(): Promise<void> {
    return new Promise((resolve) => {
      if (this.waiting.length === 0) setImmediate(() => this.open());
      this.waiting.push(resolve);
    });
  }

  private open(): void {
    const batch = this.waiting;
    this.waiting = [];
    for (const resolve of batch) resolve();
  }
}

/**
 * Replies and notices finished in one turn of the event loop go out in one socket write. Each handler finishes in
 * its own I/O callback (its database answer), and the NATS client flushes its buffer after every callback's
 * microtasks: one write per reply, and another for the notices its handler published a few microtasks before.
 * Deferring both to the end of the loop's poll phase (setImmediate), in the order they were made, lets the client
 * buffer them all before it flushes, at the cost of at most one loop turn of latency.
 */
class TurnWrites {
  private pending: Array<() => void> = [];

  send(write: () => void): Promise<void> {
    return new Promise((resolve) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push(() => {
        try {
          write();
        } finally {
          resolve();
        }
      });
    });
  }

  /** Hands every write waiting for the turn's end to the client now (before a drain). */
  flush(): void {
    const batch = this.pending;
    this.pending = [];
    for (const write of batch) {
      try {
        write();
      } catch {
        // A reply that cannot be sent (connection closed) is lost like an unanswered request: the caller times out.
        // (A notice handles its own failure: publishNow logs and counts it.)
      }
    }
  }
}

function describeRequestFailure(error: unknown, subject: string): string {
  if (error instanceof RequestFailure && error.kind === 'no_responders') return `no responders for ${subject}`;
  if (error instanceof RequestFailure && error.kind === 'timeout') return `request to ${subject} timed out`;
  return `request to ${subject} failed: ${error instanceof Error ? error.message : String(error)}`;
}
