// identity-admission's settings (CONTRACT section 1). A provider is trusted through an inline JWKS or a JWKS URL,
// with its issuer and audience; with neither, the all-in-one process runs the local development provider.
import type { EnvReader } from '#runtime/config.ts';
import { readAllowedOrigins } from '#runtime/http/origins.ts';

export interface ProviderConfig {
  /** Inline JWKS JSON. */
  jwks?: string | undefined;
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

export type NativeAdmissionMode = 'off' | 'monitor' | 'enforce';

export interface IdentityConfig {
  developer: ProviderConfig;
  native: ProviderConfig;
  allowedOrigins: string[];
  nativeAdmissionMode: NativeAdmissionMode;
  nativeMinBuild: number;
  supportedCountries: string[];
  /** Minimum time between two fetches of a remote JWKS (an unknown `kid` triggers a fetch after it). */
  jwksRefreshCooldownMs: number;
}

function readProvider(reader: EnvReader, prefix: 'DEVELOPER' | 'NATIVE'): ProviderConfig {
  const jwks = reader.string(`${prefix}_JWKS`);
  const jwksUrl = reader.url(`${prefix}_JWKS_URL`, ['https:', 'http:']);
  const issuer = reader.string(`${prefix}_JWT_ISSUER`);
  const audience = reader.string(`${prefix}_JWT_AUDIENCE`);
  reader.check(!(jwks && jwksUrl), `set only one of ${prefix}_JWKS and ${prefix}_JWKS_URL`);
  if (jwks) {
    try {
      const parsed = JSON.parse(jwks) as { keys?: unknown };
      reader.check(Array.isArray(parsed.keys), `${prefix}_JWKS must be a JWKS: {"keys": [...]}`);
    } catch {
      reader.check(false, `${prefix}_JWKS must be JSON (a JWKS: {"keys": [...]})`);
    }
  }
  if (jwks || jwksUrl) {
    reader.check(issuer !== undefined, `${prefix}_JWT_ISSUER is required with ${prefix}_JWKS or ${prefix}_JWKS_URL`);
    reader.check(
      audience !== undefined,
      `${prefix}_JWT_AUDIENCE is required with ${prefix}_JWKS or ${prefix}_JWKS_URL`,
    );
  }
  return { jwks, jwksUrl, issuer, audience };
}

export function readIdentityConfig(reader: EnvReader): IdentityConfig {
  return {
    developer: readProvider(reader, 'DEVELOPER'),
    native: readProvider(reader, 'NATIVE'),
    allowedOrigins: readAllowedOrigins(reader),
    nativeAdmissionMode: reader.oneOf('NATIVE_ADMISSION_MODE', ['off', 'monitor', 'enforce'] as const, 'enforce'),
    nativeMinBuild: reader.int('NATIVE_MIN_BUILD', 0, { min: 0, max: 2_147_483_647 }),
    supportedCountries: reader
      .list('SUPPORTED_COUNTRIES', /^[A-Za-z]{2}$/, 'ISO 3166-1 alpha-2 codes such as DE,FR')
      .map((c) => c.toUpperCase()),
    jwksRefreshCooldownMs: reader.int('JWKS_REFRESH_COOLDOWN_MS', 30_000, { min: 0, max: 3_600_000 }),
  };
}

export function hasProvider(provider: ProviderConfig): boolean {
  return Boolean(provider.jwks || provider.jwksUrl);
}
