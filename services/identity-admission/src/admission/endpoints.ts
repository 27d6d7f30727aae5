// Transport handlers of the admissions (AdmitDeveloper, AdmitNative): they build the session verifiers from the
// configuration and hand each request to the domain (domain/developer-admission.ts, domain/native-admission.ts).
import { Counter } from 'prom-client';
import { identityOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { hasProvider, type IdentityConfig } from '../config.ts';
import { admitDeveloper, DEVELOPER_REQUIRED_CLAIMS } from '../domain/developer-admission.ts';
import { admitNative } from '../domain/native-admission.ts';
import { DevicePermitRepository } from '../repositories/device-permits.ts';
import { InvitationRepository } from '../repositories/invitations.ts';
import { NativeAccountRepository } from '../repositories/native-accounts.ts';
import { type DevProvider, loadDevProvider } from '../sessions/dev-identity-provider.ts';
import { createTokenVerifier } from '../sessions/token-verifier.ts';

export interface AdmissionEndpointDeps {
  database: Database;
  logger: Logger;
  metrics: Metrics;
  /** DATA_DIR of the all-in-one process (development identity provider keys); undefined when run alone. */
  dataDir?: string | undefined;
}

/** The development provider is used only when no JWKS is configured and the process has a DATA_DIR (npm start). */
async function devProviderFor(deps: AdmissionEndpointDeps, config: IdentityConfig, kind: 'developer' | 'native') {
  const provider = kind === 'developer' ? config.developer : config.native;
  if (hasProvider(provider) || !deps.dataDir) return undefined;
  const dev: DevProvider = await loadDevProvider(deps.dataDir, kind);
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
  const developerVerifier = createTokenVerifier(config.developer, await devProviderFor(deps, config, 'developer'), {
    jwksRefreshCooldownMs: config.jwksRefreshCooldownMs,
    requiredClaims: DEVELOPER_REQUIRED_CLAIMS,
  });
  // `sub` and `sid` are checked by the native admission itself (401 INVALID_TOKEN_PAYLOAD, not INVALID_TOKEN).
  const nativeVerifier = createTokenVerifier(config.native, await devProviderFor(deps, config, 'native'), {
    jwksRefreshCooldownMs: config.jwksRefreshCooldownMs,
    requiredClaims: [],
  });
  for (const kind of ['DEVELOPER', 'NATIVE'] as const) {
    const provider = kind === 'DEVELOPER' ? config.developer : config.native;
    if (!hasProvider(provider) && !deps.dataDir) {
      deps.logger.warn(`no ${kind}_JWKS or ${kind}_JWKS_URL: every ${kind.toLowerCase()} session is refused`);
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
