// A real OpenID Connect provider for tests (panva's `oidc-provider`, the certified implementation): discovery,
// JWKS, authorization code + PKCE, its own login and consent pages (its development interactions: any login and
// password sign in), ID tokens signed ES256 or RS256, RP-initiated logout. The web console's OIDC sign-in is driven
// against it in Chromium (test/e2e/console-oidc.test.ts).
//
// Two steps, because each side needs the other's address: `startOidcProvider()` listens on a free port (the issuer
// the gateway is configured with), then `register(consoleUrl)` creates the provider with the console's client once
// the gateway's address is known. Until then the port answers 503.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { closeServer, listen } from '#runtime/program.ts';

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens and DEVELOPER_JWT_ISSUER. */
  issuer: string;
  /** Its jwks_uri (DEVELOPER_JWKS_URL). */
  jwksUri: string;
  clientId: string;
  /** The gateway variables that make it the developer identity provider and the console's sign-in. */
  env: Record<string, string>;
  /** Registers the console (public client, redirect and post-logout URI `<consoleUrl>`) and starts answering. */
  register(consoleUrl: string): void;
  stop(): Promise<void>;
}

/** Accounts: the login typed on the provider's page is the account id and `sub`; its e-mail is verified. */
function findAccount(_ctx: unknown, id: string) {
  return {
    accountId: id,
    claims: async () => ({ sub: id, email: id, email_verified: true }),
  };
}

/** The provider's sign-out confirmation (its default page loads web fonts from the Internet). */
async function logoutSource(ctx: { host: string; body: unknown }, form: string) {
  ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head><body>
    <main><h1>Sign out of ${ctx.host.replace(/[^\w.:-]/g, '')}?</h1>${form}
    <button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
    <button type="submit" form="op.logoutForm">No, stay signed in</button></main></body></html>`;
}

/**
 * Runs `create` without oidc-provider's start-up warnings, which are expected here (in-memory storage and the
 * development login pages are what a test provider is for); anything else it prints still shows.
 */
function quietly<T>(create: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('oidc-provider WARNING: a quick start development-only')) warn(...args);
  };
  try {
    return create();
  } finally {
    console.warn = warn;
  }
}

export async function startOidcProvider(
  options: { clientId?: string; idTokenAlg?: 'ES256' | 'RS256' } = {},
): Promise<TestOidcProvider> {
  const clientId = options.clientId ?? 'sandbox-rewards-console';
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.writeHead(503).end();
  });
  const port = await listen(server, 0, '127.0.0.1');
  const issuer = `http://127.0.0.1:${port}`;
  // Both kinds the gateway accepts are published; the client's ID tokens use `idTokenAlg`.
  const keys = await Promise.all(
    (['ES256', 'RS256'] as const).map(async (alg) => {
      const { privateKey } = await generateKeyPair(alg, { extractable: true });
      return { ...(await exportJWK(privateKey)), alg, use: 'sig', kid: `test-${alg.toLowerCase()}` };
    }),
  );
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    clientId,
    env: {
      DEVELOPER_JWT_ISSUER: issuer,
      DEVELOPER_JWKS_URL: `${issuer}/jwks`,
      // The console sends the ID token: its audience is the console's client id.
      DEVELOPER_JWT_AUDIENCE: clientId,
      CONSOLE_OIDC_CLIENT_ID: clientId,
    },
    register(consoleUrl: string) {
      const provider = quietly(
        () =>
          new Provider(issuer, {
            clients: [
              {
                client_id: clientId,
                token_endpoint_auth_method: 'none',
                grant_types: ['authorization_code'],
                response_types: ['code'],
                redirect_uris: [consoleUrl],
                post_logout_redirect_uris: [consoleUrl],
                id_token_signed_response_alg: options.idTokenAlg ?? 'ES256',
              },
            ],
            jwks: { keys },
            findAccount,
            claims: { openid: ['sub'], email: ['email', 'email_verified'] },
            // The requested claims go into the ID token (the console's session), not only to userinfo.
            conformIdTokenClaims: false,
            pkce: { required: () => true },
            features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true, logoutSource } },
            // A public client may call the token endpoint from its redirect URI's origin (CORS).
            clientBasedCORS: (_ctx: unknown, origin: string, client: { redirectUris: string[] }) =>
              client.redirectUris.some((uri) => new URL(uri).origin === origin),
            cookies: { keys: ['test-cookie-key-not-secret-0123456789'] },
            ttl: { AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
          }),
      );
      handler = provider.callback();
    },
    stop: () => closeServer(server),
  };
}
