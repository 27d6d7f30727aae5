// Operations are the request-reply calls between programs: one NATS subject each, protobuf request and reply
// messages from proto/. A Transport carries them; the NATS one between processes, the in-process one inside
// `npm start`. Both move the same subjects, headers and encoded bytes.
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';

export type ServiceName = 'ledger' | 'identity';

/** Queue group and NATS service name of each state owner. */
export const serviceNames: Record<ServiceName, string> = {
  ledger: 'ledger',
  identity: 'identity-admission',
};

export interface Operation<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> {
  readonly service: ServiceName;
  readonly name: string;
  /** `rewards.v1.<service>.<name>` */
  readonly subject: string;
  readonly request: I;
  readonly reply: O;
  /** The caller's own codec (a WiredOperation's); without it the generated messages (`create`, `toBinary`, `fromBinary`). */
  readonly wire?: WireCodec<unknown, unknown> | undefined;
}

/**
 * A caller's own codec of an operation's request and reply (the edge's RecordEvents: services/ingest/src/routes/record-events-wire.ts):
 * the bytes of the generated messages, in the caller's shapes. A server's own reply encoder is `bindEncoded`'s.
 */
export interface WireCodec<Q, R> {
  encode(request: Q): Uint8Array;
  decode(data: Uint8Array): R;
}

/** An operation called with a codec of its own (the same subject and messages): callWired. */
export interface WiredOperation<I extends DescMessage, O extends DescMessage, Q, R> extends Operation<I, O> {
  readonly wire: WireCodec<Q, R>;
}

export function withWire<I extends DescMessage, O extends DescMessage, Q, R>(
  operation: Operation<I, O>,
  wire: WireCodec<Q, R>,
): WiredOperation<I, O, Q, R> {
  const { service, name, subject, request, reply } = operation;
  return { service, name, subject, request, reply, wire };
}

/**
 * Calls a wired operation: every transport encodes and decodes through `operation.wire` (transport/codec.ts), so the
 * request is the codec's and so is the reply, whatever Transport.call's generated types say.
 */
export function callWired<I extends DescMessage, O extends DescMessage, Q, R>(
  transport: Transport,
  operation: WiredOperation<I, O, Q, R>,
  request: Q,
  ctx: CallContext,
  options?: CallOptions,
): Promise<R> {
  return transport.call(operation, request as MessageInitShape<I>, ctx, options) as Promise<unknown> as Promise<R>;
}

export function defineOperation<I extends DescMessage, O extends DescMessage>(
  service: ServiceName,
  name: string,
  request: I,
  reply: O,
): Operation<I, O> {
  return { service, name, subject: `rewards.v1.${service}.${name}`, request, reply };
}

/** What travels with every call besides the message: correlation for logs and traces. */
export interface CallContext {
  requestId: string;
  traceparent?: string | undefined;
  tracestate?: string | undefined;
  /**
   * When the request's work must have ended (performance.now() time of this process): on the serving side, the
   * arrival time plus the budget the caller sent (transport/deadline.ts); on the calling side, a deadline of its own
   * that further requests must not outlive. None: no deadline (a caller without a timeout).
   */
  deadline?: number | undefined;
}

export type Handler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>>;

export interface EndpointBinding {
  readonly operation: Operation;
  readonly handle: Handler<DescMessage, DescMessage>;
  /** The server's own encoder of the handler's replies (bindEncoded); without it the generated code. */
  readonly encodeReply?: ((reply: unknown) => Uint8Array) | undefined;
}

export function bind<I extends DescMessage, O extends DescMessage>(
  operation: Operation<I, O>,
  handle: Handler<I, O>,
): EndpointBinding {
  return { operation, handle: handle as unknown as Handler<DescMessage, DescMessage> };
}

/**
 * Serves an operation whose replies the server encodes itself (the ledger's RecordEvents: its events/reply-wire.ts):
 * the handler answers in the encoder's shape, and `encodeReply` must write the bytes the generated encoder would write
 * of the operation's reply message (its tests hold it to that). The request is decoded by the generated code.
 */
