// Native admission (CONTRACT section 5): the AdmitNative operation of a real identity-admission, called over real
// NATS through the system's transport exactly as the links service calls it, on real PostgreSQL; every denial with
// its status and code, the order of the five checks, accounts on first sight, device permits, the three modes.
// The edge helper that reads the headers is exercised over HTTP at the end.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import { createHttpApp } from '#runtime/http/app.ts';
import { DEV_ISSUER, devAudience } from '#runtime/identity/dev-identity-provider.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { admitNative as admitNativeAtEdge } from '../../../services/links/src/routes/native-session.ts';
import { sql } from '../../support/database.ts';
import { startNats } from '../../support/servers.ts';
import { admin, api, developerToken, nativeToken, startTestSystem, type TestSystem } from '../../support/system.ts';
import { devKey, errorBody, hs256WithPublicKey, nowSeconds, sign, unsecuredToken } from './support.ts';

/**
 * Makes one identity table fail the way a failing store does (SQLSTATE 57P03, "cannot connect now", which
 * db/failures.ts classifies as unavailable): the table is moved aside, a view of the same name raises when read, and
 * the table raises when written.
 */
async function storeDown(url: string, table: 'native_accounts' | 'device_permits'): Promise<void> {
  const raise = `begin raise exception 'the store is down (test)' using errcode = '57P03'; end`;
  await sql(
    url,
    `create or replace function public.identity_store_down() returns boolean language plpgsql volatile as $$ ${raise} $$`,
  );
  await sql(
    url,
    `create or replace function public.identity_store_down_trigger() returns trigger language plpgsql as $$ ${raise} $$`,
  );
  await sql(url, `alter table identity.${table} rename to ${table}_away`);
  await sql(
    url,
    `create trigger store_down before insert or update on identity.${table}_away
     for each row execute function public.identity_store_down_trigger()`,
  );
  await sql(
    url,
    `create view identity.${table} as select * from identity.${table}_away where public.identity_store_down()`,
  );
}

async function storeBack(url: string, table: 'native_accounts' | 'device_permits'): Promise<void> {
  await sql(url, `drop view identity.${table}`);
  await sql(url, `drop trigger store_down on identity.${table}_away`);
  await sql(url, `alter table identity.${table}_away rename to ${table}`);
}

interface NativeHeaders {
  authorization?: string;
  country?: string;
  build?: string;
  capabilities?: string;
}

type Outcome =
  | { admitted: { creditsUserId: string; sessionId: string; username?: string | undefined } }
  | { status: number; code: string; extra?: Record<string, unknown> | undefined };

/** One AdmitNative call over NATS; a denial becomes { status, code, extra }. */
async function admit(transport: Transport, request: NativeHeaders): Promise<Outcome> {
  try {
    const reply = await transport.call(
      identityOps.admitNative,
      {
        authorization: request.authorization ?? '',
        country: request.country ?? '',
        build: request.build ?? '',
        capabilities: request.capabilities ?? '',
      },
      { requestId: randomUUID() },
    );
    const { creditsUserId, sessionId, username } = reply.principal!;
    return { admitted: { creditsUserId, sessionId, ...(username === undefined ? {} : { username }) } };
  } catch (error) {
    if (error instanceof AppError) {
      return { status: error.status, code: error.code, ...(error.extra ? { extra: error.extra } : {}) };
    }
    throw error;
  }
}

const denied = (status: number, code: string, extra?: Record<string, unknown>) => ({
  status,
  code,
  ...(extra ? { extra } : {}),
});

async function accountRow(system: TestSystem, creditsUserId: string) {
  const rows = await sql(
    system.databaseUrl as string,
    'select status, username from identity.native_accounts where credits_user_id = $1',
    [creditsUserId],
  );
  return rows[0];
}

async function permit(system: TestSystem, sessionId: string, creditsUserId: string, expiresInSeconds = 600) {
  const response = await admin(system, 'POST', '/device-permits', { sessionId, creditsUserId, expiresInSeconds });
  expect(response.status).toBe(200);
  return response.body.data;
}

