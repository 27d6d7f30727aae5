// The state owners are NATS micro services (ADR-32): `nats micro list` / `info` / `stats` discover them through the
// $SRV subjects, with the release version of package.json.
import { readFileSync } from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;
let nc: NatsConnection;
const version = JSON.parse(readFileSync('package.json', 'utf8')).version as string;

beforeAll(async () => {
  system = await startTestSystem();
  nc = await connect({ servers: system.natsUrl! });
});

afterAll(async () => {
  await nc?.close();
  await system?.stop();
});

const ask = async (subject: string) => (await nc.request(subject, '', { timeout: 5000 })).json<Record<string, any>>();

describe('NATS service discovery', () => {
  it.each(['ledger', 'identity-admission'])(
    '%s answers $SRV.INFO with the package version and its endpoints',
    async (name) => {
      const info = await ask(`$SRV.INFO.${name}`);
      expect(info).toMatchObject({ type: 'io.nats.micro.v1.info_response', name, version });
      expect(info.endpoints.length).toBeGreaterThan(0);
      for (const endpoint of info.endpoints) expect(endpoint.subject).toMatch(/^rewards\.v1\./);
    },
  );

  it('answers $SRV.STATS with per-endpoint counts after a request', async () => {
    expect((await fetch(`${system.url}/api/developer/v1/access`)).status).toBe(401);
    const stats = await ask('$SRV.STATS.identity-admission');
    expect(stats).toMatchObject({ type: 'io.nats.micro.v1.stats_response', version });
    const total = stats.endpoints.reduce((sum: number, e: { num_requests: number }) => sum + e.num_requests, 0);
    expect(total).toBeGreaterThan(0);
  });
});
