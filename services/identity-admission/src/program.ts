// identity-admission: owner of the `identity` schema. Verifies developer and native sessions (jose), keeps
// invitations, native accounts, device permits and the platform switch. This file only wires: the transport
// handlers are in admission/endpoints.ts and operator/endpoints.ts, the decisions in domain/, the SQL in
// repositories/.
import { stateOwner } from '#runtime/program.ts';
import { PACKAGE_VERSION } from '#runtime/version.ts';
import { admissionEndpoints } from './admission/endpoints.ts';
import { type IdentityConfig, readIdentityConfig } from './config.ts';
import { identityMigrations } from './migrations/index.ts';
import { operatorEndpoints } from './operator/endpoints.ts';

export const identityAdmission = stateOwner<IdentityConfig>({
  name: 'identity-admission',
  database: { migrations: identityMigrations },
  readConfig: readIdentityConfig,
  async create(deps, config) {
    const { database } = deps;
    return {
      name: 'identity-admission',
      services: [
        {
          service: 'identity',
          // 1.1.0: AdmitNative, PutNativeAccount, CreateDevicePermit.
          version: PACKAGE_VERSION,
          description: 'Developer and native admission, invitations, device permits, platform switch',
          endpoints: [
            ...operatorEndpoints({ database, logger: deps.logger }),
            ...(await admissionEndpoints(
              { database, logger: deps.logger, metrics: deps.metrics, devIdentityDataDir: deps.devIdentityDataDir },
              config,
            )),
          ],
        },
      ],
    };
  },
});
