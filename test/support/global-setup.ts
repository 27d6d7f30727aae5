// Jest global setup: real PostgreSQL and NATS for the whole run (see servers.ts). Embedded systems make their own
// PGlite folder from the shipped template (services/runtime/src/db/embedded.ts), as `npm start` does.
import { startServers } from './servers.ts';

export default async function globalSetup(): Promise<void> {
  const servers = await startServers();
  process.env.TEST_DATABASE_URL = servers.databaseUrl;
  process.env.TEST_NATS_URL = servers.natsUrl;
  (globalThis as { __rewardsServers?: typeof servers }).__rewardsServers = servers;
}
