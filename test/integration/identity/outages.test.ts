// A down identity store answers 503 with the route's code, never a 500, and the service recovers by itself:
// identity-admission stopped mid-run (killed, then frozen) behind a separately running gateway, and the identity
// database refusing connections under the all-in-one process.
import { randomUUID } from 'node:crypto';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import { createTestDatabase, sql, testServerUrl } from '../../support/database.ts';
import { type ProgramProcess, startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';
import {
  admin,
  api,
  developerToken,
  invitedDeveloper,
  nativeToken,
  startTestSystem,
  TEST_ADMIN_TOKEN,
  type TestSystem,
} from '../../support/system.ts';
import { access, errorBody, jwks, sign, testKey, waitUntil } from './support.ts';

const ISSUER = 'https://idp.outage.example/';
const AUDIENCE = 'rewards-outage-test';
const REQUEST_TIMEOUT_MS = 400;

describe('identity-admission stopped mid-run (gateway and identity-admission as separate processes)', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let gateway: ProgramProcess;
  let identity: ProgramProcess | undefined;
  let identityEnv: Record<string, string>;
  let key: Awaited<ReturnType<typeof testKey>>;

  beforeAll(async () => {
    nats = await startNats();
    key = await testKey('ES256');
    identityEnv = {
      NATS_URL: nats.url,
      NATS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      DATABASE_URL: await createTestDatabase(),
      DEVELOPER_JWKS: jwks(key),
      DEVELOPER_JWT_ISSUER: ISSUER,
      DEVELOPER_JWT_AUDIENCE: AUDIENCE,
    };
    identity = await startProgram('identity-admission', identityEnv);
    gateway = await startProgram('gateway', {
      NATS_URL: nats.url,
      NATS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    if (identity) {
      identity.child.kill('SIGCONT');
      await identity.stop();
    }
    await nats?.stop();
  });

  it('answers 503 AUTH_UNAVAILABLE while identity-admission is gone or frozen, and 200 again once it is back', async () => {
    // Before the outage. The gateway waits only REQUEST_TIMEOUT_MS (400 ms) for identity-admission, which a loaded CI
    // machine can exceed on a program's first requests: a 503 there is retried (an invitation whose answer was lost
    // may have been made: then 409).
    const email = `outage-${randomUUID().slice(0, 8)}@example.com`;
    const invited = await waitUntil(
      'the invitation is answered',
      () => api(gateway.url, 'POST', '/api/admin/v1/invitations', { token: TEST_ADMIN_TOKEN, body: { email } }),
      (r) => r.status !== 503,
    );
    expect([200, 409]).toContain(invited.status);
    const token = await sign(
      key,
      { sub: 'idp|outage', email, email_verified: true },
      { issuer: ISSUER, audience: AUDIENCE },
    );
    const ok = await waitUntil(
      'the developer is admitted',
      () => access(gateway, token),
      (r) => r.status !== 503,
    );
    expect(ok.status).toBe(200);

    // Killed mid-run: nobody answers the identity subjects any more.
    identity!.child.kill('SIGKILL');
    await identity!.stop();
    identity = undefined;
    for (let i = 0; i < 3; i++) {
      const down = await access(gateway, token);
      expect(down.status).toBe(503);
      expect(down.body).toEqual(errorBody('AUTH_UNAVAILABLE'));
      expect(down.headers.get('cache-control')).toBe('no-store');
      expect(down.headers.get('retry-after')).toBe('1');
    }
    // Invalid credentials cannot be judged either: still 503, never a guess.
    expect((await access(gateway, 'garbage')).body).toEqual(errorBody('AUTH_UNAVAILABLE'));
    // The operator API reports the outage as a 503 too.
    const operator = await api(gateway.url, 'GET', '/api/admin/v1/invitations', { token: TEST_ADMIN_TOKEN });
    expect(operator.status).toBe(503);
    expect(operator.body.error.code).toBe('PLATFORM_UNAVAILABLE');

    // Back: a new process on the same database; the invitation's binding survived.
    identity = await startProgram('identity-admission', identityEnv);
    const back = await waitUntil(
      'identity-admission answers once it is back',
      () => access(gateway, token),
      (r) => r.status !== 503,
    );
    expect(back.status).toBe(200);
    expect(back.body).toEqual({ data: { authorized: true, email, mode: 'sandbox' } });
    const intruder = await sign(
      key,
      { sub: 'idp|intruder', email, email_verified: true },
      { issuer: ISSUER, audience: AUDIENCE },
    );
    expect((await access(gateway, intruder)).body).toEqual(errorBody('DEVELOPER_INVITATION_REQUIRED'));

    // Frozen: the process holds its subscriptions but answers nothing; requests time out into the same 503.
    identity.child.kill('SIGSTOP');
    try {
      const frozen = await access(gateway, token);
      expect(frozen.status).toBe(503);
      expect(frozen.body).toEqual(errorBody('AUTH_UNAVAILABLE'));
    } finally {
      identity.child.kill('SIGCONT');
    }
    const thawed = await waitUntil(
      'identity-admission answers again',
      () => access(gateway, token),
      (r) => r.status !== 503,
    );
    expect(thawed.status).toBe(200);
  });
});

describe('platform switch across gateway processes', () => {
  it('a change made through one gateway reaches another gateway process by itself (its cache is at most 1 s old)', async () => {
    const nats = await startNats();
    const key = await testKey('ES256');
    const processes: ProgramProcess[] = [];
    try {
      processes.push(
        await startProgram('identity-admission', {
          NATS_URL: nats.url,
          DATABASE_URL: await createTestDatabase(),
          DEVELOPER_JWKS: jwks(key),
          DEVELOPER_JWT_ISSUER: ISSUER,
          DEVELOPER_JWT_AUDIENCE: AUDIENCE,
        }),
      );
      const [one, two] = await Promise.all(
        [1, 2].map(() => startProgram('gateway', { NATS_URL: nats.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN })),
      );
      processes.push(one!, two!);
      const operator = (enabled: boolean) =>
        api(one!.url, 'PUT', '/api/admin/v1/platform', { token: TEST_ADMIN_TOKEN, body: { enabled } });
      // A gateway just started may answer its very first request 503 while its first platform-state call is slow (a
      // loaded machine: CI's parallel suites); what matters here is the state it then serves: enabled.
      const first = await waitUntil(
        'the second gateway answers',
        () => access(two!),
        (r) => r.status !== 503,
      );
      expect(first.body).toEqual(errorBody('UNAUTHORIZED'));

      expect((await operator(false)).body).toEqual({ data: { enabled: false } });
      expect((await access(one!)).body).toEqual(errorBody('PLATFORM_DISABLED'));
      const off = await waitUntil(
        'the second gateway sees the switch',
        () => access(two!),
        (r) => r.status === 503,
      );
      expect(off.body).toEqual(errorBody('PLATFORM_DISABLED'));

      expect((await operator(true)).body).toEqual({ data: { enabled: true } });
      const on = await waitUntil(
        'the second gateway sees it again',
        () => access(two!),
        (r) => r.status !== 503,
      );
      expect(on.body).toEqual(errorBody('UNAUTHORIZED'));
    } finally {
      for (const program of processes.reverse()) await program.stop();
      await nats.stop();
    }
  }, 120_000);
});

describe('identity database refusing connections (all-in-one process on real PostgreSQL and NATS)', () => {
  let system: TestSystem;
  let databaseName: string;
  const setConnections = async (allowed: boolean) => {
    await sql(testServerUrl(), `alter database ${databaseName} allow_connections ${allowed}`);
    if (!allowed) {
      await sql(testServerUrl(), 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
        databaseName,
      ]);
    }
  };

  beforeAll(async () => {
    system = await startTestSystem();
    databaseName = new URL(system.databaseUrl as string).pathname.slice(1);
  });
  afterAll(async () => {
    await setConnections(true);
    await system?.stop();
  });

  it('answers 503 AUTH_UNAVAILABLE on /access and ACCOUNT_STATUS_UNAVAILABLE on native admission, then recovers', async () => {
    const developer = await invitedDeveloper(system);
    const session = await nativeToken(system);
    const nativeCall = () =>
      system.running.transport
        .call(
          identityOps.admitNative,
          { authorization: `Bearer ${session.token}`, country: 'DE', build: '1', capabilities: '' },
          { requestId: randomUUID() },
        )
        .then(
          () => ({ status: 200, code: 'admitted' }),
          (error: unknown) => {
            if (error instanceof AppError) return { status: error.status, code: error.code };
            throw error;
          },
        );
    expect((await access(system, developer.token)).status).toBe(200);

    await setConnections(false);
    try {
      for (let i = 0; i < 3; i++) {
        const down = await access(system, developer.token);
        expect(down.status).toBe(503);
        expect(down.body).toEqual(errorBody('AUTH_UNAVAILABLE'));
      }
      expect(await nativeCall()).toEqual({ status: 503, code: 'ACCOUNT_STATUS_UNAVAILABLE' });
      const operator = await admin(system, 'POST', '/invitations', { email: 'during-outage@example.com' });
      expect(operator.status).toBe(503);
    } finally {
      await setConnections(true);
    }

    const back = await waitUntil(
      'the database is back',
      () => access(system, developer.token),
      (r) => r.status !== 503,
    );
    expect(back.status).toBe(200);
    // Native: off mode is not set here, so enforce still denies on the device; the account step is answered again.
    expect(await nativeCall()).toEqual({ status: 403, code: 'DEVICE_VERIFICATION_REQUIRED' });
    expect((await access(system, await developerToken(system, 'nobody@example.com'))).body).toEqual(
      errorBody('DEVELOPER_INVITATION_REQUIRED'),
    );
  });
});
