// identity-admission: owner of the `identity` schema. Verifies developer and native sessions (jose), keeps
// invitations, native accounts, device permits and the platform switch. Handlers only translate between the
// transport's messages and the domain.
import { identityOps } from '../../runtime/src/contracts/operations.ts';
import type { Database } from '../../runtime/src/db/database.ts';
import { AppError } from '../../runtime/src/errors.ts';
import type { ProgramDeps, ProgramModule } from '../../runtime/src/program.ts';
import { bind } from '../../runtime/src/transport/operation.ts';
import { hasProvider, type IdentityConfig, readIdentityConfig } from './config.ts';
import { admitDeveloper } from './domain/developer-admission.ts';
import { identityMigrations } from './migrations/index.ts';
import { InvitationRepository, type InvitationRow } from './repositories/invitations.ts';
import { PlatformRepository } from './repositories/platform.ts';
import { type DevProvider, loadDevProvider } from './sessions/dev-identity-provider.ts';
import { createTokenVerifier } from './sessions/token-verifier.ts';

const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

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
  database: { migrations: identityMigrations, entities: [] },
  readConfig: readIdentityConfig,
  async create(deps, config) {
    const database = deps.database as Database;
    const invitations = new InvitationRepository(database);
    const platform = new PlatformRepository(database);
    const developerVerifier = createTokenVerifier(
      config.developer,
      await devProviderFor(deps, config, 'developer'),
      config.jwksRefreshCooldownMs,
    );
    if (!hasProvider(config.developer) && !deps.dataDir) {
      deps.logger.warn('no DEVELOPER_JWKS or DEVELOPER_JWKS_URL: every developer session is refused');
    }
    const storeError = (error: unknown): never => {
      if (error instanceof AppError) throw error;
      deps.logger.error({ err: error }, 'identity store failed');
      throw new AppError(503, 'AUTH_UNAVAILABLE', 'The identity store is temporarily unavailable.');
    };
    return {
      name: 'identity-admission',
      services: [
        {
          service: 'identity',
          version: '1.0.0',
          description: 'Developer and native admission, invitations, device permits, platform switch',
          endpoints: [
            bind(identityOps.getPlatformState, async () => ({ enabled: await platform.isEnabled() })),
            bind(identityOps.setPlatformState, async (request) => ({
              enabled: await platform.setEnabled(request.enabled),
            })),
            bind(identityOps.admitDeveloper, async (request) => ({
              principal: await admitDeveloper(
                { verifier: developerVerifier, invitations, allowedOrigins: config.allowedOrigins },
                request,
              ),
            })),
            bind(identityOps.createInvitation, async (request) => {
              if (!EMAIL_PATTERN.test(request.email) || request.email.length > 320) {
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
          ],
        },
      ],
    };
  },
};
