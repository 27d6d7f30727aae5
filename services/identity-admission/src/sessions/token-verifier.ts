// Verifies session JWTs of one identity provider with jose: only RS256, ES256 and EdDSA; issuer and audience
// required; a few seconds of clock tolerance. Keys come from an inline JWKS, a JWKS URL (cached; an unknown `kid`
// refetches after a cool-down) or the local development provider.
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

export type VerifyResult =
  | { ok: true; payload: JWTPayload }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'keys_unavailable' };

export interface TokenVerifier {
  verify(token: string): Promise<VerifyResult>;
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
    return { verify: async () => ({ ok: false, reason: 'invalid' }) };
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
  return {
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, keys, verifyOptions);
        if (remote) lastFetched = remote.jwks() ?? lastFetched;
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
