// The OpenTelemetry Node SDK with the official instrumentations (HTTP, Koa, pg, pino log correlation), exporting
// over OTLP. Loaded by register.ts only when an endpoint is configured; everything else comes from the standard
// OTEL_* variables, which the SDK reads itself (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
// OTEL_TRACES_SAMPLER_ARG, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*, ...).
import type { IncomingMessage } from 'node:http';
import { register } from 'node:module';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation } from '@opentelemetry/instrumentation-koa';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { setTracingShutdown } from './settings.ts';

// ESM instrumentation: the loader hook wraps only the modules the instrumentations below ask for.
const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

// Traces only: the programs' metrics are Prometheus (/metrics) and their logs JSON lines on standard output. The
// SDK's own defaults would also push OTLP metrics and logs; the same variables still turn them on when wanted.
process.env.OTEL_METRICS_EXPORTER ??= 'none';
process.env.OTEL_LOGS_EXPORTER ??= 'none';
// Without OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) a program is named after its entry:
// gateway/src/main.ts is `gateway`, services/ledger/src/main.ts `ledger`, services/all-in-one/src/main.ts `all-in-one`.
const program = /(?:^|\/)([a-z-]+)\/src\/main\.ts$/.exec(process.argv[1] ?? '')?.[1];
if (
  program &&
  !process.env.OTEL_SERVICE_NAME &&
  !/(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '')
) {
  process.env.OTEL_SERVICE_NAME = program;
}

/** Probes and scrapes are not requests of the product: no traces for them. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

const sdk = new NodeSDK({
  instrumentations: [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request: IncomingMessage) => PROBES.has((request.url ?? '').split('?')[0] ?? ''),
      // Outgoing HTTP (JWKS fetches go through fetch, not node:http) only inside a request's trace.
      requireParentforOutgoingSpans: true,
    }),
    new KoaInstrumentation(),
    // Statement text only (parameterized: values, hence keys and tokens, are never recorded).
    new PgInstrumentation({ enhancedDatabaseReporting: false }),
    // trace_id, span_id and trace_flags on every log line written inside a span; no OTLP log records.
    new PinoInstrumentation({ disableLogSending: true }),
  ],
});
sdk.start();
setTracingShutdown(() => sdk.shutdown());

await waitForAllMessagesAcknowledged();
