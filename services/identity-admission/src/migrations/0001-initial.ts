// The identity schema: invitations of developers, native platform accounts, device permits, the platform switch.
import { Migration } from '@mikro-orm/migrations';

export class IdentityInitial extends Migration {
  override name = '0001-initial';

  override up(): void {
    this.addSql(`create table identity.invitations (
      id uuid primary key,
      email text not null check (char_length(email) between 3 and 320),
      status text not null check (status in ('active', 'revoked')),
      identity_user_id text check (identity_user_id is null or char_length(identity_user_id) between 1 and 200),
      can_create_unlimited_organization boolean not null default false,
      created_at timestamptz not null default now(),
      bound_at timestamptz,
      revoked_at timestamptz,
      constraint bound_has_subject check ((identity_user_id is null) = (bound_at is null)),
      constraint revoked_has_time check ((status = 'revoked') = (revoked_at is not null))
    )`);
    this.addSql(
      `create unique index invitations_one_active_per_email on identity.invitations (lower(email)) where status = 'active'`,
    );
    this.addSql(`create index invitations_by_subject on identity.invitations (identity_user_id)`);

    this.addSql(`create table identity.native_accounts (
      credits_user_id uuid primary key,
      status text not null check (status in ('active', 'disabled')),
      username text check (username is null or char_length(username) between 1 and 100),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);

    this.addSql(`create table identity.device_permits (
      id uuid primary key,
      session_id text not null check (char_length(session_id) between 1 and 200),
      credits_user_id uuid not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index device_permits_by_session on identity.device_permits (session_id, expires_at desc)`);

    this.addSql(`create table identity.platform_state (
      id boolean primary key default true check (id),
      enabled boolean not null,
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`insert into identity.platform_state (id, enabled) values (true, true)`);
  }
}