export function bindEncoded<I extends DescMessage, R>(
  operation: Operation<I>,
  handle: (request: MessageShape<I>, ctx: CallContext) => Promise<R>,
  encodeReply: (reply: R) => Uint8Array,
): EndpointBinding {
  return {
    operation,
    handle: handle as unknown as Handler<DescMessage, DescMessage>,
    encodeReply: encodeReply as (reply: unknown) => Uint8Array,
  };
}

/**
 * A notice's bytes, written by a server's own encoder (the ledger's decision notice: events/reply-wire.ts), published
 * as they are instead of encoding a message; they must be the bytes the generated encoder writes of the topic's
 * message `M` (the encoder's tests hold it to that).
 */
export class EncodedNotice<M extends DescMessage = DescMessage> {
  readonly bytes: Uint8Array;
  /** The topic's message, for the type checker only. */
  declare readonly message?: M;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

export interface ServiceDefinition {
  service: ServiceName;
  version: string;
  description: string;
  endpoints: EndpointBinding[];
}

export interface ServedService {
  /** Stops taking requests, then waits for the ones in flight to be answered. */
  stop(): Promise<void>;
}

/**
 * A family of notices (publish-subscribe, no reply): one protobuf message, published fire-and-forget on subjects
 * the family names (contracts/subjects.ts). Subscribers are plain (no queue group): every subscriber gets every
 * notice published while it is subscribed, at most once.
 */
export interface Topic<M extends DescMessage = DescMessage> {
  /** The metrics label, e.g. `decisions`. */
  readonly name: string;
  readonly message: M;
}

export function defineTopic<M extends DescMessage>(name: string, message: M): Topic<M> {
  return { name, message };
}

export interface NoticeSubscription {
  /** Stops the deliveries (idempotent). */
  unsubscribe(): void;
}

export interface CallOptions {
  /**
   * The caller runs at the end of an event-loop turn and has gathered that turn's work itself (the edge's batcher,
   * services/runtime/src/batching/keyed-batcher.ts `leave: 'turn'`): the request leaves now. Otherwise the NATS
   * transport holds a request to the end of the turn, so that the requests of one turn leave in one socket write.
   */
  gathered?: boolean;
  /**
   * Set by the NATS transport (an answer, not an argument): the answer came while more than one copy of the request was
   * out (a repeatable request sent again after its per-try timeout). A copy's "nothing was stored" then says nothing
   * of the other copies, which may still store: the caller answers such a failure as of unknown outcome.
   */
  copied?: boolean;
  /**
   * A request that no server takes (no responders) fails at once, with `noResponders` set, instead of being sent again
   * until the transport's undelivered wait has passed: the caller has another subject to send it on (the edge's event
   * writes, services/ingest/src/routes/event-write-route.ts).
   */
  failNoResponders?: boolean;
  /** Set by the transport (an answer, not an argument): the request failed because no server takes its subject. */
  noResponders?: boolean;
}

export interface Transport {
  readonly kind: 'nats' | 'in-process';
  call<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
    options?: CallOptions,
  ): Promise<MessageShape<O>>;
  serve(definition: ServiceDefinition): Promise<ServedService>;
  /**
   * Publishes a notice and returns at once; never throws and never waits: a notice that cannot be sent (connection
   * closed, bad message) is logged and counted (transport_publishes_total{outcome="failed"}), nothing else.
   */
  publish<M extends DescMessage>(
    topic: Topic<M>,
    subject: string,
    message: MessageInitShape<M> | EncodedNotice<M>,
  ): void;
  /**
   * Delivers the notices of `subject` to `handler` until unsubscribed; resolves once the subscription is live (on
   * NATS: the server has it), so that a notice published after that reaches it.
   */
  subscribe<M extends DescMessage>(
    topic: Topic<M>,
    subject: string,
    handler: (message: MessageShape<M>) => void,
  ): Promise<NoticeSubscription>;
  isReady(): boolean;
  /** Drains: stops served services (finishing in-flight requests), then closes the connection. */
  close(): Promise<void>;
}

export const headerNames = {
  requestId: 'Rewards-Request-Id',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
