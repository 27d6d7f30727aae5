// The gateway's side of the web console (docs/console-ui.md): the static files at /console/, the sign-in
// configuration, the development sign-in that exists only with the local identity provider, and the gateway's own
// origin admitted as same-origin while other origins keep the ALLOWED_ORIGINS rule.
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';

const DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

describe('with the local development identity provider (npm start)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ mode: 'embedded' });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('serves the built app at /console/, its assets immutable, unknown pages as the app', async () => {
    const redirect = await fetch(`${system.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    const index = await api(system.url, 'GET', '/console/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    // Only the gateway itself (GraphQL and its WebSocket): no `https:`, which would let any https host receive a token.
    expect(index.headers.get('content-security-policy')).toContain("connect-src 'self';");
    expect(index.body).toContain('<div id="root">');
    const asset = readdirSync(`${DIST}assets`).find((name) => name.endsWith('.js'))!;
    const script = await api(system.url, 'GET', `/console/assets/${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const deepLink = await api(system.url, 'GET', '/console/some/page');
    expect(deepLink.status).toBe(200);
    expect(deepLink.body).toBe(index.body);
    expect((await api(system.url, 'GET', '/console/assets/missing.js')).status).toBe(404);
    for (const path of ['/console/..%2Fpackage.json', '/console/%2e%2e/%2e%2e/package.json', '/console/%E0%A4%A']) {
      const response = await api(system.url, 'GET', path);
      expect(typeof response.body === 'string' ? response.body : '').not.toContain('"devDependencies"');
    }
  });

  it('serves the pre-compressed copies a browser accepts (Brotli first), with Vary, and the favicon', async () => {
    const asset = readdirSync(`${DIST}assets`).find((name) => /^index-.*\.js$/.test(name))!;
    const plain = readFileSync(`${DIST}assets/${asset}`);
    const brotli = await rawGet(`/console/assets/${asset}`, 'gzip, deflate, br');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers.vary).toBe('Accept-Encoding');
    expect(brotli.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotli.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(brotliDecompressSync(brotli.body).equals(plain)).toBe(true);
    expect(brotli.body.length).toBeLessThan(plain.length / 2);
    const gzip = await rawGet(`/console/assets/${asset}`, 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(plain)).toBe(true);
    const identity = await rawGet(`/console/assets/${asset}`, undefined);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding');
    expect(identity.body.equals(plain)).toBe(true);
    // index.html: compressed too when large enough, always revalidated, its CSP intact.
    const index = await rawGet('/console/', 'gzip, br');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toContain("default-src 'self'");
    expect(index.body.toString()).toContain('<link rel="icon" href="/favicon.ico"');
    const favicon = await rawGet('/favicon.ico', undefined);
    expect(favicon.status).toBe(200);
    expect(favicon.headers['content-type']).toBe('image/svg+xml');
    expect(favicon.body.toString()).toMatch(/^<svg /);
  });

  /** A GET with exactly this Accept-Encoding (fetch adds its own and decodes), the body as sent. */
  function rawGet(path: string, acceptEncoding: string | undefined) {
    return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
      (resolve, reject) => {
        const headers: Record<string, string> = acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {};
        request(`${system.url}${path}`, { headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
          );
          response.on('error', reject);
        })
          .on('error', reject)
          .end();
      },
    );
  }

  it('offers the development sign-in, whose session is admitted once the e-mail is invited', async () => {
    const config = await api(system.url, 'GET', '/console/config.json');
    expect(config.body).toEqual({ signIn: { kind: 'dev' } });
    expect(config.headers.get('cache-control')).toBe('no-store');
    for (const body of [{}, { email: 'not-an-email' }, { email: 42 }]) {
      const refused = await api(system.url, 'POST', '/console/dev-session', { body });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('INVALID_REQUEST');
    }
    const email = 'web-console@example.com';
    const signed = await api(system.url, 'POST', '/console/dev-session', { body: { email } });
    expect(signed.status).toBe(200);
    const token = signed.body.data.token as string;
    const uninvited = await api(system.url, 'GET', '/api/developer/v1/access', { token });
    expect(uninvited.body.error.code).toBe('DEVELOPER_INVITATION_REQUIRED');
    expect((await admin(system, 'POST', '/invitations', { email })).status).toBe(200);
    const access = await api(system.url, 'GET', '/api/developer/v1/access', { token });
    expect(access.body).toEqual({ data: { authorized: true, email, mode: 'sandbox' } });
  });

  it("admits the gateway's own origin as same-origin; other origins still need ALLOWED_ORIGINS", async () => {
    const email = 'origin-check@example.com';
    await admin(system, 'POST', '/invitations', { email });
    const { token } = (await api(system.url, 'POST', '/console/dev-session', { body: { email } })).body.data;
    const query = { query: '{ access { email } }' };
    const own = await api(system.url, 'POST', '/graphql', { token, body: query, headers: { Origin: system.url } });
    expect(own.status).toBe(200);
    expect(own.body.data.access.email).toBe(email);
    const foreign = await api(system.url, 'POST', '/graphql', {
      token,
      body: query,
      headers: { Origin: 'https://elsewhere.example.com' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors[0].extensions.code).toBe('INVALID_SESSION_ORIGIN');
  });
});

describe('with a configured developer identity provider', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({
      mode: 'embedded',
      env: {
        DEVELOPER_JWKS: '{"keys":[]}',
        DEVELOPER_JWT_ISSUER: 'https://login.example.com/',
        DEVELOPER_JWT_AUDIENCE: 'rewards-console',
        CONSOLE_OIDC_CLIENT_ID: 'rewards-console',
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('has no development sign-in and offers OpenID Connect', async () => {
    const signIn = await api(system.url, 'POST', '/console/dev-session', { body: { email: 'someone@example.com' } });
    // No such route: the router answers 405 since GET /console/* (the app) covers the path for GET only.
    expect(signIn.status).toBe(405);
    expect(JSON.stringify(signIn.body)).not.toContain('token');
    const config = await api(system.url, 'GET', '/console/config.json');
    expect(config.body).toEqual({
      signIn: {
        kind: 'oidc',
        authority: 'https://login.example.com/',
        clientId: 'rewards-console',
        scope: 'openid email',
      },
    });
    // The page may call the issuer's origin (discovery, token endpoint), whatever its scheme, and no other.
    const index = await api(system.url, 'GET', '/console/');
    expect(index.headers.get('content-security-policy')).toContain("connect-src 'self' https://login.example.com;");
  });
});
