// Jest global setup: real PostgreSQL and NATS for the whole run (see servers.ts).
import { startServers } from './servers.ts';

export default async function globalSetup(): Promise<void> {
  const servers = await startServers();
  process.env.TEST_DATABASE_URL = servers.databaseUrl;
  process.env.TEST_NATS_URL = servers.natsUrl;
  (globalThis as { __rewardsServers?: typeof servers }).__rewardsServers = servers;
}
