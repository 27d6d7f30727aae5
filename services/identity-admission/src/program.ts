// identity-admission: owner of the `identity` schema. Verifies developer and native sessions (jose), keeps
// invitations, native accounts, device permits and the platform switch. Handlers only translate between the
// transport's messages and the domain.
import { Counter } from 'prom-client';
import { identityOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import { isDatabaseFailure } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import type { ProgramDeps, ProgramModule } from '#runtime/program.ts';
import { bind } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { PACKAGE_VERSION } from '#runtime/version.ts';
import { hasProvider, type IdentityConfig, readIdentityConfig } from './config.ts';
import { admitDeveloper, DEVELOPER_REQUIRED_CLAIMS } from './domain/developer-admission.ts';
import { isValidEmail, isValidSessionId, isValidUsername, SESSION_ID_MAX, USERNAME_MAX } from './domain/names.ts';
import { admitNative } from './domain/native-admission.ts';
import { identityMigrations } from './migrations/index.ts';
import { DevicePermitRepository, type DevicePermitRow } from './repositories/device-permits.ts';
import { InvitationRepository, type InvitationRow } from './repositories/invitations.ts';
import { NativeAccountRepository, type NativeAccountRow } from './repositories/native-accounts.ts';
import { PlatformRepository } from './repositories/platform.ts';
import { type DevProvider, loadDevProvider } from './sessions/dev-identity-provider.ts';
import { createTokenVerifier } from './sessions/token-verifier.ts';

const PERMIT_SECONDS_MAX = 86_400;

export function invitationMessage(row: InvitationRow) {
  return {
    id: row.id,
    email: row.email,
    status: row.status,
    identityUserId: row.identity_user_id ?? undefined,
    canCreateUnlimitedOrganization: row.can_create_unlimited_organization,
    createdAt: row.created_at,
    boundAt: row.bound_at ?? undefined,
  };
}

export function nativeAccountMessage(row: NativeAccountRow) {
  return {
    creditsUserId: row.credits_user_id,
    status: row.status,
    username: row.username ?? undefined,
    createdAt: row.created_at,
  };
}

export function devicePermitMessage(row: DevicePermitRow) {
  return {
    id: row.id,
    sessionId: row.session_id,
    creditsUserId: row.credits_user_id,
    expiresAt: row.expires_at,
  };
}

const invalid = (message: string) => new AppError(400, 'INVALID_REQUEST', message);

/** The development provider is used only when no JWKS is configured and the process has a DATA_DIR (npm start). */
async function devProviderFor(deps: ProgramDeps, config: IdentityConfig, kind: 'developer' | 'native') {
  const provider = kind === 'developer' ? config.developer : config.native;
  if (hasProvider(provider) || !deps.dataDir) return undefined;
  const dev: DevProvider = await loadDevProvider(deps.dataDir, kind);
  deps.logger.warn(
    { kind, issuer: dev.issuer },
    `no ${kind.toUpperCase()}_JWKS configured: trusting the local development identity provider`,
  );
  return dev;
}

export const identityAdmission: ProgramModule<IdentityConfig> = {
  name: 'identity-admission',
  database: { migrations: identityMigrations },
  readConfig: readIdentityConfig,
  async create(deps, config) {
    const database = deps.database as Database;
    const invitations = new InvitationRepository(database);
    const accounts = new NativeAccountRepository(database);
    const permits = new DevicePermitRepository(database);
    const platform = new PlatformRepository(database);
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
    deps.logger.info(
      {
        mode: config.nativeAdmissionMode,
        minBuild: config.nativeMinBuild,
        supportedCountries: config.supportedCountries,
      },
      'native admission policy',
    );
    const deviceDenials = new Counter({
      name: 'native_admission_device_denials_total',
      help: 'Native sessions denied by the device check (step 5); enforced="false" counts monitor mode denials not enforced',
      labelNames: ['code', 'enforced'],
      registers: [deps.metrics.registry],
    });
    // Operator calls and the platform switch: a failing store (db/failures.ts) is a 503 the edges relabel for their
    // route; anything else is a bug (500).
    const storeError = (error: unknown): never => {
      if (error instanceof AppError || !isDatabaseFailure(error)) throw error;
      deps.logger.warn({ err: error }, 'identity store unavailable');
      throw new AppError(503, 'PLATFORM_UNAVAILABLE', 'The identity store is temporarily unavailable.');
    };
    return {
      name: 'identity-admission',
      services: [
        {
          service: 'identity',
          // 1.1.0: AdmitNative, PutNativeAccount, CreateDevicePermit.
          version: PACKAGE_VERSION,
          description: 'Developer and native admission, invitations, device permits, platform switch',
          endpoints: [
            bind(identityOps.getPlatformState, async () => ({
              enabled: await platform.isEnabled().catch(storeError),
            })),
            bind(identityOps.setPlatformState, async (request) => ({
              enabled: await platform.setEnabled(request.enabled).catch(storeError),
            })),
            bind(identityOps.admitDeveloper, async (request) => ({
              principal: await admitDeveloper(
                { verifier: developerVerifier, invitations, allowedOrigins: config.allowedOrigins },
                request,
              ),
            })),
            bind(identityOps.admitNative, async (request) => {
              const principal = await admitNative(
                {
                  verifier: nativeVerifier,
                  accounts,
                  permits,
                  policy: {
                    mode: config.nativeAdmissionMode,
                    minBuild: config.nativeMinBuild,
                    supportedCountries: config.supportedCountries,
                  },
                  log: deps.logger,
                  countDeviceDenial: (code, enforced) => deviceDenials.inc({ code, enforced: String(enforced) }),
                },
                request,
              );
              return { principal };
            }),
            bind(identityOps.createInvitation, async (request) => {
              if (!isValidEmail(request.email)) {
                throw new AppError(400, 'INVALID_REQUEST', 'email must be an e-mail address.');
              }
              const row = await invitations
                .create(request.email, request.canCreateUnlimitedOrganization)
                .catch(storeError);
              if (!row) throw new AppError(409, 'conflict', 'This e-mail already has an active invitation.');
              return { invitation: invitationMessage(row) };
            }),
            bind(identityOps.listInvitations, async () => ({
              invitations: (await invitations.list().catch(storeError)).map(invitationMessage),
            })),
            bind(identityOps.revokeInvitation, async (request) => {
              const row = await invitations.revoke(request.id).catch(storeError);
              if (!row) throw new AppError(404, 'not_found', 'No invitation with this id.');
              return { invitation: invitationMessage(row) };
            }),
            bind(identityOps.putNativeAccount, async (request) => {
              if (!isUuid(request.creditsUserId)) throw invalid('creditsUserId must be a UUID.');
              if (request.status !== 'active' && request.status !== 'disabled') {
                throw invalid('status must be active or disabled.');
              }
              const username = request.setUsername ? (request.username ?? null) : undefined;
              if (typeof username === 'string' && !isValidUsername(username)) {
                throw invalid(`username must be 1 to ${USERNAME_MAX} characters without control characters.`);
              }
              const row = await accounts.put(request.creditsUserId, request.status, username).catch(storeError);
              return { account: nativeAccountMessage(row) };
            }),
            bind(identityOps.createDevicePermit, async (request) => {
              if (!isValidSessionId(request.sessionId)) {
                throw invalid(`sessionId must be 1 to ${SESSION_ID_MAX} characters without control characters.`);
              }
              if (!isUuid(request.creditsUserId)) throw invalid('creditsUserId must be a UUID.');
              if (request.expiresInSeconds < 1 || request.expiresInSeconds > PERMIT_SECONDS_MAX) {
                throw invalid(`expiresInSeconds must be from 1 to ${PERMIT_SECONDS_MAX}.`);
              }
              const row = await permits
                .create(request.sessionId, request.creditsUserId, request.expiresInSeconds)
                .catch(storeError);
              return { permit: devicePermitMessage(row) };
            }),
          ],
        },
      ],
    };
  },
};
