// `npm run dev:split`: the five programs as separate processes on one machine, as Kubernetes runs them, on the
// PostgreSQL and NATS given (DATABASE_URL, NATS_URL), with the local development identity provider trusted
// (UNSAFE_DEV_IDENTITY_PROVIDER=true and one DATA_DIR for all five), so that `npm run dev:token` and `npm run demo`
// work against them as against `npm start`. Prints where each program listens; Ctrl-C stops them all.
// A development tool (services/launcher/tools/ is not in the image).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadOrCreateAdminToken, loadOrCreateWebhookSecretKey } from '#runtime/cli/local-service.ts';
import { loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';
import { PROGRAMS, type ProgramName, startPrograms } from './processes.ts';

const usage = `Usage: DATABASE_URL=postgres://... NATS_URL=nats://... npm run dev:split [-- --base-port 8080]

Starts gateway, ingest, links, identity-admission and ledger as five processes on this machine, each on its own
port (--base-port, then the next four), against the PostgreSQL of DATABASE_URL (migrated by the state owners at
start) and the nats-server(s) of NATS_URL, with the local development identity provider of DATA_DIR trusted
(UNSAFE_DEV_IDENTITY_PROVIDER=true: anyone on this machine can sign in as anyone; never on a shared host).

  --base-port N   the gateway's port; ingest N+1, links N+2, identity-admission N+3, ledger N+4 (default 8080)

Environment: DATABASE_URL and NATS_URL (required), DATA_DIR (default ./.data: the development provider's keys and
the operator token, as npm start keeps them), ADMIN_TOKEN (default: the token stored in DATA_DIR, made once),
WEBHOOK_SECRET_KEY (default: a key stored in DATA_DIR/webhook-secret-key, made once),
LOG_LEVEL (default info; the logs go to DATA_DIR/split-logs/<program>.log), and any program variable of the README.`;

function fail(message: string): never {
  process.stderr.write(`dev:split: ${message}\n\n${usage}\n`);
  process.exit(2);
}

let values: { 'base-port': string; help: boolean };
try {
  ({ values } = parseArgs({
    options: {
      'base-port': { type: 'string', default: '8080' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }) as { values: { 'base-port': string; help: boolean } });
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const basePort = Number(values['base-port']);
if (!Number.isInteger(basePort) || basePort < 1 || basePort > 65531) fail('--base-port must be an integer 1..65531');
if (!process.env.DATABASE_URL) {
  fail('DATABASE_URL is required: the PostgreSQL the programs share (npm start needs none: it embeds one)');
}
if (!process.env.NATS_URL)
  fail('NATS_URL is required: the nats-server the programs talk over (e.g. nats://127.0.0.1:4222)');

const ORDER: ProgramName[] = ['gateway', 'ingest', 'links', 'identity-admission', 'ledger'];
const portOf = (program: ProgramName) => basePort + ORDER.indexOf(program);
const dataDir = resolve(process.env.DATA_DIR || './.data');
mkdirSync(dataDir, { recursive: true });
// The keys exist before any program starts, so that the five read the same ones.
await loadDevProvider(dataDir, 'developer');
await loadDevProvider(dataDir, 'native');
const adminToken = process.env.ADMIN_TOKEN || loadOrCreateAdminToken(dataDir).token;
// The ledger needs WEBHOOK_SECRET_KEY with DATABASE_URL; kept under DATA_DIR so that restarts read the same secrets.
const webhookSecretKey = process.env.WEBHOOK_SECRET_KEY || loadOrCreateWebhookSecretKey(dataDir);
const logDir = join(dataDir, 'split-logs');

process.stdout.write(`Starting the five programs apart (logs in ${logDir}) ...\n`);
const programs = await startPrograms({
  programs: Object.fromEntries(PROGRAMS.map((program) => [program, { ports: [portOf(program)] }])),
  env: {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    WEBHOOK_SECRET_KEY: webhookSecretKey,
    UNSAFE_DEV_IDENTITY_PROVIDER: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL || 'info',
  },
  logDir,
}).catch((error: Error) => fail(`a program did not start: ${error.message}`));

const urlOf = (program: ProgramName) => programs.get(program).url;
const dataDirPrefix = process.env.DATA_DIR ? `DATA_DIR=${process.env.DATA_DIR} ` : '';
process.stdout.write(
  [
    '',
    'Sandbox Rewards, five programs apart (each: /healthz, /readyz, /metrics):',
    ...ORDER.map((program) => `  ${program.padEnd(19)} ${urlOf(program)}`),
    '',
    `Web console   ${urlOf('gateway')}/console/`,
    `Operator API  ${urlOf('gateway')}/api/admin/v1 (ADMIN_TOKEN${process.env.ADMIN_TOKEN ? '' : ` in ${dataDir}/admin-token`})`,
    '',
    'Next:',
    `  ${dataDirPrefix}API_URL=${urlOf('gateway')} npm run admin -- invite you@example.com`,
    `  TOKEN=$(${dataDirPrefix}npm run -s dev:token -- --email you@example.com)`,
    `  curl -H "Authorization: Bearer $TOKEN" ${urlOf('gateway')}/api/developer/v1/access`,
    `  ${dataDirPrefix}npm run demo -- --url ${urlOf('gateway')} --ingest-url ${urlOf('ingest')} --links-url ${urlOf('links')}`,
    '',
    'Ctrl-C stops all five.',
    '',
  ].join('\n'),
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nStopping the five programs ...\n');
    programs.stop().then(
      () => process.exit(0),
      (error: Error) => {
        process.stderr.write(`dev:split: stop failed: ${error.message}\n`);
        process.exit(1);
      },
    );
  });
}
