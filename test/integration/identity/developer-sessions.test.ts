// CONTRACT section 4 over HTTP, on real PostgreSQL and NATS, with npm start's local development identity provider:
// every denial with its status and code, the order of the checks, invitation binding, Cache-Control.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { identityOps } from '#runtime/contracts/operations.ts';
import { DEV_ISSUER, devAudience } from '#runtime/identity/dev-identity-provider.ts';
import { sql } from '../../support/database.ts';
import { admin, developerToken, startTestSystem, type TestSystem } from '../../support/system.ts';
import { access, devKey, errorBody, hs256WithPublicKey, nowSeconds, sign, unsecuredToken } from './support.ts';

const CONSOLE_ORIGIN = 'https://console.example.com';

describe('developer sessions (CONTRACT section 4)', () => {
  let system: TestSystem;
  let key: Awaited<ReturnType<typeof devKey>>;
  const newEmail = () => `dev-${randomUUID().slice(0, 8)}@example.com`;
  /** A token of the trusted (development) provider with exactly these claims besides iss, aud, iat, exp. */
  const token = (
    claims: Record<string, unknown>,
    options: { exp?: number | null; issuer?: string; audience?: string } = {},
  ) => sign(key, claims, { issuer: DEV_ISSUER, audience: devAudience('developer'), ...options });
  const invite = async (email: string, body: Record<string, unknown> = {}) => {
    const response = await admin(system, 'POST', '/invitations', { email, ...body });
    expect(response.status).toBe(200);
    return response.body.data;
  };

  beforeAll(async () => {
    system = await startTestSystem({ env: { ALLOWED_ORIGINS: `${CONSOLE_ORIGIN},http://localhost:5173` } });
    await developerToken(system, 'warm-up@example.com'); // creates the provider's key under DATA_DIR
    key = await devKey(system, 'developer');
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('admits an invited developer: 200, the exact access shape, Cache-Control no-store', async () => {
    const email = newEmail();
    await invite(email);
    const response = await access(system, await developerToken(system, email));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { authorized: true, email, mode: 'sandbox' } });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  describe('1. token: 401 UNAUTHORIZED', () => {
    const claims = (email: string) => ({ sub: `sub-${randomUUID()}`, email, email_verified: true });

    it('no Authorization header, another scheme, an empty or garbage bearer token', async () => {
      const variants: Array<Record<string, string>> = [
        {},
        { Authorization: 'Basic dXNlcjpwYXNz' },
        { Authorization: 'Bearer' },
        { Authorization: 'Bearer not-a-jwt' },
        { Authorization: 'Bearer a.b.c' },
      ];
      for (const headers of variants) {
        const response = await access(system, undefined, headers);
        expect({ headers, status: response.status, body: response.body }).toEqual({
          headers,
          status: 401,
          body: errorBody('UNAUTHORIZED'),
        });
        expect(response.headers.get('cache-control')).toBe('no-store');
      }
    });

    it('expired beyond the clock tolerance, wrong issuer, wrong audience, missing exp', async () => {
      const email = newEmail();
      await invite(email);
      const tokens = {
        expired: await token(claims(email), { exp: nowSeconds() - 60 }),
        issuer: await token(claims(email), { issuer: 'https://someone-else.example' }),
        audience: await token(claims(email), { audience: 'another-service' }),
        noExp: await token(claims(email), { exp: null }),
      };
      for (const [name, jwt] of Object.entries(tokens)) {
        const response = await access(system, jwt);
        expect({ name, status: response.status, body: response.body }).toEqual({
          name,
          status: 401,
          body: errorBody('UNAUTHORIZED'),
        });
      }
    });

    it('accepts a token expired by less than the clock tolerance of a few seconds', async () => {
      const email = newEmail();
      await invite(email);
      const response = await access(system, await token(claims(email), { exp: nowSeconds() - 2 }));
      expect(response.status).toBe(200);
    });

    it('missing required claims sub, email or email_verified', async () => {
      const email = newEmail();
      await invite(email);
      for (const omitted of ['sub', 'email', 'email_verified']) {
        const partial: Record<string, unknown> = claims(email);
        delete partial[omitted];
        const response = await access(system, await token(partial));
        expect({ omitted, status: response.status, body: response.body }).toEqual({
          omitted,
          status: 401,
          body: errorBody('UNAUTHORIZED'),
        });
      }
    });

    it('refuses alg none and HS256 keyed with the public key, even for an invited, verified e-mail', async () => {
      const email = newEmail();
      await invite(email);
      const full = { ...claims(email), iss: DEV_ISSUER, aud: devAudience('developer'), exp: nowSeconds() + 3600 };
      for (const jwt of [unsecuredToken(full), hs256WithPublicKey(key, full)]) {
        const response = await access(system, jwt);
        expect(response.status).toBe(401);
        expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
      }
    });
  });

  describe('2. Origin: 403 INVALID_SESSION_ORIGIN', () => {
    it('refuses an Origin not in ALLOWED_ORIGINS; admits listed ones and requests without Origin', async () => {
      const email = newEmail();
      await invite(email);
      const jwt = await developerToken(system, email);
      for (const origin of [
        'https://evil.example',
        'null',
        'https://console.example.com:8443',
        'http://console.example.com',
      ]) {
        const response = await access(system, jwt, { Origin: origin });
        expect({ origin, status: response.status, body: response.body }).toEqual({
          origin,
          status: 403,
          body: errorBody('INVALID_SESSION_ORIGIN'),
        });
      }
      for (const origin of [CONSOLE_ORIGIN, 'http://localhost:5173']) {
        expect((await access(system, jwt, { Origin: origin })).status).toBe(200);
      }
      expect((await access(system, jwt)).status).toBe(200);
    });
  });

  describe('CORS for the allowed origins', () => {
    it('allowed origins get Access-Control-Allow-Origin on answers and denials; others get none', async () => {
      const email = newEmail();
      await invite(email);
      const jwt = await developerToken(system, email);
      const ok = await access(system, jwt, { Origin: CONSOLE_ORIGIN });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
      expect(ok.headers.get('vary')).toMatch(/Origin/);
      const unauthorized = await access(system, 'garbage', { Origin: CONSOLE_ORIGIN });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
      const foreign = await access(system, jwt, { Origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      expect((await access(system, jwt)).headers.get('access-control-allow-origin')).toBeNull();
    });

    it('answers preflight requests of allowed origins (204) and refuses others (403 INVALID_SESSION_ORIGIN)', async () => {
      const preflight = (origin?: string) =>
        fetch(`${system.url}/api/developer/v1/access`, {
          method: 'OPTIONS',
          headers: {
            ...(origin ? { Origin: origin } : {}),
            'Access-Control-Request-Method': 'GET',
            'Access-Control-Request-Headers': 'authorization',
          },
        });
      const allowed = await preflight(CONSOLE_ORIGIN);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
      expect(allowed.headers.get('access-control-allow-methods')).toMatch(/GET/);
      expect(allowed.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      const refused = await preflight('https://evil.example');
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual(errorBody('INVALID_SESSION_ORIGIN'));
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('answers an OPTIONS without Origin like any OPTIONS: 200 with Allow, no CORS headers (CONTRACT section 10)', async () => {
      for (const [path, methods] of [
        ['/api/developer/v1/access', ['GET', 'HEAD', 'OPTIONS']],
        ['/api/developer/v1/console', ['GET', 'HEAD', 'OPTIONS', 'POST']],
        ['/api/developer/v1/records', ['GET', 'HEAD', 'OPTIONS']],
        ['/graphql', ['OPTIONS', 'POST']],
      ] as const) {
        const response = await fetch(`${system.url}${path}`, { method: 'OPTIONS' });
        expect({ path, status: response.status, allow: response.headers.get('allow')?.split(', ').sort() }).toEqual({
          path,
          status: 200,
          allow: methods,
        });
        expect(await response.text()).toBe('');
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
        expect(response.headers.get('access-control-allow-methods')).toBeNull();
      }
    });
  });

  describe('3. e-mail verification: 403 EMAIL_VERIFICATION_REQUIRED', () => {
    it('email_verified false, or anything but the boolean true', async () => {
      const email = newEmail();
      await invite(email);
      for (const verified of [false, 'true', 1, null]) {
        const response = await access(
          system,
          await token({ sub: `sub-${randomUUID()}`, email, email_verified: verified }),
        );
        expect({ verified, status: response.status, body: response.body }).toEqual({
          verified,
          status: 403,
          body: errorBody('EMAIL_VERIFICATION_REQUIRED'),
        });
      }
    });
  });

  describe('4. invitation: 403 DEVELOPER_INVITATION_REQUIRED', () => {
    it('refuses an e-mail that was never invited', async () => {
      const response = await access(system, await developerToken(system, newEmail()));
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody('DEVELOPER_INVITATION_REQUIRED'));
    });

    it('compares e-mails case-insensitively', async () => {
      const id = randomUUID().slice(0, 8);
      await invite(`Mixed.Case-${id}@Example.COM`);
      const response = await access(system, await developerToken(system, `mixed.case-${id}@example.com`));
      expect(response.status).toBe(200);
      expect(response.body.data.email).toBe(`mixed.case-${id}@example.com`);
    });

    it('binds the invitation to the first subject for good and refuses a second subject', async () => {
      const email = newEmail();
      const invitation = await invite(email);
      expect(invitation).toMatchObject({ status: 'active', identityUserId: null, boundAt: null });
      const first = await developerToken(system, email, { sub: 'idp|first' });
      const second = await developerToken(system, email, { sub: 'idp|second' });

      expect((await access(system, first)).status).toBe(200);
      const listed = (await admin(system, 'GET', '/invitations')).body.data.records.find(
        (r: { id: string }) => r.id === invitation.id,
      );
      expect(listed).toEqual({
        ...invitation,
        identityUserId: 'idp|first',
        boundAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });

      const refused = await access(system, second);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(errorBody('DEVELOPER_INVITATION_REQUIRED'));
      // The same subject keeps its access, also under another spelling of the e-mail.
      expect((await access(system, first)).status).toBe(200);
      expect(
        (await access(system, await developerToken(system, email.toUpperCase(), { sub: 'idp|first' }))).status,
      ).toBe(200);
    });

    it('binds exactly one subject when two first uses race', async () => {
      const email = newEmail();
      await invite(email);
      const tokens = await Promise.all(
        Array.from({ length: 8 }, (_, i) => developerToken(system, email, { sub: `idp|racer-${i}` })),
      );
      const statuses = (await Promise.all(tokens.map((t) => access(system, t)))).map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 403)).toHaveLength(7);
      const rows = await sql(
        system.databaseUrl as string,
        'select identity_user_id from identity.invitations where email = $1',
        [email],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.identity_user_id).toBe(`idp|racer-${statuses.indexOf(200)}`);
    });

    it('refuses a revoked invitation, bound or not; a new invitation can be bound again', async () => {
      const email = newEmail();
      const invitation = await invite(email);
      const jwt = await developerToken(system, email, { sub: 'idp|revoked-later' });
      expect((await access(system, jwt)).status).toBe(200);

      const revoked = await admin(system, 'POST', `/invitations/${invitation.id}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.data).toMatchObject({
        id: invitation.id,
        status: 'revoked',
        identityUserId: 'idp|revoked-later',
      });
      const denied = await access(system, jwt);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual(errorBody('DEVELOPER_INVITATION_REQUIRED'));

      const unboundEmail = newEmail();
      const unbound = await invite(unboundEmail);
      await admin(system, 'POST', `/invitations/${unbound.id}/revoke`);
      expect((await access(system, await developerToken(system, unboundEmail))).status).toBe(403);

      const again = await invite(email);
      expect(again).toMatchObject({ status: 'active', identityUserId: null });
      const other = await developerToken(system, email, { sub: 'idp|new-owner' });
      expect((await access(system, other)).status).toBe(200);
      expect((await access(system, jwt)).status).toBe(403);
    });

    it('does not create a native account', async () => {
      const email = newEmail();
      await invite(email);
      expect((await access(system, await developerToken(system, email))).status).toBe(200);
      const accounts = await sql(
        system.databaseUrl as string,
        'select count(*)::int as n from identity.native_accounts',
      );
      expect(accounts[0]?.n).toBe(0);
    });
  });

  describe('the order of the checks: a request failing several gets the first one’s code', () => {
    it('token before Origin before e-mail verification before invitation', async () => {
      const uninvited = newEmail();
      const unverifiedUninvited = await token({ sub: 'idp|x', email: uninvited, email_verified: false });
      const expiredEverything = await token(
        { sub: 'idp|x', email: uninvited, email_verified: false },
        { exp: nowSeconds() - 600 },
      );
      const cases: Array<[string, string, Record<string, string>, number, string]> = [
        ['all four fail', expiredEverything, { Origin: 'https://evil.example' }, 401, 'UNAUTHORIZED'],
        [
          'origin, verification, invitation fail',
          unverifiedUninvited,
          { Origin: 'https://evil.example' },
          403,
          'INVALID_SESSION_ORIGIN',
        ],
        [
          'verification and invitation fail',
          unverifiedUninvited,
          { Origin: CONSOLE_ORIGIN },
          403,
          'EMAIL_VERIFICATION_REQUIRED',
        ],
        [
          'invitation fails',
          await developerToken(system, uninvited),
          { Origin: CONSOLE_ORIGIN },
          403,
          'DEVELOPER_INVITATION_REQUIRED',
        ],
      ];
      for (const [name, jwt, headers, status, code] of cases) {
        const response = await access(system, jwt, headers);
        expect({ name, status: response.status, body: response.body }).toEqual({ name, status, body: errorBody(code) });
      }
    });
  });

  describe('platform switch', () => {
    it('while disabled, /access answers 503 PLATFORM_DISABLED before any other check; the operator API still works', async () => {
      const email = newEmail();
      await invite(email);
      const jwt = await developerToken(system, email);
      expect((await admin(system, 'PUT', '/platform', { enabled: false })).body).toEqual({ data: { enabled: false } });
      try {
        for (const [jwtOrNone, headers] of [
          [jwt, {}],
          [undefined, {}],
          ['garbage', { Origin: 'https://evil.example' }],
        ] as const) {
          const response = await access(system, jwtOrNone, headers);
          expect(response.status).toBe(503);
          expect(response.body).toEqual(errorBody('PLATFORM_DISABLED'));
          expect(response.headers.get('cache-control')).toBe('no-store');
        }
        expect((await admin(system, 'GET', '/invitations')).status).toBe(200);
        expect((await fetch(`${system.url}/healthz`)).status).toBe(200);
      } finally {
        expect((await admin(system, 'PUT', '/platform', { enabled: true })).body).toEqual({ data: { enabled: true } });
      }
      expect((await access(system, jwt)).status).toBe(200);
    });
  });

  describe('npm run dev:token', () => {
    const devToken = async (args: string[]) =>
      promisify(execFile)(process.execPath, ['services/identity-admission/src/cli/dev-token.ts', ...args], {
        env: { PATH: process.env.PATH, DATA_DIR: system.dataDir },
      });

    it('prints a developer session token of the provider npm start trusts', async () => {
      const email = newEmail();
      await invite(email);
      const { stdout, stderr } = await devToken(['--email', email]);
      expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
      expect(stderr).toContain(email);
      const response = await access(system, stdout.trim());
      expect(response.body).toEqual({ data: { authorized: true, email, mode: 'sandbox' } });
      const unverified = await devToken(['--email', email, '--unverified']);
      expect((await access(system, unverified.stdout.trim())).body).toEqual(errorBody('EMAIL_VERIFICATION_REQUIRED'));
    });

    it('prints a native session token with the given sub and sid (--native)', async () => {
      const sub = randomUUID();
      const { stdout } = await devToken(['--native', '--sub', sub, '--sid', 'sid-from-cli', '--username', 'Cli']);
      const permit = await admin(system, 'POST', '/device-permits', {
        sessionId: 'sid-from-cli',
        creditsUserId: sub,
        expiresInSeconds: 60,
      });
      expect(permit.status).toBe(200);
      const reply = await system.running.transport.call(
        identityOps.admitNative,
        { authorization: `Bearer ${stdout.trim()}`, country: 'DE', build: '1', capabilities: 'challenge-v1' },
        { requestId: randomUUID() },
      );
      expect(reply.principal).toMatchObject({ creditsUserId: sub, sessionId: 'sid-from-cli', username: 'Cli' });
    });

    it('refuses a native --sub that is not a UUID, with usage and exit code 2', async () => {
      const failure = await devToken(['--native', '--sub', 'player-1']).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 2 });
      expect((failure as { stderr: string }).stderr).toMatch(/--sub must be a UUID/);
    });
  });
});
