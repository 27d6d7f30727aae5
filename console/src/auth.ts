// Sign-in. Tokens never go to localStorage (docs/console-ui.md, "Sign-in"); a new tab takes the session of an open one
// over a BroadcastChannel (below):
// - dev: the local development identity provider of `npm start` signs a session for a typed e-mail
//   (POST /console/dev-session, present only when no DEVELOPER_JWKS is configured). The token is kept in this tab's
//   sessionStorage until it expires, so that a reload keeps the sign-in; signing out, the server ending the session
//   or closing the tab forget it.
// - oidc: authorization-code flow with PKCE (oidc-client-ts) against DEVELOPER_JWT_ISSUER; the PKCE verifier and
//   state stay in sessionStorage for the redirect round trip, the tokens in memory only (a reload asks the
//   provider again, which answers at once while its own session lasts). The ID token is the session.
//   Signing out also ends the provider's session (its end_session_endpoint).
import type { ServerFailure } from './api.ts';

export type SignInConfig =
  | { kind: 'dev' }
  | { kind: 'oidc'; authority: string; clientId: string; scope: string }
  | { kind: 'none' };

export async function loadSignInConfig(): Promise<SignInConfig> {
  const response = await fetch('/console/config.json', { cache: 'no-store' });
  const body = (await response.json()) as { signIn: SignInConfig };
  return body.signIn;
}

export async function devSignIn(email: string): Promise<string> {
  const response = await fetch('/console/dev-session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    data?: { token: string };
    error?: ServerFailure;
  };
  if (!response.ok || !body.data) {
    throw body.error ?? ({ code: String(response.status), message: 'Sign-in failed.' } satisfies ServerFailure);
  }
  return body.data.token;
}

const DEV_SESSION_KEY = 'console.devSession';

