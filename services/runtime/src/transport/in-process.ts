// The in-process transport of `npm start` without NATS_URL: same subjects, same encoded bytes, no network.
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
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
import { type RequestTimeouts, requestBudget, timeoutFor } from './deadline.ts';
import type {
  CallContext,
  CallOptions,
  EncodedNotice,
  EndpointBinding,
  NoticeSubscription,
  Operation,
  ServedService,
  ServiceDefinition,
  Topic,
  Transport,
} from './operation.ts';
import { traceHandler, traceRequest } from './trace-context.ts';

export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  private readonly endpoints = new Map<string, EndpointBinding>();
  private readonly served = new ServedServices();
  /** Notice receivers per subject (exact subjects, no wildcards). */
  private readonly receivers = new Map<string, Set<(data: Uint8Array) => void>>();
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly timeouts: RequestTimeouts | undefined;
  private closed = false;

  /**
   * `timeouts`: as on NATS (NATS_REQUEST_TIMEOUT_MS, NATS_EVENT_REQUEST_TIMEOUT_MS), each call gets a deadline (its
   * budget, transport/deadline.ts) that the handler's work follows, and its caller stops waiting at the timeout (503,
   * outcome unknown). Without them a call waits for its handler, and has no deadline.
   */
  constructor(logger: Logger, metrics: Metrics, timeouts?: RequestTimeouts) {
    this.logger = logger;
    this.metrics = metrics;
    this.timeouts = timeouts;
  }

  call<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
    options?: CallOptions,
  ): Promise<MessageShape<O>> {
    return traceRequest(operation, 'in-process', ctx, (carried) => this.request(operation, request, carried, options));
  }

  private async request<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
    options: CallOptions | undefined,
  ): Promise<MessageShape<O>> {
    const started = performance.now();
    const binding = this.endpoints.get(operation.subject);
    let outcome = 'ok';
    try {
      if (!binding || this.closed) {
        outcome = 'unavailable';
        if (!binding && options) options.noResponders = true;
        throw new DependencyUnavailableError(
          operation.service,
          `no responders for ${operation.subject}`,
          'not_delivered',
        );
      }
      const data = encodeRequest(operation, request);
      const timeout = this.timeouts && timeoutFor(operation.subject, this.timeouts);
      // The serving side's context, as a NATS state owner builds it from the headers: the budget from now.
      const served: CallContext =
        timeout === undefined ? ctx : { ...ctx, deadline: performance.now() + requestBudget(timeout, ctx.deadline) };
      const handled = traceHandler(operation, 'in-process', served, () =>
        runEndpoint(binding, data, served, this.logger, this.metrics),
      );
      const result = timeout === undefined ? await handled : await withTimeout(handled, timeout, operation);
      if (!result.ok) {
        outcome = 'error';
        throw decodeError(result.data);
      }
      return decodeReply(operation, result.data);
    } catch (error) {
      if (error instanceof DependencyUnavailableError) outcome = 'unavailable';
      throw error;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.metrics.transportRequests.inc({ subject: operation.subject, outcome });
      this.metrics.transportDuration.observe({ subject: operation.subject, outcome }, seconds);
    }
  }

  async serve(definition: ServiceDefinition): Promise<ServedService> {
    const inFlight = new InFlight();
    for (const binding of definition.endpoints) {
      const tracked: EndpointBinding = {
        ...binding,
        handle: (request, ctx) => inFlight.track(binding.handle(request, ctx)),
      };
      this.endpoints.set(binding.operation.subject, tracked);
    }
    return this.served.add(inFlight, () => {
      for (const binding of definition.endpoints) this.endpoints.delete(binding.operation.subject);
    });
  }

  /**
   * As on NATS: the notice is encoded once, and each receiver decodes its own copy later (a macrotask), never inside
   * the publisher's call; receivers subscribed when it is published get it.
   */
  publish<M extends DescMessage>(
    topic: Topic<M>,
    subject: string,
    message: MessageInitShape<M> | EncodedNotice<M>,
  ): void {
    if (this.closed) {
      this.logger.warn({ subject }, 'notice not published: the transport is closed');
      this.metrics.transportPublishes.inc({ topic: topic.name, outcome: 'failed' });
      return;
    }
    const data = encodeNotice(topic, message, this.logger, this.metrics);
    if (!data) return;
    this.metrics.transportPublishes.inc({ topic: topic.name, outcome: 'ok' });
    const receivers = this.receivers.get(subject);
    if (!receivers || receivers.size === 0) return;
    const targets = [...receivers];
    setImmediate(() => {
      for (const receive of targets) receive(data);
    });
  }

  async subscribe<M extends DescMessage>(
    topic: Topic<M>,
    subject: string,
    handler: (message: MessageShape<M>) => void,
  ): Promise<NoticeSubscription> {
    let active = true;
    const decode = noticeReceiver(topic, subject, handler, this.logger);
    const receive = (data: Uint8Array) => {
      if (active) decode(data);
    };
    let receivers = this.receivers.get(subject);
    if (!receivers) {
      receivers = new Set();
      this.receivers.set(subject, receivers);
    }
    receivers.add(receive);
    return {
      unsubscribe: () => {
        active = false;
        const current = this.receivers.get(subject);
        current?.delete(receive);
        if (current?.size === 0) this.receivers.delete(subject);
      },
    };
  }

  isReady(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    await this.served.stopAll();
    this.receivers.clear();
    this.closed = true;
  }
}

/** The handler's outcome, or at `timeoutMs` a 503 whose outcome is unknown (the handler goes on, as on NATS). */
function withTimeout<T>(handled: Promise<T>, timeoutMs: number, operation: Operation): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DependencyUnavailableError(operation.service, `request to ${operation.subject} timed out`, 'unknown'),
        ),
      timeoutMs,
    );
  });
  return Promise.race([handled, timedOut]).finally(() => clearTimeout(timer));
}
