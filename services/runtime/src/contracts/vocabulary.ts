// Enumerations of the API document shared by several programs (one spelling for validation, OpenAPI and SQL).

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

export type DecisionReason = (typeof DECISION_REASONS)[number];
