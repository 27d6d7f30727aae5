// Native admission in front of inspect and approve (CONTRACT sections 5 and 6), over HTTP with real identity-admission
// on NATS: all five checks, first failure wins, and all of them before the link token is looked at. A denied
// request never consumes, inspects or validates the token: the same request with a good session then succeeds.
import { sql } from '../../support/database.ts';
import { admin, api, nativeToken, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  APPROVE,
  expectData,
  expectError,
  type Game,
  gameWithKeys,
  INSPECT,
  intent,
  intentRows,
  NATIVE_CLIENT,
  native,
  nativeSession,
} from './helpers.ts';

const ROUTES = [INSPECT, APPROVE];

describe('native admission before the link token (enforce, NATIVE_MIN_BUILD=100, SUPPORTED_COUNTRIES=DE,FR)', () => {
  let system: TestSystem;
  let game: Game;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { NATIVE_ADMISSION_MODE: 'enforce', NATIVE_MIN_BUILD: '100', SUPPORTED_COUNTRIES: 'DE,FR' },
    });
    game = await gameWithKeys(system);
  });
  afterAll(async () => {
    await system?.stop();
  });

  /** Bodies whose token the ledger would refuse or the edge would reject: admission must answer first. */
  const badBodies = async () => {
    const used = await intent(system, game);
    expectData(
      await native(system, APPROVE, await nativeSession(system), { linkToken: used.linkToken }),
      'LinkApproval',
    );
    return [
      { linkToken: used.linkToken }, // 409 invalid_link if looked at
      { linkToken: `cr_link_sandbox_${'Z'.repeat(43)}` }, // 404 invalid_link
      { linkToken: 'short' }, // 400 invalid_link
      { nope: 1 }, // 400 invalid_link
    ];
  };

  it('a session that passes all five checks inspects and approves', async () => {
    const created = await intent(system, game);
    const session = await nativeSession(system);
    expectData(await native(system, INSPECT, session, { linkToken: created.linkToken }), 'LinkInspection');
    expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
  });

  it('1. 401 UNAUTHORIZED without a session, 401 INVALID_TOKEN for a bad one, 401 INVALID_TOKEN_PAYLOAD for a bad sub', async () => {
    const created = await intent(system, game);
    const badSub = await nativeToken(system, { sub: 'not-a-uuid' });
    for (const path of ROUTES) {
      for (const body of [{ linkToken: created.linkToken }, ...(await badBodies())]) {
        expectError(await api(system.url, 'POST', path, { headers: { ...NATIVE_CLIENT }, body }), 401, 'UNAUTHORIZED', {
          extra: true,
        });
        expectError(
          await native(system, path, { token: 'not.a.jwt', headers: { ...NATIVE_CLIENT } }, body),
          401,
          'INVALID_TOKEN',
          { extra: true },
        );
        expectError(
          await native(system, path, { token: badSub.token, headers: { ...NATIVE_CLIENT } }, body),
          401,
          'INVALID_TOKEN_PAYLOAD',
          { extra: true },
        );
      }
    }
    expect((await intentRows(system, created.playerId))[0].consumed_at).toBeNull();
  });

  it('2. 403 GEO_BLOCKED for a missing or unsupported country, before the token and before the account exists', async () => {
    const created = await intent(system, game);
    const session = await nativeToken(system);
    for (const path of ROUTES) {
      for (const country of [undefined, 'US', 'XX']) {
        const headers: Record<string, string> = { ...NATIVE_CLIENT };
        if (country) headers['X-Client-Country'] = country;
        else delete headers['X-Client-Country'];
        for (const body of [{ linkToken: created.linkToken }, ...(await badBodies())]) {
          expectError(await native(system, path, { token: session.token, headers }, body), 403, 'GEO_BLOCKED', {
            extra: true,
          });
        }
        // A body that is not even JSON: still GEO_BLOCKED.
        expectError(
          await api(system.url, 'POST', path, {
            token: session.token,
            headers: { ...headers, 'Content-Type': 'text/plain' },
            rawBody: 'x',
          }),
          403,
          'GEO_BLOCKED',
          { extra: true },
        );
      }
    }
    const accounts = await sql(
      system.databaseUrl!,
      'select 1 from identity.native_accounts where credits_user_id = $1',
      [session.sub],
    );
    expect(accounts).toHaveLength(0);
    expect((await intentRows(system, created.playerId))[0].consumed_at).toBeNull();
  });

  it('3. 403 ACCOUNT_DISABLED for a disabled account', async () => {
    const created = await intent(system, game);
    const session = await nativeSession(system);
    expect((await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'disabled' })).status).toBe(200);
    for (const path of ROUTES) {
      for (const body of [{ linkToken: created.linkToken }, ...(await badBodies())]) {
        expectError(await native(system, path, session, body), 403, 'ACCOUNT_DISABLED', { extra: true });
      }
    }
    expect((await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'active' })).status).toBe(200);
    expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
  });

  it('4. 403 CLIENT_UPDATE_REQUIRED with minBuild for a missing or old build', async () => {
    const created = await intent(system, game);
    const session = await nativeSession(system);
    for (const path of ROUTES) {
      for (const build of [undefined, '99', 'abc']) {
        const headers: Record<string, string> = { ...NATIVE_CLIENT };
        if (build) headers['X-Client-Build'] = build;
        else delete headers['X-Client-Build'];
        const answer = await native(system, path, { token: session.token, headers }, { linkToken: created.linkToken });
        expectError(answer, 403, 'CLIENT_UPDATE_REQUIRED', { extra: true });
        expect(answer.body.error.minBuild).toBe(100);
      }
    }
    expect((await intentRows(system, created.playerId))[0].consumed_at).toBeNull();
  });

  it('5. 403 DEVICE_VERIFICATION_REQUIRED without challenge-v1 or a permit; 409 DEVICE_ACCOUNT_CONFLICT for another account`s permit', async () => {
    const created = await intent(system, game);
    const withoutPermit = await nativeToken(system);
    const permitted = await nativeSession(system);
    const stolen = await nativeToken(system, { sid: permitted.sid }); // same sid, another account
    for (const path of ROUTES) {
      for (const body of [{ linkToken: created.linkToken }, ...(await badBodies())]) {
        expectError(
          await native(system, path, { token: withoutPermit.token, headers: { ...NATIVE_CLIENT } }, body),
          403,
          'DEVICE_VERIFICATION_REQUIRED',
          { extra: true },
        );
        expectError(
          await native(
            system,
            path,
            { token: permitted.token, headers: { ...NATIVE_CLIENT, 'X-Client-Capabilities': 'other' } },
            body,
          ),
          403,
          'DEVICE_VERIFICATION_REQUIRED',
          { extra: true },
        );
        expectError(
          await native(system, path, { token: stolen.token, headers: { ...NATIVE_CLIENT } }, body),
          409,
          'DEVICE_ACCOUNT_CONFLICT',
          { extra: true },
        );
      }
    }
    expect((await intentRows(system, created.playerId))[0].consumed_at).toBeNull();
  });

  it('the first failing check wins: a bad token beats the country, the country beats a disabled account', async () => {
    const created = await intent(system, game);
    const geoAndToken = await api(system.url, 'POST', APPROVE, {
      token: 'not.a.jwt',
      headers: { ...NATIVE_CLIENT, 'X-Client-Country': 'US' },
      body: { linkToken: created.linkToken },
    });
    expectError(geoAndToken, 401, 'INVALID_TOKEN', { extra: true });
    const session = await nativeSession(system);
    await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'disabled' });
    expectError(
      await native(
        system,
        APPROVE,
        { token: session.token, headers: { ...NATIVE_CLIENT, 'X-Client-Country': 'US' } },
        {
          linkToken: created.linkToken,
        },
      ),
      403,
      'GEO_BLOCKED',
      { extra: true },
    );
  });

  describe('after admission: the body (content type, size, JSON, schema)', () => {
    it('415, 413, 400 INVALID_REQUEST, then 400 invalid_link for a malformed linkToken or an unknown field', async () => {
      const session = await nativeSession(system);
      for (const path of ROUTES) {
        const raw = (rawBody: string, type = 'application/json') =>
          api(system.url, 'POST', path, {
            token: session.token,
            headers: { ...session.headers, 'Content-Type': type },
            rawBody,
          });
        expectError(await raw('{"linkToken":"x"}', 'text/plain'), 415, 'INVALID_CONTENT_TYPE');
        expectError(await raw(`{"linkToken":"${'x'.repeat(17_000)}"}`), 413, 'PAYLOAD_TOO_LARGE');
        expectError(await raw('{'), 400, 'INVALID_REQUEST');
        const bodies: unknown[] = [
          {},
          [],
          null,
          { linkToken: 42 },
          { linkToken: 'x'.repeat(31) },
          { linkToken: 'x'.repeat(201) },
          { linkToken: `cr_link_sandbox_${'a'.repeat(43)}`, extra: 1 },
        ];
        for (const body of bodies) {
          const answer = await native(system, path, session, body);
          expect({ path, body, status: answer.status, code: answer.body?.error?.code }).toEqual({
            path,
            body,
            status: 400,
            code: 'invalid_link',
          });
        }
      }
    });
  });

  describe('modes', () => {
    let relaxed: TestSystem;
    let relaxedGame: Game;
    beforeAll(async () => {
      relaxed = await startTestSystem({ env: { NATIVE_ADMISSION_MODE: 'off' } });
      relaxedGame = await gameWithKeys(relaxed);
    });
    afterAll(async () => {
      await relaxed?.stop();
    });

    it('mode off: no permit or capability needed, but the country is still required (GEO_BLOCKED first)', async () => {
      const created = await intent(relaxed, relaxedGame);
      const session = await nativeToken(relaxed, { username: 'NoPermit' });
      expectError(
        await native(relaxed, APPROVE, { token: session.token, headers: {} }, { linkToken: created.linkToken }),
        403,
        'GEO_BLOCKED',
        { extra: true },
      );
      const approved = await native(
        relaxed,
        APPROVE,
        { token: session.token, headers: { 'X-Client-Country': 'JP' } },
        { linkToken: created.linkToken },
      );
      expect(expectData(approved, 'LinkApproval').playerId).toBe(created.playerId);
    });
  });
});
