// Device permits live from 1 second to 1 day (the operator API's expiresInSeconds 1..86400), enforced by the
// database too.
import { Migration } from '@mikro-orm/migrations';
import { APPLIED_BY_EVERY_RELEASE } from '#runtime/db/migrations.ts';

export class IdentityPermitLifetime extends Migration {
  override name = '0002-permit-lifetime';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'constraint-missing-not-valid': APPLIED_BY_EVERY_RELEASE,
  };

  override up(): void {
    this.addSql(`alter table identity.device_permits
      add constraint permit_lifetime
      check (expires_at > created_at and expires_at <= created_at + interval '1 day')`);
  }
}