/** The seconds-since-epoch `exp` of a JWT (undefined when it has none or is not a JWT). */
function expiryOf(token: string): number | undefined {
  try {
    const payload = token.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps a development session in this tab (sessionStorage) for its lifetime. */
export function keepDevSession(token: string): void {
  try {
    window.sessionStorage.setItem(DEV_SESSION_KEY, token);
  } catch {
    // storage refused (private mode quota): the session stays in memory only
  }
}

/** The development session kept in this tab, while it has not expired (an expired one is forgotten). */
export function keptDevSession(): string | undefined {
  let token: string | null = null;
  try {
    token = window.sessionStorage.getItem(DEV_SESSION_KEY);
  } catch {
    return undefined;
  }
  if (!token) return undefined;
  const exp = expiryOf(token);
  if (exp === undefined || exp * 1000 <= Date.now() + 5000) {
    forgetDevSession();
    return undefined;
  }
  return token;
}

export function forgetDevSession(): void {
  try {
    window.sessionStorage.removeItem(DEV_SESSION_KEY);
  } catch {
    // nothing kept
  }
}

const redirectUri = () => `${window.location.origin}/console/`;

async function userManager(config: Extract<SignInConfig, { kind: 'oidc' }>) {
  // Loaded only when OIDC is configured, so that the first page does not carry it.
  const { UserManager, WebStorageStateStore, InMemoryWebStorage } = await import('oidc-client-ts');
  return new UserManager({
    authority: config.authority,
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    post_logout_redirect_uri: redirectUri(),
    response_type: 'code',
    scope: config.scope,
    userStore: new WebStorageStateStore({ store: new InMemoryWebStorage() }),
    automaticSilentRenew: false,
  });
}

/** Starts the authorization-code flow (the browser leaves for the provider). */
export async function oidcSignIn(config: Extract<SignInConfig, { kind: 'oidc' }>): Promise<void> {
  await (await userManager(config)).signinRedirect();
}

/**
 * Signs out at the provider too (RP-initiated logout: its end_session_endpoint with the ID token as hint), so that
 * the next sign-in asks for the provider's login again; the provider sends the browser back to /console/.
 */
export async function oidcSignOut(config: Extract<SignInConfig, { kind: 'oidc' }>, idToken: string): Promise<void> {
  await (await userManager(config)).signoutRedirect({ id_token_hint: idToken });
}

/**
 * On the redirect back: after sign-in (?code=&state=) exchanges the code (PKCE) and returns the ID token; after
 * sign-out (?state= alone) drops the sign-out state. Either way the query leaves the address bar.
 */
export async function oidcCallback(config: Extract<SignInConfig, { kind: 'oidc' }>): Promise<string | undefined> {
  const params = new URLSearchParams(window.location.search);
  if (!params.has('code') && !params.has('error') && !params.has('state')) return undefined;
  const manager = await userManager(config);
  try {
    if (!params.has('code') && !params.has('error')) {
      await manager.signoutRedirectCallback();
      return undefined;
    }
    const user = await manager.signinRedirectCallback();
    return user.id_token;
  } finally {
    window.history.replaceState(null, '', '/console/');
  }
}

// ---- one sign-in for every tab of the console (docs/console-ui.md, "Sign-in": "A new tab") ----
// A tab that opens without a session of its own asks the other tabs of the same origin over a BroadcastChannel
// (same origin only, never stored); a signed-in tab answers with its token while it has not expired. Signing out in
// one tab signs out every tab holding the same session.

const CHANNEL = 'console.session';
type SessionMessage =
  | { type: 'ask'; id: string }
  | { type: 'token'; id: string; token: string }
  | { type: 'signed-out'; fingerprint: string };

let channel: BroadcastChannel | undefined;
/** The session this tab holds (handed to a new tab that asks), if any. */
let held: string | undefined;
const signedOutListeners = new Set<() => void>();

/** An unexpired JWT (more than 5 s left). */
const usable = (token: string) => {
  const exp = expiryOf(token);
  return exp !== undefined && exp * 1000 > Date.now() + 5000;
};

/**
 * What a sign-out names: the token's subject, issue and expiry times (claims, not the credential), equal for every
 * tab holding the same session. No Web Crypto: the console may be served over plain http off loopback.
 */
function fingerprintOf(token: string): string {
  try {
    const claims = JSON.parse(atob((token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/'))) as Record<
      string,
      unknown
    >;
    return JSON.stringify([claims.sub, claims.iat, claims.exp]);
  } catch {
    return '';
  }
}

function sessionChannel(): BroadcastChannel | undefined {
  if (channel || typeof BroadcastChannel === 'undefined') return channel;
  channel = new BroadcastChannel(CHANNEL);
  channel.addEventListener('message', (event: MessageEvent<SessionMessage>) => {
    const message = event.data;
    if (message?.type === 'ask' && held && usable(held)) {
      channel?.postMessage({ type: 'token', id: message.id, token: held } satisfies SessionMessage);
    } else if (message?.type === 'signed-out' && held && fingerprintOf(held) === message.fingerprint) {
      for (const listener of signedOutListeners) listener();
    }
  });
  return channel;
}

/** The session this tab now holds (undefined: none), to hand to a new tab that asks. */
export function holdSession(token: string | undefined): void {
  held = token;
  sessionChannel();
}

/**
 * The session of another open tab of the console, or undefined when none answers within `waitMs` (no other tab, or
 * none signed in). Only an unexpired token is taken.
 */
export function sessionFromOtherTabs(waitMs = 500): Promise<string | undefined> {
  const open = sessionChannel();
  if (!open) return Promise.resolve(undefined);
  // A correlation id, not a secret (crypto.randomUUID needs a secure context).
  const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return new Promise((resolve) => {
    const done = (token: string | undefined) => {
      clearTimeout(timer);
      open.removeEventListener('message', listener);
      resolve(token);
    };
    const listener = (event: MessageEvent<SessionMessage>) => {
      const message = event.data;
      if (message?.type === 'token' && message.id === id && usable(message.token)) done(message.token);
    };
    const timer = setTimeout(() => done(undefined), waitMs);
    open.addEventListener('message', listener);
    open.postMessage({ type: 'ask', id } satisfies SessionMessage);
  });
}

/** Tells the other tabs that this session was signed out: those holding it sign out too. */
export function announceSignOut(token: string): void {
  sessionChannel()?.postMessage({ type: 'signed-out', fingerprint: fingerprintOf(token) } satisfies SessionMessage);
}

/** Runs `listener` when another tab signs out the session this tab holds; answers the unsubscribe. */
export function onSignedOutElsewhere(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}
