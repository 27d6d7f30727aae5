// `npm start`: the whole service in one process (see system.ts), loaded by main.ts.

import { clientEnvPrefix } from '#runtime/cli/local-service.ts';
import { ConfigError } from '#runtime/config.ts';
import { EmbeddedTemplateMissingError } from '#runtime/db/embedded-data.ts';
import { stopOnSignals } from '#runtime/lifecycle.ts';
import { type RunningSystem, startSystem } from './system.ts';

let system: RunningSystem;

function operatorLine(token: RunningSystem['adminToken']): string {
  switch (token.source) {
    case 'env':
      return 'open (ADMIN_TOKEN from the environment)';
    case 'generated':
      return `open (token generated now, stored in ${token.file})`;
    case 'stored':
      return `open (token in ${token.file}; npm run admin reads it)`;
    default:
      return 'hidden (no ADMIN_TOKEN)';
  }
}
function developerLine(identity: RunningSystem['developerIdentity']): string {
  switch (identity) {
    case 'dev':
      return 'local development identity provider (npm run dev:token; this machine only)';
    case 'jwks':
      return 'DEVELOPER_JWKS / DEVELOPER_JWKS_URL';
    default:
      return 'REFUSED: no DEVELOPER_JWKS or DEVELOPER_JWKS_URL configured (docs/identity.md)';
  }
}
try {
  system = await startSystem();
} catch (error) {
  if (error instanceof ConfigError || error instanceof EmbeddedTemplateMissingError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

// From the process's start (performance's time origin): module loading included.
const seconds = (performance.now() / 1000).toFixed(1);
// The commands below are printed for the port and data folder in use, so that they work when typed as shown.
const clientEnv = { ...process.env, PORT: String(system.port) };
const client = clientEnvPrefix(clientEnv);
const adminPrefix = system.adminToken.source === 'env' ? `ADMIN_TOKEN=<the token you started with> ${client}` : client;
const lines = [
  '',
  `Sandbox Rewards is running (started in ${seconds} s)`,
  `  API          ${system.url}  (health: ${system.url}/healthz, OpenAPI: ${system.url}/openapi.json)`,
  `  Database     ${system.databaseDescription}`,
  `  Transport    ${system.transportKind === 'nats' ? 'NATS' : 'in-process (set NATS_URL to use NATS)'}`,
  `  Data folder  ${system.dataDir}`,
  `  Operator API ${operatorLine(system.adminToken)}`,
  `  Console      ${system.url}/console/`,
  `  Metrics      ${system.metricsUrl}`,
  `  Sign-in      ${developerLine(system.developerIdentity)}`,
];
if (system.adminToken.source === 'generated') {
  lines.push(
    '',
    'Generated operator token (shown once; kept owner-only in the file above, where npm run admin and npm run demo',
    'find it):',
    `  ${system.adminToken.token}`,
  );
}
if (system.adminToken.source !== 'none' && system.developerIdentity === 'dev') {
  lines.push(
    '',
    'Try it (in another terminal, in this folder):',
    `  ${adminPrefix}npm run admin -- invite you@example.com            # invite a developer (operator API)`,
    `  TOKEN=$(${client}npm run -s dev:token -- --email you@example.com)  # sign in as that developer`,
    `  curl -H "Authorization: Bearer $TOKEN" ${system.url}/api/developer/v1/access`,
    `  ${adminPrefix}npm run demo                                       # the whole journey, step by step`,
  );
} else if (system.developerIdentity === 'dev') {
  lines.push(
    '',
    'Get a development token (local identity provider, used when no DEVELOPER_JWKS is set):',
    `  ${client}npm run dev:token -- --email you@example.com`,
    'The operator API (inviting developers) is hidden: start with ADMIN_TOKEN (at least 32 characters) to open it.',
  );
}
lines.push('');
process.stdout.write(`${lines.join('\n')}\n`);

stopOnSignals({
  logger: system.logger,
  lifecycle: system.lifecycle,
  drainMs: system.drainMs,
  beginDrain: system.markShuttingDown,
  announce: (signal) => process.stdout.write(`\n${signal}: stopping gracefully...\n`),
});
