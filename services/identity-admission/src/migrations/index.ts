// The identity schema's migrations, in the order they run (each file says what it changes and why).
import type { MigrationSet } from '#runtime/db/migrations.ts';
import { IdentityInitial } from './0001-initial.ts';
import { IdentityPermitLifetime } from './0002-permit-lifetime.ts';
import { IdentityOperatorAudit } from './0003-operator-audit.ts';

/** The identity schema's migrations, in order. Append new ones; never edit an applied one. */
export const identityMigrations: MigrationSet = {
  schema: 'identity',
  migrations: [
    { name: '0001-initial', class: IdentityInitial },
    { name: '0002-permit-lifetime', class: IdentityPermitLifetime },
    { name: '0003-operator-audit', class: IdentityOperatorAudit },
  ],
};
