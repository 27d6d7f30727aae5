// The web console's production sign-in end to end: a real OpenID Connect provider (oidc-provider, test/support/
// oidc-provider.ts) is the developer identity provider of the all-in-one service, configured with the documented
// variables (DEVELOPER_JWT_ISSUER, DEVELOPER_JWKS_URL, DEVELOPER_JWT_AUDIENCE, CONSOLE_OIDC_CLIENT_ID), and Chromium
// signs in through the provider's own login and consent pages (authorization code + PKCE by oidc-client-ts). The
// gateway verifies the provider's ES256 ID token against its jwks_uri; the token is held in memory only; signing out
// ends the provider's session too.
import { randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchChromium, SCREENSHOTS, WAIT } from '../support/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';
import { admin, api, startTestSystem, type TestSystem } from '../support/system.ts';

let provider: TestOidcProvider;
let system: TestSystem;
let browser: Browser;
const email = `oidc-${randomUUID().slice(0, 8)}@example.com`;

beforeAll(async () => {
  browser = await launchChromium();
  provider = await startOidcProvider();
  system = await startTestSystem({ env: provider.env });
  provider.register(`${system.url}/console/`);
  expect((await admin(system, 'POST', '/invitations', { email })).status).toBe(200);
});

afterAll(async () => {
  await browser?.close();
  await system?.stop();
  await provider?.stop();
});

/** The provider's login page (its development interactions: any password), then its consent page. */
async function signInAtProvider(page: Page) {
  await page.waitForURL((url) => url.origin === provider.issuer, WAIT);
  await page.locator('input[name=login]').fill(email);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click(WAIT);
}

test('a developer signs in through the OIDC provider, reads their organizations, holds the token in memory only and signs out', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The provider's pages import web fonts; nothing but the gateway and the provider is reachable here.
  await context.route(
    (url) => url.origin !== system.url && url.origin !== provider.issuer,
    (route) => route.abort(),
  );
  const page = await context.newPage();
  let idToken: string | undefined;
  page.on('response', (response) => {
    if (response.url() === `${provider.issuer}/token` && response.status() === 200) {
      void response.json().then((body: { id_token?: string }) => {
        idToken = body.id_token;
      });
    }
  });

  const config = await api(system.url, 'GET', '/console/config.json');
  expect(config.body).toEqual({
    signIn: { kind: 'oidc', authority: provider.issuer, clientId: provider.clientId, scope: 'openid email' },
  });
  // The console page may call the provider although it is on plain http (its origin is in connect-src).
  const index = await api(system.url, 'GET', '/console/');
  expect(index.headers.get('content-security-policy')).toContain(`connect-src 'self' ${provider.issuer};`);
  await page.goto(`${system.url}/console/`);
  const signIn = page.getByRole('button', { name: `Sign in with ${new URL(provider.issuer).host}` });
  await signIn.waitFor(WAIT);
  expect(await page.getByLabel('E-mail').count()).toBe(0);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: `${SCREENSHOTS}sign-in-oidc.png` });

  // Authorization code + PKCE: the provider's login and consent, then back to /console/ with a code.
  await signIn.click();
  await signInAtProvider(page);
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await page.getByText(email).waitFor(WAIT);
  expect(page.url()).toBe(`${system.url}/console/`);
  expect(await axeViolations(page)).toEqual([]);

  // The session is the provider's ID token, signed ES256 by a key of its jwks_uri, with the claims the gateway needs.
  expect(idToken).toBeDefined();
  expect(decodeProtectedHeader(idToken!)).toMatchObject({ alg: 'ES256', kid: 'test-es256' });
  expect(decodeJwt(idToken!)).toMatchObject({
    iss: provider.issuer,
    aud: provider.clientId,
    sub: email,
    email,
    email_verified: true,
  });

  // The signed-in developer reads and writes through GraphQL with it: an organization created here is listed.
  await page.getByRole('button', { name: 'New organization', exact: true }).click();
  const create = page.getByRole('form', { name: 'New organization', exact: true });
  await create.getByLabel('Organization name', { exact: true }).fill('OIDC Studio');
  await create.locator('button[type=submit]').click();
  await page.getByRole('heading', { name: 'Organization OIDC Studio', exact: true }).waitFor(WAIT);
  expect(await axeViolations(page)).toEqual([]);
  await page.getByRole('link', { name: 'Organizations', exact: true }).click();
  await page.getByRole('main').getByRole('link', { name: 'OIDC Studio' }).waitFor(WAIT);

  // Tokens in memory only: neither storage holds the ID token, nor any JWT; the PKCE state is gone too.
  const storage = await page.evaluate(() => {
    const dump = (store: Storage) =>
      Array.from({ length: store.length }, (_, i) => store.key(i) ?? '').map((key) => `${key}=${store.getItem(key)}`);
    return { local: dump(localStorage), session: dump(sessionStorage) };
  });
  for (const entry of [...storage.local, ...storage.session]) {
    expect(entry).not.toContain(idToken);
    expect(entry).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
  }
  expect(storage.session).toEqual([]);

  // A reload: the OpenID Connect tokens were in memory only, so the console asks again; the provider's own session
  // answers without its login form (docs/console-ui.md, "Sign-in": the development sign-in keeps its session in
  // sessionStorage instead).
  await page.reload();
  await signIn.waitFor(WAIT);
  await signIn.click();
  await page.waitForURL((url) => url.origin === provider.issuer || url.origin === system.url, WAIT);
  const consent = page.getByRole('button', { name: 'Continue' });
  await Promise.race([
    consent
      .waitFor(WAIT)
      .then(() => consent.click())
      .catch(() => undefined),
    page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT),
  ]);
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  expect(await page.locator('input[name=login]').count()).toBe(0);
  await page.getByText(email).waitFor(WAIT);

  // Sign-out: the console forgets the token and the provider ends its session (its logout confirmation).
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Yes, sign me out' }).click(WAIT);
  await signIn.waitFor(WAIT);
  expect(page.url()).toBe(`${system.url}/console/`);
  expect(await page.getByText(email).count()).toBe(0);
  // The provider asks for a login again: its session ended with the console's.
  await signIn.click();
  await page.locator('input[name=login]').waitFor(WAIT);
  await context.close();
}, 180_000);