async function metric(system: TestSystem, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${system.url}/metrics`)).text();
  const line = text.split('\n').find((l) => pattern.test(l));
  return line ? Number(line.split(' ').pop()) : 0;
}

const GOOD = { country: 'DE', build: '100', capabilities: 'challenge-v1' };

describe('native admission, mode enforce (NATIVE_MIN_BUILD=100, SUPPORTED_COUNTRIES=DE,FR)', () => {
  let system: TestSystem;
  let transport: Transport;
  let key: Awaited<ReturnType<typeof devKey>>;
  const bearer = (jwt: string) => `Bearer ${jwt}`;
  /** A session whose device permit exists: passes every check. */
  const permitted = async (options: { username?: string } = {}) => {
    const session = await nativeToken(system, options);
    await permit(system, session.sid, session.sub);
    return session;
  };
  const rawToken = (claims: Record<string, unknown>, options: { exp?: number; audience?: string } = {}) =>
    sign(key, claims, { issuer: DEV_ISSUER, audience: options.audience ?? devAudience('native'), exp: options.exp });

  beforeAll(async () => {
    system = await startTestSystem({
      env: { NATIVE_ADMISSION_MODE: 'enforce', NATIVE_MIN_BUILD: '100', SUPPORTED_COUNTRIES: 'DE,fr' },
    });
    transport = system.running.transport;
    await nativeToken(system); // creates the local provider's native key under DATA_DIR
    key = await devKey(system, 'native');
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('admits a session that passes all five checks: creditsUserId = sub, sessionId = sid, the account username', async () => {
    const session = await permitted({ username: 'Ada' });
    expect(await admit(transport, { authorization: bearer(session.token), ...GOOD })).toEqual({
      admitted: { creditsUserId: session.sub, sessionId: session.sid, username: 'Ada' },
    });
  });

  describe('1. session token', () => {
    it('401 UNAUTHORIZED without an Authorization header or a bearer token', async () => {
      for (const authorization of ['', 'Basic dXNlcjpwYXNz', 'Bearer']) {
        expect({ authorization, outcome: await admit(transport, { authorization, ...GOOD }) }).toEqual({
          authorization,
          outcome: denied(401, 'UNAUTHORIZED'),
        });
      }
    });

    it('401 INVALID_TOKEN: garbage, expired, wrong issuer or audience, a developer token, alg none, HS256 forgery', async () => {
      const sub = randomUUID();
      const claims = { sub, sid: 'sid-1' };
      const full = { ...claims, iss: DEV_ISSUER, aud: devAudience('native'), exp: nowSeconds() + 3600 };
      const tokens: Record<string, string> = {
        garbage: 'not.a.token',
        expired: await rawToken(claims, { exp: nowSeconds() - 60 }),
        issuer: await sign(key, claims, { issuer: 'https://other.example', audience: devAudience('native') }),
        audience: await rawToken(claims, { audience: 'sandbox-rewards-developer' }),
        developerToken: await developerToken(system, 'dev@example.com', { sub }),
        none: unsecuredToken(full),
        hs256: hs256WithPublicKey(key, full),
      };
      for (const [name, jwt] of Object.entries(tokens)) {
        expect({ name, outcome: await admit(transport, { authorization: bearer(jwt), ...GOOD }) }).toEqual({
          name,
          outcome: denied(401, 'INVALID_TOKEN'),
        });
      }
    });

    it('401 INVALID_TOKEN_PAYLOAD: sub not a UUID or missing, sid missing, empty or not a string', async () => {
      const payloads: Array<Record<string, unknown>> = [
        { sub: 'player-7', sid: 'sid-1' },
        { sub: '123e4567-e89b-02d3-a456-426614174000', sid: 'sid-1' }, // version nibble 0: not a UUID by the spec
        { sid: 'sid-1' },
        { sub: randomUUID() },
        { sub: randomUUID(), sid: '' },
        { sub: randomUUID(), sid: 42 },
        { sub: randomUUID(), sid: 's'.repeat(201) },
      ];
      for (const claims of payloads) {
        const jwt = await rawToken(claims);
        expect({ claims, outcome: await admit(transport, { authorization: bearer(jwt), ...GOOD }) }).toEqual({
          claims,
          outcome: denied(401, 'INVALID_TOKEN_PAYLOAD'),
        });
      }
    });
  });

  describe('2. country', () => {
    it('403 GEO_BLOCKED when X-Client-Country is missing, malformed or not supported, before the account exists', async () => {
      const session = await nativeToken(system);
      for (const country of ['', 'US', 'DEU', 'D', '*', 'de,fr']) {
        expect({
          country,
          outcome: await admit(transport, { ...GOOD, authorization: bearer(session.token), country }),
        }).toEqual({ country, outcome: denied(403, 'GEO_BLOCKED') });
      }
      expect(await accountRow(system, session.sub)).toBeUndefined();
    });

    it('accepts supported countries in any case', async () => {
      const session = await permitted();
      for (const country of ['DE', 'de', 'FR', 'fr']) {
        const outcome = await admit(transport, { ...GOOD, authorization: bearer(session.token), country });
        expect({ country, outcome }).toEqual({ country, outcome: { admitted: expect.any(Object) } });
      }
    });
  });

  describe('3. account', () => {
    it('creates the account active on first sight of a valid session, with preferred_username', async () => {
      const session = await nativeToken(system, { username: 'First Sight' });
      expect(await accountRow(system, session.sub)).toBeUndefined();
      // Denied later (no permit), but the account step already ran.
      expect(await admit(transport, { ...GOOD, authorization: bearer(session.token) })).toEqual(
        denied(403, 'DEVICE_VERIFICATION_REQUIRED'),
      );
      expect(await accountRow(system, session.sub)).toEqual({ status: 'active', username: 'First Sight' });
    });

    it('403 ACCOUNT_DISABLED for a disabled account; admitted again once re-enabled', async () => {
      const session = await permitted();
      const authorization = bearer(session.token);
      await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'disabled' });
      expect(await admit(transport, { ...GOOD, authorization })).toEqual(denied(403, 'ACCOUNT_DISABLED'));
      await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'active', username: 'Renamed' });
      expect(await admit(transport, { ...GOOD, authorization })).toEqual({
        admitted: { creditsUserId: session.sub, sessionId: session.sid, username: 'Renamed' },
      });
    });

    it('an account disabled by the operator before its first session stays disabled', async () => {
      const session = await permitted();
      await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'disabled' });
      expect(await admit(transport, { ...GOOD, authorization: bearer(session.token) })).toEqual(
        denied(403, 'ACCOUNT_DISABLED'),
      );
    });

    it('503 ACCOUNT_STATUS_UNAVAILABLE when the account store fails', async () => {
      const session = await permitted();
      await storeDown(system.databaseUrl as string, 'native_accounts');
      try {
        expect(await admit(transport, { ...GOOD, authorization: bearer(session.token) })).toEqual(
          denied(503, 'ACCOUNT_STATUS_UNAVAILABLE'),
        );
      } finally {
        await storeBack(system.databaseUrl as string, 'native_accounts');
      }
      expect(await admit(transport, { ...GOOD, authorization: bearer(session.token) })).toEqual({
        admitted: expect.any(Object),
      });
    });
  });

  describe('4. client build', () => {
    it('403 CLIENT_UPDATE_REQUIRED with minBuild (a JSON number) when the build is missing, malformed or too old', async () => {
      const session = await permitted();
      for (const build of ['', '99', '0', 'abc', '-100', '100.5', '1e3', '99999999999']) {
        expect({
          build,
          outcome: await admit(transport, { ...GOOD, authorization: bearer(session.token), build }),
        }).toEqual({
          build,
          outcome: denied(403, 'CLIENT_UPDATE_REQUIRED', { minBuild: 100 }),
        });
      }
      for (const build of ['100', '101', '2026112201']) {
        const outcome = await admit(transport, { ...GOOD, authorization: bearer(session.token), build });
        expect({ build, outcome }).toEqual({ build, outcome: { admitted: expect.any(Object) } });
      }
    });
  });

  describe('5. device (enforce)', () => {
    it('403 DEVICE_VERIFICATION_REQUIRED without the challenge-v1 capability, even with a permit', async () => {
      const session = await permitted();
      for (const capabilities of ['', 'challenge-v2', 'challenge-v1x', 'CHALLENGE-V1', 'foo;challenge-v1']) {
        expect({
          capabilities,
          outcome: await admit(transport, { ...GOOD, authorization: bearer(session.token), capabilities }),
        }).toEqual({ capabilities, outcome: denied(403, 'DEVICE_VERIFICATION_REQUIRED') });
      }
      const listed = await admit(transport, {
        ...GOOD,
        authorization: bearer(session.token),
        capabilities: 'push, challenge-v1 ,biometrics',
      });
      expect(listed).toEqual({ admitted: expect.any(Object) });
    });

    it('403 DEVICE_VERIFICATION_REQUIRED without an unexpired permit for this sid', async () => {
      const session = await nativeToken(system);
      const authorization = bearer(session.token);
      expect(await admit(transport, { ...GOOD, authorization })).toEqual(denied(403, 'DEVICE_VERIFICATION_REQUIRED'));
      // A permit of the same account for another session does not count.
      await permit(system, `other-${session.sid}`, session.sub);
      expect(await admit(transport, { ...GOOD, authorization })).toEqual(denied(403, 'DEVICE_VERIFICATION_REQUIRED'));
      // An expired permit for this session does not count either.
      const old = await permit(system, session.sid, session.sub);
      await sql(
        system.databaseUrl as string,
        `update identity.device_permits set created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour'
          where id = $1`,
        [old.id],
      );
      expect(await admit(transport, { ...GOOD, authorization })).toEqual(denied(403, 'DEVICE_VERIFICATION_REQUIRED'));
      await permit(system, session.sid, session.sub, 60);
      expect(await admit(transport, { ...GOOD, authorization })).toEqual({
        admitted: { creditsUserId: session.sub, sessionId: session.sid },
      });
    });

    it('409 DEVICE_ACCOUNT_CONFLICT when the live permit of this sid belongs to another account', async () => {
      const owner = await permitted();
      const intruder = await nativeToken(system, { sid: owner.sid });
      expect(await admit(transport, { ...GOOD, authorization: bearer(intruder.token) })).toEqual(
        denied(409, 'DEVICE_ACCOUNT_CONFLICT'),
      );
      expect(await admit(transport, { ...GOOD, authorization: bearer(owner.token) })).toEqual({
        admitted: expect.any(Object),
      });
    });

    it('503 DEVICE_AUTH_UNAVAILABLE when the permit store fails', async () => {
      const session = await permitted();
      await storeDown(system.databaseUrl as string, 'device_permits');
      try {
        expect(await admit(transport, { ...GOOD, authorization: bearer(session.token) })).toEqual(
          denied(503, 'DEVICE_AUTH_UNAVAILABLE'),
        );
      } finally {
        await storeBack(system.databaseUrl as string, 'device_permits');
      }
    });

    it('counts enforced device denials', async () => {
      const before = await metric(
        system,
        /^native_admission_device_denials_total\{code="DEVICE_VERIFICATION_REQUIRED",enforced="true"\}/,
      );
      const session = await nativeToken(system);
      await admit(transport, { ...GOOD, authorization: bearer(session.token) });
      expect(
        await metric(
          system,
          /^native_admission_device_denials_total\{code="DEVICE_VERIFICATION_REQUIRED",enforced="true"\}/,
        ),
      ).toBe(before + 1);
    });
  });

  describe('the order of the checks: first failure wins', () => {
    it('walks a request failing every check through the codes one fix at a time', async () => {
      const sid = `sid-${randomUUID()}`;
      const sub = randomUUID();
      // Another account holds the live permit of this sid (step 5 would answer 409).
      await permit(system, sid, randomUUID());
      const bad = { country: 'US', build: '1', capabilities: '' };
      const badPayload = await rawToken({ sub: 'not-a-uuid', sid });
      expect(await admit(transport, { authorization: '', ...bad })).toEqual(denied(401, 'UNAUTHORIZED'));
      expect(await admit(transport, { authorization: 'Bearer x.y.z', ...bad })).toEqual(denied(401, 'INVALID_TOKEN'));
      expect(await admit(transport, { authorization: bearer(badPayload), ...bad })).toEqual(
        denied(401, 'INVALID_TOKEN_PAYLOAD'),
      );
      const session = await nativeToken(system, { sub, sid });
      const authorization = bearer(session.token);
      expect(await admit(transport, { authorization, ...bad })).toEqual(denied(403, 'GEO_BLOCKED'));
      await admin(system, 'PUT', `/native-accounts/${sub}`, { status: 'disabled' });
      expect(await admit(transport, { authorization, ...bad, country: 'FR' })).toEqual(denied(403, 'ACCOUNT_DISABLED'));
      await admin(system, 'PUT', `/native-accounts/${sub}`, { status: 'active' });
      expect(await admit(transport, { authorization, ...bad, country: 'FR' })).toEqual(
        denied(403, 'CLIENT_UPDATE_REQUIRED', { minBuild: 100 }),
      );
      expect(await admit(transport, { authorization, ...bad, country: 'FR', build: '100' })).toEqual(
        denied(403, 'DEVICE_VERIFICATION_REQUIRED'),
      );
      expect(
        await admit(transport, { authorization, country: 'FR', build: '100', capabilities: 'challenge-v1' }),
      ).toEqual(denied(409, 'DEVICE_ACCOUNT_CONFLICT'));
      await permit(system, sid, sub);
      expect(
        await admit(transport, { authorization, country: 'FR', build: '100', capabilities: 'challenge-v1' }),
      ).toEqual({
        admitted: { creditsUserId: sub, sessionId: sid },
      });
    });
  });
});

describe('native admission, mode monitor', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({
      env: { NATIVE_ADMISSION_MODE: 'monitor', NATIVE_MIN_BUILD: '7', SUPPORTED_COUNTRIES: 'DE' },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('evaluates the device check and counts what it would deny, but never denies on it', async () => {
    const transport = system.running.transport;
    const pattern = (code: string) =>
      new RegExp(`^native_admission_device_denials_total\\{code="${code}",enforced="false"\\}`);
    const noPermit = await nativeToken(system);
    expect(await admit(transport, { authorization: `Bearer ${noPermit.token}`, country: 'DE', build: '7' })).toEqual({
      admitted: { creditsUserId: noPermit.sub, sessionId: noPermit.sid },
    });
    expect(await metric(system, pattern('DEVICE_VERIFICATION_REQUIRED'))).toBe(1);

    const owner = await nativeToken(system);
    await permit(system, owner.sid, owner.sub);
    const intruder = await nativeToken(system, { sid: owner.sid });
    expect(
      await admit(transport, {
        authorization: `Bearer ${intruder.token}`,
        country: 'DE',
        build: '7',
        capabilities: 'challenge-v1',
      }),
    ).toEqual({ admitted: { creditsUserId: intruder.sub, sessionId: owner.sid } });
    expect(await metric(system, pattern('DEVICE_ACCOUNT_CONFLICT'))).toBe(1);

    await storeDown(system.databaseUrl as string, 'device_permits');
    try {
      expect(
        await admit(transport, {
          authorization: `Bearer ${owner.token}`,
          country: 'DE',
          build: '7',
          capabilities: 'challenge-v1',
        }),
      ).toEqual({ admitted: expect.any(Object) });
      expect(await metric(system, pattern('DEVICE_AUTH_UNAVAILABLE'))).toBe(1);
    } finally {
      await storeBack(system.databaseUrl as string, 'device_permits');
    }
  });

  it('still denies on steps 1 to 4', async () => {
    const transport = system.running.transport;
    const session = await nativeToken(system);
    const authorization = `Bearer ${session.token}`;
    expect(await admit(transport, { authorization: '' })).toEqual(denied(401, 'UNAUTHORIZED'));
    expect(await admit(transport, { authorization, country: 'FR', build: '7' })).toEqual(denied(403, 'GEO_BLOCKED'));
    expect(await admit(transport, { authorization, country: 'DE', build: '6' })).toEqual(
      denied(403, 'CLIENT_UPDATE_REQUIRED', { minBuild: 7 }),
    );
    await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'disabled' });
    expect(await admit(transport, { authorization, country: 'DE', build: '7' })).toEqual(
      denied(403, 'ACCOUNT_DISABLED'),
    );
  });
});

describe('native admission, mode off, every country, no minimum build', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ env: { NATIVE_ADMISSION_MODE: 'off' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('skips the device check entirely and needs no build; a country is still required', async () => {
    const transport = system.running.transport;
    const owner = await nativeToken(system);
    await permit(system, owner.sid, owner.sub);
    const intruder = await nativeToken(system, { sid: owner.sid, username: 'Intruder' });
    for (const country of ['US', 'jp', 'DE']) {
      expect(await admit(transport, { authorization: `Bearer ${intruder.token}`, country })).toEqual({
        admitted: { creditsUserId: intruder.sub, sessionId: owner.sid, username: 'Intruder' },
      });
    }
    expect(await admit(transport, { authorization: `Bearer ${intruder.token}` })).toEqual(denied(403, 'GEO_BLOCKED'));
    expect(await admit(transport, { authorization: `Bearer ${intruder.token}`, country: 'USA' })).toEqual(
      denied(403, 'GEO_BLOCKED'),
    );
    expect(await metric(system, /^native_admission_device_denials_total\{/)).toBe(0);
  });
});

describe('the edge helper admitNative(transport, ctx) over HTTP', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ env: { NATIVE_MIN_BUILD: '5', SUPPORTED_COUNTRIES: 'DE' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  /** A minimal edge: one route that admits the native session and echoes the principal. */
  async function edge(transport: Transport) {
    const logger = pino({ level: 'silent' });
    const app = createHttpApp({
      program: 'links',
      logger,
      metrics: createMetrics(),
      readiness: async () => ({}),
      routes: [
        (router) =>
          router.post('/native-echo', async (ctx) => {
            const principal = await admitNativeAtEdge(transport, ctx);
            ctx.body = { data: { creditsUserId: principal.creditsUserId, sessionId: principal.sessionId } };
          }),
      ],
    });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => server.close(resolve)),
    };
  }

  it('passes Authorization, X-Client-Country, X-Client-Build and X-Client-Capabilities; denials keep minBuild', async () => {
    const http = await edge(system.running.transport);
    try {
      const session = await nativeToken(system);
      await permit(system, session.sid, session.sub);
      const headers = { 'X-Client-Country': 'de', 'X-Client-Build': '5', 'X-Client-Capabilities': 'challenge-v1' };
      const ok = await api(http.url, 'POST', '/native-echo', { token: session.token, headers });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ data: { creditsUserId: session.sub, sessionId: session.sid } });

      const old = await api(http.url, 'POST', '/native-echo', {
        token: session.token,
        headers: { ...headers, 'X-Client-Build': '4' },
      });
      expect(old.status).toBe(403);
      expect(old.body).toEqual({ error: { code: 'CLIENT_UPDATE_REQUIRED', message: expect.any(String), minBuild: 5 } });

      const noToken = await api(http.url, 'POST', '/native-echo', { headers });
      expect(noToken.status).toBe(401);
      expect(noToken.body).toEqual(errorBody('UNAUTHORIZED'));
    } finally {
      await http.close();
    }
  });

  it('answers 503 ACCOUNT_STATUS_UNAVAILABLE when identity-admission cannot be reached', async () => {
    const emptyNats = await startNats();
    const logger = pino({ level: 'silent' });
    const transport = await NatsTransport.connect({
      url: emptyNats.url,
      connectionName: 'edge-test',
      requestTimeoutMs: 500,
      logger,
      metrics: createMetrics(),
    });
    const http = await edge(transport);
    try {
      const session = await nativeToken(system);
      const response = await api(http.url, 'POST', '/native-echo', {
        token: session.token,
        headers: { 'X-Client-Country': 'DE', 'X-Client-Build': '5' },
      });
      expect(response.status).toBe(503);
      expect(response.body).toEqual(errorBody('ACCOUNT_STATUS_UNAVAILABLE'));
      expect(response.headers.get('retry-after')).toBe('1');
    } finally {
      await http.close();
      await transport.close();
      await emptyNats.stop();
    }
  }, 120_000);
});
