// `npm start`: the whole service in one process (see system.ts).
import { ConfigError } from '../../runtime/src/config.ts';
import { startSystem } from './system.ts';

const started = performance.now();
let system: Awaited<ReturnType<typeof startSystem>>;
try {
  system = await startSystem();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

const seconds = ((performance.now() - started) / 1000).toFixed(1);
const lines = [
  '',
  `Sandbox Rewards is running (started in ${seconds} s)`,
  `  API          ${system.url}  (health: ${system.url}/healthz, OpenAPI: ${system.url}/openapi.json)`,
  `  Database     ${system.databaseDescription}`,
  `  Transport    ${system.transportKind === 'nats' ? 'NATS' : 'in-process (set NATS_URL to use NATS)'}`,
  `  Data folder  ${system.dataDir}`,
  '',
  'Get a development token (local identity provider, used when no DEVELOPER_JWKS is set):',
  '  npm run dev:token -- --email you@example.com',
  'Invite that e-mail first (operator API, needs ADMIN_TOKEN):',
  '  npm run admin -- invite you@example.com',
  '',
];
process.stdout.write(`${lines.join('\n')}\n`);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) process.exit(1);
  stopping = true;
  process.stdout.write(`\n${signal}: stopping gracefully...\n`);
  const timer = setTimeout(() => process.exit(1), 10_000);
  timer.unref();
  await system.stop();
  process.exit(0);
};
process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));
