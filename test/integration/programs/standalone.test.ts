// The programs as separate processes on real NATS and PostgreSQL, the way Kubernetes runs them: a request crosses
// the transport from the gateway to identity-admission, a missing state owner is a 503 at the edge, bad
// configuration stops start-up with a message naming the variable, and SIGTERM stops gracefully.
import { exportJWK, generateKeyPair } from 'jose';
import { createTestDatabase } from '../../support/database.ts';
import { type ProgramProcess, startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';

async function inlineJwks(): Promise<string> {
  const { publicKey } = await generateKeyPair('ES256');
  return JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'test', alg: 'ES256' }] });
}

describe('programs run alone', () => {
  const started: ProgramProcess[] = [];
  // A private nats-server: no other test's services may answer these subjects.
  let nats: Awaited<ReturnType<typeof startNats>>;
  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    for (const program of started) await program.stop();
    await nats.stop();
  });

  it('answer through NATS: 503 while identity-admission is absent, 401 UNAUTHORIZED once it serves', async () => {
    // Without identity-admission NATS answers "no responders" at once; with it, a loaded machine may take seconds.
    const gateway = await startProgram('gateway', { NATS_URL: nats.url, NATS_REQUEST_TIMEOUT_MS: '15000' });
    started.push(gateway);

    const before = await fetch(`${gateway.url}/api/developer/v1/access`);
    expect(before.status).toBe(503);
    expect(await before.json()).toEqual({
      error: { code: 'AUTH_UNAVAILABLE', message: expect.any(String) },
    });

    const identity = await startProgram('identity-admission', {
      NATS_URL: nats.url,
      DATABASE_URL: await createTestDatabase(),
      DEVELOPER_JWKS: await inlineJwks(),
      DEVELOPER_JWT_ISSUER: 'https://idp.example',
      DEVELOPER_JWT_AUDIENCE: 'rewards',
    });
    started.push(identity);
    expect((await fetch(`${identity.url}/readyz`)).status).toBe(200);

    const after = await fetch(`${gateway.url}/api/developer/v1/access`);
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });

    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(
      /transport_requests_total\{subject="rewards.v1.identity.GetPlatformState",outcome="ok"\} \d+/,
    );

    expect(await identity.stop()).toBe(0);
    expect(await gateway.stop()).toBe(0);
    started.length = 0;
    // Two program starts and stops: a deadline for a loaded machine, not a measurement.
  }, 180_000);

  it('refuse to start with missing or malformed configuration, naming each variable', async () => {
    const run = await startProgram(
      'ledger',
      { NATS_URL: 'http://not-nats', EVENT_RATE_LIMIT_PER_MINUTE: 'many' },
      undefined,
      'started',
    );
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(/NATS_URL must be a URL with scheme nats:/);
    expect(run.output()).toMatch(/DATABASE_URL is required/);
    expect(run.output()).toMatch(/EVENT_RATE_LIMIT_PER_MINUTE must be an integer/);
  });
});
