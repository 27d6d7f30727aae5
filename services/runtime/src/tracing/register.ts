// Loaded before a program's own modules: `node --import ./services/runtime/src/tracing/register.ts <entry>` (the npm
// scripts, the image's ENTRYPOINT and the tests all start programs this way). It does nothing, not even loading the
// SDK, unless an OTLP endpoint is configured; then it starts the OpenTelemetry Node SDK (sdk.ts) before the
// application's modules load, which ESM instrumentation needs. See docs/deploy.md, "Traces".
import { tracingRequested } from './settings.ts';

if (tracingRequested(process.env)) await import('./sdk.ts');
