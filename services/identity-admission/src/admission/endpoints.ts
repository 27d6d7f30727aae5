// Transport handlers of the admissions (AdmitDeveloper, AdmitNative): they build the session verifiers from the
// configuration and hand each request to the domain (domain/developer-admission.ts, domain/native-admission.ts).
import { Counter } from 'prom-client';
import { identityOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import { type DevProvider, loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { hasProvider, type IdentityConfig } from '../config.ts';
import { admitDeveloper, DEVELOPER_REQUIRED_CLAIMS } from '../domain/developer-admission.ts';
import { admitNative } from '../domain/native-admission.ts';
import { DevicePermitRepository } from '../repositories/device-permits.ts';
import { InvitationRepository } from '../repositories/invitations.ts';
import { NativeAccountRepository } from '../repositories/native-accounts.ts';
import { createTokenVerifier } from '../sessions/token-verifier.ts';

/** At most this many identity user ids per DeveloperEmails call (more are left out). */
export const DEVELOPER_EMAILS_MAX = 1000;

export interface AdmissionEndpointDeps {
  database: Database;
  logger: Logger;
  metrics: Metrics;
  /** Where the development identity provider's keys are, when it may be trusted (ProgramDeps.devIdentityDataDir). */
  devIdentityDataDir?: string | undefined;
}

/**
 * The development provider is trusted only when no JWKS is configured and the composer allowed it (the local
 * development default, or UNSAFE_DEV_IDENTITY_PROVIDER=true): never a fallback of a deployment.
 */
async function devProviderFor(deps: AdmissionEndpointDeps, config: IdentityConfig, kind: 'developer' | 'native') {
  const provider = kind === 'developer' ? config.developer : config.native;
  if (hasProvider(provider) || !deps.devIdentityDataDir) return undefined;
  const dev: DevProvider = await loadDevProvider(deps.devIdentityDataDir, kind);
  deps.logger.warn(
    { kind, issuer: dev.issuer },
    `no ${kind.toUpperCase()}_JWKS configured: trusting the local development identity provider`,
  );
  return dev;
}

export async function admissionEndpoints(
  deps: AdmissionEndpointDeps,
  config: IdentityConfig,
): Promise<EndpointBinding[]> {
  const invitations = new InvitationRepository(deps.database);
  const accounts = new NativeAccountRepository(deps.database);
  const permits = new DevicePermitRepository(deps.database);
  const devDeveloperProvider = await devProviderFor(deps, config, 'developer');
  const developerVerifier = createTokenVerifier(config.developer, devDeveloperProvider, {
    jwksRefreshCooldownMs: config.jwksRefreshCooldownMs,
    requiredClaims: DEVELOPER_REQUIRED_CLAIMS,
  });
  // `sub` and `sid` are checked by the native admission itself (401 INVALID_TOKEN_PAYLOAD, not INVALID_TOKEN).
  const nativeVerifier = createTokenVerifier(config.native, await devProviderFor(deps, config, 'native'), {
    jwksRefreshCooldownMs: config.jwksRefreshCooldownMs,
    requiredClaims: [],
  });
  deps.metrics.collections.track('identity-admission', {
    developer_tokens_verified: () => developerVerifier.remembered?.() ?? 0,
    native_tokens_verified: () => nativeVerifier.remembered?.() ?? 0,
  });
  for (const kind of ['DEVELOPER', 'NATIVE'] as const) {
    const provider = kind === 'DEVELOPER' ? config.developer : config.native;
    if (!hasProvider(provider) && !deps.devIdentityDataDir) {
      deps.logger.warn(
        `no ${kind}_JWKS or ${kind}_JWKS_URL configured: every ${kind.toLowerCase()} session is refused ` +
          '(the local development identity provider is only trusted on the embedded development default)',
      );
    }
  }
  const policy = {
    mode: config.nativeAdmissionMode,
    minBuild: config.nativeMinBuild,
    supportedCountries: config.supportedCountries,
  };
  deps.logger.info(policy, 'native admission policy');
  const deviceDenials = new Counter({
    name: 'native_admission_device_denials_total',
    help: 'Native sessions denied by the device check (step 5); enforced="false" counts monitor mode denials not enforced',
    labelNames: ['code', 'enforced'],
    registers: [deps.metrics.registry],
  });

  return [
    bind(identityOps.admitDeveloper, async (request) => ({
      principal: await admitDeveloper(
        { verifier: developerVerifier, invitations, allowedOrigins: config.allowedOrigins },
        request,
      ),
    })),
    // The gateway asks for the e-mails of the members it lists (DeveloperMember.email); it only asks for joined
    // members of the caller's organizations, read from the ledger's snapshot (docs/identity.md, "Member e-mails").
    bind(identityOps.developerEmails, async (request) => {
      const ids = [...new Set(request.identityUserIds)].slice(0, DEVELOPER_EMAILS_MAX);
      const found = await invitations.emailsOf(ids);
      return { emails: [...found].map(([identityUserId, email]) => ({ identityUserId, email })) };
    }),
    bind(identityOps.admitNative, async (request) => ({
      principal: await admitNative(
        {
          verifier: nativeVerifier,
          accounts,
          permits,
          policy,
          log: deps.logger,
          countDeviceDenial: (code, enforced) => deviceDenials.inc({ code, enforced: String(enforced) }),
        },
        request,
      ),
    })),
  ];
}
