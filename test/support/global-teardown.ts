import type { StartedServers } from './servers.ts';

export default async function globalTeardown(): Promise<void> {
  const servers = (globalThis as { __rewardsServers?: StartedServers }).__rewardsServers;
  await servers?.stop();
}
