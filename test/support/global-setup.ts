// Jest global setup: real PostgreSQL and NATS for the whole run (see servers.ts).
import { startTemplate } from './embedded-template.ts';
import { startServers } from './servers.ts';

export default async function globalSetup(): Promise<void> {
  // The embedded systems' PGlite folder, made in the background while the servers start (embedded-template.ts).
  const template = startTemplate();
  process.env.TEST_PGLITE_TEMPLATE = template.folder;
  (globalThis as { __rewardsTemplate?: typeof template }).__rewardsTemplate = template;
  const servers = await startServers();
  process.env.TEST_DATABASE_URL = servers.databaseUrl;
  process.env.TEST_NATS_URL = servers.natsUrl;
  (globalThis as { __rewardsServers?: typeof servers }).__rewardsServers = servers;
}
