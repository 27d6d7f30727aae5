// Verifies session JWTs of one identity provider with jose: only RS256, ES256 and EdDSA; issuer and audience
// required; a few seconds of clock tolerance. Keys come from an inline JWKS, a JWKS URL (cached; an unknown `kid`
// refetches after a cool-down) or the local development provider. A token that verified is remembered until its
// `exp` (VerifiedTokens below).
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import type { DevProvider } from '#runtime/identity/dev-identity-provider.ts';
import type { ProviderConfig } from '../config.ts';

/** Asymmetric algorithms only: `none` and HMAC (HS256 with a public key as the secret) are never accepted. */
export const ALLOWED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
export const CLOCK_TOLERANCE_SECONDS = 5;
/** Longest a fetched JWKS is used before it is fetched again (an unknown `kid` refetches sooner). */
export const JWKS_CACHE_MAX_AGE_MS = 10 * 60_000;
export const JWKS_FETCH_TIMEOUT_MS = 5_000;
/** Verified tokens remembered (the least recently used forgotten first). */
export const VERIFIED_TOKENS_MAX = 10_000;
/** Longer tokens are verified every time. */
const VERIFIED_TOKEN_MAX_CHARS = 8_192;

export type VerifyResult =
  | { ok: true; payload: JWTPayload }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'keys_unavailable' };

export interface TokenVerifier {
  verify(token: string): Promise<VerifyResult>;
  /** Verified tokens remembered now (at most VERIFIED_TOKENS_MAX). */
  remembered?(): number;
}

export interface TokenVerifierOptions {
  jwksRefreshCooldownMs: number;
  /** Claims a token must carry besides `iss`, `aud` (checked by value) and `exp`. */
  requiredClaims: string[];
}

export function createTokenVerifier(
  provider: ProviderConfig,
  dev: DevProvider | undefined,
  options: TokenVerifierOptions,
): TokenVerifier {
  let keys: JWTVerifyGetKey;
  let issuer: string;
  let audience: string;
  let remote: ReturnType<typeof createRemoteJWKSet> | undefined;
  if (provider.jwks) {
    keys = createLocalJWKSet(JSON.parse(provider.jwks) as JSONWebKeySet);
    issuer = provider.issuer as string;
    audience = provider.audience as string;
  } else if (provider.jwksUrl) {
    remote = createRemoteJWKSet(new URL(provider.jwksUrl), {
      cooldownDuration: options.jwksRefreshCooldownMs,
      cacheMaxAge: JWKS_CACHE_MAX_AGE_MS,
      timeoutDuration: JWKS_FETCH_TIMEOUT_MS,
    });
    keys = remote;
    issuer = provider.issuer as string;
    audience = provider.audience as string;
  } else if (dev) {
    keys = createLocalJWKSet(dev.publicJwks);
    issuer = dev.issuer;
    audience = dev.audience;
  } else {
    // No provider at all: nothing verifies.
    return { verify: async () => ({ ok: false, reason: 'invalid' }), remembered: () => 0 };
  }
  const verifyOptions = {
    issuer,
    audience,
    algorithms: ALLOWED_ALGORITHMS,
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp', ...options.requiredClaims],
  };
  // The last key set fetched from the JWKS URL: when a refresh fails (the provider is down), tokens signed with a
  // key we already know still verify instead of every session failing with the provider.
  let lastFetched: JSONWebKeySet | undefined;
  const verified = new VerifiedTokens();
  // The key set the remembered tokens verified against (a JWKS URL's): when a fetch brings another, they are forgotten.
  let keySetSeen: string | undefined;
  return {
    remembered: () => verified.size,
    async verify(token) {
      // A token verified before, against the key set in force now, is the same token until its `exp` (a JWKS URL's
      // set only while it is fresh: past JWKS_CACHE_MAX_AGE_MS, a full verification fetches it again as jose would).
      if (!remote || remote.fresh) {
        const payload = verified.get(token);
        if (payload) return { ok: true, payload };
      }
      try {
        const { payload } = await jwtVerify(token, keys, verifyOptions);
        if (remote) {
          lastFetched = remote.jwks() ?? lastFetched;
          const keySet = JSON.stringify(lastFetched);
          if (keySet !== keySetSeen) verified.clear();
          keySetSeen = keySet;
        }
        verified.set(token, payload);
        return { ok: true, payload };
      } catch (error) {
        if (!remote || !isFetchFailure(error)) return { ok: false, reason: 'invalid' };
        if (!lastFetched) return { ok: false, reason: 'keys_unavailable' };
        try {
          const { payload } = await jwtVerify(token, createLocalJWKSet(lastFetched), verifyOptions);
          return { ok: true, payload };
        } catch (fallbackError) {
          // A kid we do not know while the provider is down: we cannot tell a new key from a forged one.
          return fallbackError instanceof errors.JWKSNoMatchingKey
            ? { ok: false, reason: 'keys_unavailable' }
            : { ok: false, reason: 'invalid' };
        }
      }
    },
  };
}

/**
 * Tokens that verified, by their exact text, with their payload, until their `exp` (never longer): a session token
 * is sent with every request, and its signature check (an asymmetric verification) need not be repeated for the same
 * text. Only the signature and the claims' validity are remembered; every check of the admission that can change
 * while the token lives (the invitation, the Origin) runs on every request (developer-admission.ts).
 */
class VerifiedTokens {
  private readonly tokens = new Map<string, { payload: JWTPayload; expiresAtMs: number }>();

  get size(): number {
    return this.tokens.size;
  }

  get(token: string): JWTPayload | undefined {
    const entry = this.tokens.get(token);
    if (!entry) return undefined;
    this.tokens.delete(token);
    if (Date.now() >= entry.expiresAtMs) return undefined;
    // Most recently used last: the first key is the one to forget.
    this.tokens.set(token, entry);
    return entry.payload;
  }

  set(token: string, payload: JWTPayload): void {
    if (token.length > VERIFIED_TOKEN_MAX_CHARS || typeof payload.exp !== 'number') return;
    this.tokens.delete(token);
    this.tokens.set(token, { payload, expiresAtMs: payload.exp * 1000 });
    if (this.tokens.size > VERIFIED_TOKENS_MAX) {
      const oldest = this.tokens.keys().next().value;
      if (oldest !== undefined) this.tokens.delete(oldest);
    }
  }

  clear(): void {
    this.tokens.clear();
  }
}

/** A JWKS URL that cannot be fetched (network error, timeout, non-200, not a JWKS) is an outage, not a bad token. */
function isFetchFailure(error: unknown): boolean {
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    // fetch() rejects with a TypeError ("fetch failed") when the server cannot be reached.
    error instanceof TypeError ||
    (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/i.test(error.message))
  );
}

/** `Bearer <token>` → token; anything else → undefined. */
export function bearerToken(authorization: string): string | undefined {
  const match = /^Bearer +([A-Za-z0-9._~+/=-]+)$/i.exec(authorization.trim());
  return match?.[1];
}
