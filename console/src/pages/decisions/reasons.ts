// Every decision reason in plain words: what happened, and what fixes it (the checks of CONTRACT section 7, in the
// order the ledger makes them). The records page's detail panel shows these; the table shows the short label.

export interface ReasonText {
  /** A few words for the table and the filter menu. */
  label: string;
  /** What happened, as a sentence. */
  what: string;
  /** What fixes it, as a sentence. */
  fix: string;
  /** Where the fix is made: the game's page, its project's, its organization's, or nowhere in the console. */
  where: 'game' | 'project' | 'organization' | 'none';
}

/** The rejection reasons in the order the ledger checks them. */
export const REASONS: Record<string, ReasonText> = {
  rate_limited: {
    label: 'too many events this minute',
    what: 'The game sent more fresh events in this UTC minute than its per-minute limit allows: 120 events a minute unless the operator set EVENT_RATE_LIMIT_PER_MINUTE otherwise.',
    fix: 'Spread the game server’s events over time (queue them). This decision stays as it is: send the event again with a new eventId once the minute is over.',
    where: 'none',
  },
  timestamp_out_of_window: {
    label: 'occurredAt too far from now',
    what: 'The event’s occurredAt was more than 5 minutes before or after the moment the service received it.',
    fix: 'Send occurredAt from the game server’s clock at the moment of the event, keep that clock in sync (NTP), and send events within 5 minutes.',
    where: 'none',
  },
  unknown_or_inactive_rule: {
    label: 'no active rule for this event type',
    what: 'The game has no active rule for this event type, so there is no reward to give.',
    fix: 'Create a rule for this event type on the game’s page, or reactivate its rule; check the event type’s spelling.',
    where: 'game',
  },
  game_paused: {
    label: 'game paused',
    what: 'The game was paused: a paused game rewards nothing.',
    fix: 'Set the game’s status back to active on the game’s page.',
    where: 'game',
  },
  player_not_linked: {
    label: 'player not linked',
    what: 'The player has not linked a platform account yet, so there is nobody to pay.',
    fix: 'Have the game server create a link intent for this player (POST /api/game-sdk/v2/link-intents) and the player approve it in the app.',
    where: 'none',
  },
  user_unavailable: {
    label: 'player’s account disabled',
    what: 'The platform account linked to this player is disabled.',
    fix: 'Nothing in the console changes this: the account must be active again (ask the platform’s operator).',
    where: 'none',
  },
  daily_player_cap: {
    label: 'daily player cap reached',
    what: 'This reward would have taken the player past the game’s daily cap per player (credits per UTC day).',
    fix: 'Raise the game’s daily player cap on the game’s page, or let the player earn again on the next UTC day.',
    where: 'game',
  },
  game_budget_exhausted: {
    label: 'game budget used up',
    what: 'The game’s budget is used up: less was left than this reward.',
    fix: 'Allocate credits to this game on its page (from its project’s budget).',
    where: 'game',
  },
  project_budget_exhausted: {
    label: 'project budget used up',
    what: 'The project’s budget had too little left for this reward.',
    fix: 'Allocate credits to the project (from the organization’s balance), then to this game.',
    where: 'project',
  },
  game_payout_ceiling: {
    label: 'game payout ceiling reached',
    what: 'Paying this reward would have taken the game past its payout ceiling (the most it may ever pay).',
    fix: 'Raise the game’s payout ceiling on its page.',
    where: 'game',
  },
  project_payout_ceiling: {
    label: 'project payout ceiling reached',
    what: 'Paying this reward would have taken the project past its payout ceiling.',
    fix: 'Raise the project’s payout ceiling on its page.',
    where: 'project',
  },
};

/** The short label of a reason (the code itself for one this console does not know yet). */
export const reasonLabel = (reason: string) => REASONS[reason]?.label ?? reason;

/**
 * Where a rejection is fixed in the console: the game's Rules tab for a missing rule, the game's page for its
 * budget, cap or status, the project's page for the project's; undefined when the fix is not in the console.
 */
export function fixAddress(
  reason: string | null,
  game: { id: string; projectId: string } | undefined,
): string | undefined {
  const where = reason ? REASONS[reason]?.where : undefined;
  if (!game || !where) return undefined;
  if (where === 'game') return `#/game/${game.id}/${reason === 'unknown_or_inactive_rule' ? 'rules' : 'overview'}`;
  if (where === 'project') return `#/project/${game.projectId}`;
  return undefined;
}
