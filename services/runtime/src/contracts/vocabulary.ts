// The API document's vocabulary: every pattern, enumeration and limit that more than one program, the OpenAPI
// document or the GraphQL schema uses, spelled once. The edges validate with it, the state owners check with it,
// the OpenAPI document and the JSON Schema fragments (json-schema.ts beside this file) are built from it.
// `npm run check` runs .ci/check-vocabulary.ts, which fails when one of these literals is spelled anywhere else in the
// shipped code. The database's CHECK constraints are the one other spelling (migrations are history and never
// edited); test/integration/migrations.test.ts compares them with these values.
//
// Other rules live in modules named for them: UUIDs in ../validation/uuid.ts, occurredAt's grammar in
// services/runtime/src/contracts/occurred-at.ts, metadata limits in services/ingest/src/domain/metadata.ts, error codes
// in ./error-codes.ts.

/** Event types (spec: Reward rule, Event input): a lower-case letter, then up to 63 of a-z 0-9 _ . - */
export const EVENT_TYPE_PATTERN = '^[a-z][a-z0-9_.-]{0,63}$';
export const EVENT_TYPE_LENGTH_MAX = 64;
export const EVENT_TYPE_REGEX: RegExp = new RegExp(EVENT_TYPE_PATTERN);

/** Credit amounts are integers from 0 to 1e12 (spec: Limits). */
export const CREDITS_MAX = 1_000_000_000_000;
export const CREDITS_MAX_BIGINT = BigInt(CREDITS_MAX);

/** Game platforms (spec: Game.platform). */
export const PLATFORMS = ['android', 'ios', 'other', 'unity', 'unreal', 'web'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Game statuses (spec: Game.status). */
export const GAME_STATUSES = ['active', 'paused'] as const;
export type GameStatus = (typeof GAME_STATUSES)[number];

/** Roles of organization members (spec: Member.role); an owner is made by creating the organization. */
export const MEMBER_ROLES = ['admin', 'owner', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** Event decision statuses (spec: DeveloperEvent.status). */
export const EVENT_STATUSES = ['accepted', 'rejected'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Reasons of a rejected event decision (spec: DeveloperEvent.reason). */
export const DECISION_REASONS = [
  'daily_player_cap',
  'game_budget_exhausted',
  'game_paused',
  'game_payout_ceiling',
  'player_not_linked',
  'project_budget_exhausted',
  'project_payout_ceiling',
  'rate_limited',
  'timestamp_out_of_window',
  'unknown_or_inactive_rule',
  'user_unavailable',
] as const;

/**
 * The same reasons in the order the decision checks them (CONTRACT section 7). The SQL spells it twice, tested to
 * match this list (services/ledger/src/simulation/check-order.test.ts): the CASE of ledger.decision_reason (without
 * the two project reasons, which cannot follow a passed game budget check) and simulate_rule's reason array.
 */
export const DECISION_CHECK_ORDER = [
  'rate_limited',
  'timestamp_out_of_window',
  'unknown_or_inactive_rule',
  'game_paused',
  'player_not_linked',
  'user_unavailable',
  'daily_player_cap',
  'game_budget_exhausted',
  'project_budget_exhausted',
  'game_payout_ceiling',
  'project_payout_ceiling',
] as const;
