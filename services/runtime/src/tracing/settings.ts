// When tracing is on, from the standard OpenTelemetry variables only.

/**
 * True when an OTLP endpoint for traces is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and `OTEL_SDK_DISABLED` is not `true`.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint?.trim()) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/** Set by sdk.ts once the SDK runs: flushes and stops it (called by the programs' graceful shutdown). */
const SHUTDOWN = Symbol.for('sandbox-rewards.tracing.shutdown');

type WithShutdown = typeof globalThis & { [SHUTDOWN]?: () => Promise<void> };

export function setTracingShutdown(shutdown: () => Promise<void>): void {
  (globalThis as WithShutdown)[SHUTDOWN] = shutdown;
}

/**
 * True once the SDK runs in this process (sdk.ts registered its shutdown). Without it every span is a no-op, so the
 * hot paths skip making spans at all (services/runtime/src/transport/trace-context.ts, http/app.ts).
 */
export function tracingRunning(): boolean {
  return (globalThis as WithShutdown)[SHUTDOWN] !== undefined;
}

/** Exports the spans still buffered and stops the SDK; nothing to do when tracing is off. */
export async function shutdownTracing(): Promise<void> {
  await (globalThis as WithShutdown)[SHUTDOWN]?.();
}
