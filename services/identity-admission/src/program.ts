// identity-admission: owner of the `identity` schema. Verifies developer and native sessions (jose), keeps
// invitations, native accounts, device permits and the platform switch.
import { AppError } from '../../runtime/src/errors.ts';
import type { EnvReader } from '../../runtime/src/config.ts';
import { identityOps } from '../../runtime/src/contracts/operations.ts';
import type { Database } from '../../runtime/src/db/database.ts';
import type { ProgramModule } from '../../runtime/src/program.ts';
import { bind } from '../../runtime/src/transport/operation.ts';
import { identityMigrations } from './migrations/index.ts';

export interface IdentityConfig {
  allowedOrigins: string[];
}

export const identityAdmission: ProgramModule<IdentityConfig> = {
  name: 'identity-admission',
  database: { migrations: identityMigrations, entities: [] },
  readConfig(reader: EnvReader): IdentityConfig {
    return { allowedOrigins: reader.list('ALLOWED_ORIGINS') };
  },
  async create(deps) {
    const database = deps.database as Database;
    return {
      name: 'identity-admission',
      services: [
        {
          service: 'identity',
          version: '1.0.0',
          description: 'Developer and native admission, invitations, device permits, platform switch',
          endpoints: [
            bind(identityOps.getPlatformState, async () => {
              const rows = await database.query<{ enabled: boolean }>('select enabled from identity.platform_state');
              return { enabled: rows[0]?.enabled ?? true };
            }),
            bind(identityOps.admitDeveloper, async (request) => {
              if (!/^Bearer \S+$/i.test(request.authorization)) {
                throw new AppError(401, 'UNAUTHORIZED', 'A developer session token is required.');
              }
              throw new AppError(401, 'UNAUTHORIZED', 'The developer session token is not valid.');
            }),
          ],
        },
      ],
    };
  },
};
