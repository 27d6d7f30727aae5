// The in-process transport of `npm start` without NATS_URL: same subjects, same encoded bytes, no network.
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { DependencyUnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { decodeError, decodeReply, encodeRequest, InFlight, runEndpoint } from './codec.ts';
import type {
  CallContext,
  EndpointBinding,
  Operation,
  ServedService,
  ServiceDefinition,
  Transport,
} from './operation.ts';
import { traceHandler, traceRequest } from './trace-context.ts';

export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  private readonly endpoints = new Map<string, EndpointBinding>();
  private readonly served = new Set<ServedService>();
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private closed = false;

  constructor(logger: Logger, metrics: Metrics) {
    this.logger = logger;
    this.metrics = metrics;
  }

  call<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
  ): Promise<MessageShape<O>> {
    return traceRequest(operation, 'in-process', ctx, (carried) => this.request(operation, request, carried));
  }

  private async request<I extends DescMessage, O extends DescMessage>(
    operation: Operation<I, O>,
    request: MessageInitShape<I>,
    ctx: CallContext,
  ): Promise<MessageShape<O>> {
    const started = performance.now();
    const binding = this.endpoints.get(operation.subject);
    let outcome = 'ok';
    try {
      if (!binding || this.closed) {
        outcome = 'unavailable';
        throw new DependencyUnavailableError(
          operation.service,
          `no responders for ${operation.subject}`,
          'not_delivered',
        );
      }
      const data = encodeRequest(operation, request);
      const result = await traceHandler(operation, 'in-process', ctx, () =>
        runEndpoint(binding, data, ctx, this.logger),
      );
      if (!result.ok) {
        outcome = 'error';
        throw decodeError(result.data);
      }
      return decodeReply(operation, result.data);
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
        operation: binding.operation,
        handle: (request, ctx) => inFlight.track(binding.handle(request, ctx)),
      };
      this.endpoints.set(binding.operation.subject, tracked);
    }
    const served: ServedService = {
      stop: async () => {
        for (const binding of definition.endpoints) this.endpoints.delete(binding.operation.subject);
        await inFlight.settle();
        this.served.delete(served);
      },
    };
    this.served.add(served);
    return served;
  }

  isReady(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    for (const served of [...this.served]) await served.stop();
    this.closed = true;
  }
}
