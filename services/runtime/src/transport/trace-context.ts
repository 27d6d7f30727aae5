// W3C trace context across the transport (messaging semantic conventions). One pair: `traceRequest` on the calling
// side runs a call in a `send <subject>` span and puts that span's context into the call context (traceparent,
// tracestate), which the NATS transport carries as message headers; `traceHandler` on the serving side extracts it
// and runs the handler in a `process <subject>` span under it, so the owner's statements and log lines belong to the
// caller's trace. Without the OpenTelemetry SDK (no OTLP endpoint) the API is a no-op and the call context passes
// through unchanged.
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from '@opentelemetry/api';
import { AppError } from '../errors.ts';
import { tracingRunning } from '../tracing/settings.ts';
import type { HandlerOutcome } from './codec.ts';
import type { CallContext, Operation } from './operation.ts';

const tracer = trace.getTracer('sandbox-rewards/transport');

type Carrier = { traceparent?: string | undefined; tracestate?: string | undefined };

const setter: TextMapSetter<Carrier> = {
  set(carrier, key, value) {
    if (key === 'traceparent' || key === 'tracestate') carrier[key] = value;
  },
};

const getter: TextMapGetter<Carrier> = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier, key) => (key === 'traceparent' || key === 'tracestate' ? carrier[key] : undefined),
};

function attributes(operation: Operation, system: string, type: 'send' | 'process') {
  return {
    'messaging.system': system,
    'messaging.destination.name': operation.subject,
    'messaging.operation.type': type,
    'messaging.operation.name': type,
  };
}

function end(span: Span, error?: unknown): void {
  // A refusal (4xx) is an answer, not a failure of the call.
  if (error !== undefined && !(error instanceof AppError && error.status < 500)) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof AppError ? error.code : 'error' });
    if (error instanceof AppError) span.setAttribute('error.type', error.code);
  }
  span.end();
}

async function run<T>(span: Span, parent: Context, work: () => Promise<T>): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), work);
    end(span);
    return result;
  } catch (error) {
    end(span, error);
    throw error;
  }
}

/** Calling side: `send` runs in a PRODUCER span and receives the call context that carries it. */
export function traceRequest<T>(
  operation: Operation,
  system: string,
  ctx: CallContext,
  send: (ctx: CallContext) => Promise<T>,
): Promise<T> {
  // No SDK: every span would be a no-op; the caller's traceparent, if any, passes through.
  if (!tracingRunning()) return send(ctx);
  const parent = context.active();
  const span = tracer.startSpan(
    `send ${operation.subject}`,
    { kind: SpanKind.PRODUCER, attributes: attributes(operation, system, 'send') },
    parent,
  );
  // No SDK: a no-op span, nothing to carry (the caller's traceparent, if any, passes through).
  if (!trace.isSpanContextValid(span.spanContext())) return send(ctx);
  const carried: CallContext = { ...ctx };
  propagation.inject(trace.setSpan(parent, span), carried, setter);
  return run(span, parent, () => send(carried));
}

/** Serving side: `handle` runs in a CONSUMER span whose parent is the caller's span from the call context. */
export function traceHandler(
  operation: Operation,
  system: string,
  ctx: CallContext,
  handle: () => Promise<HandlerOutcome>,
): Promise<HandlerOutcome> {
  if (!tracingRunning()) return handle();
  const parent = propagation.extract(ROOT_CONTEXT, ctx, getter);
  const span = tracer.startSpan(
    `process ${operation.subject}`,
    { kind: SpanKind.CONSUMER, attributes: attributes(operation, system, 'process') },
    parent,
  );
  if (!trace.isSpanContextValid(span.spanContext())) return handle();
  return run(span, parent, async () => {
    const outcome = await handle();
    if (!outcome.ok) {
      span.setAttribute('error.type', outcome.code);
      if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
    }
    return outcome;
  });
}
