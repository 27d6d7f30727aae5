// Verifies session JWTs of one identity provider with jose: only RS256, ES256 and EdDSA; issuer and audience
// required; a few seconds of clock tolerance. Keys come from an inline JWKS, a JWKS URL (cached; an unknown `kid`
// refetches after a cool-down) or the local development provider.
import { createLocalJWKSet, createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';
import type { ProviderConfig } from '../config.ts';
import type { DevProvider } from './dev-identity-provider.ts';

export const ALLOWED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
export const CLOCK_TOLERANCE_SECONDS = 5;

export type VerifyResult =
  | { ok: true; payload: JWTPayload }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'keys_unavailable' };

export interface TokenVerifier {
  verify(token: string): Promise<VerifyResult>;
}

export function createTokenVerifier(
  provider: ProviderConfig,
  dev: DevProvider | undefined,
  jwksRefreshCooldownMs: number,
): TokenVerifier {
  let keys: Parameters<typeof jwtVerify>[1];
  let issuer: string;
  let audience: string;
  if (provider.jwks) {
    keys = createLocalJWKSet(JSON.parse(provider.jwks));
    issuer = provider.issuer as string;
    audience = provider.audience as string;
  } else if (provider.jwksUrl) {
    keys = createRemoteJWKSet(new URL(provider.jwksUrl), {
      cooldownDuration: jwksRefreshCooldownMs,
      cacheMaxAge: 10 * 60_000,
      timeoutDuration: 5_000,
    });
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
  return {
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer,
          audience,
          algorithms: ALLOWED_ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ['exp'],
        });
        return { ok: true, payload };
      } catch (error) {
        if (error instanceof errors.JWKSTimeout || isFetchFailure(error))
          return { ok: false, reason: 'keys_unavailable' };
        return { ok: false, reason: 'invalid' };
      }
    },
  };
}

function isFetchFailure(error: unknown): boolean {
  // A JWKS URL that cannot be fetched (network error or non-200) is an outage, not a bad token.
  return (
    error instanceof TypeError ||
    (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC' && /fetch|response/i.test(error.message))
  );
}

/** `Bearer <token>` → token; anything else → undefined. */
export function bearerToken(authorization: string): string | undefined {
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(authorization.trim());
  return match?.[1];
}
