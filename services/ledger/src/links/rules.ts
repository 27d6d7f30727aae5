// The rules of link intents (CONTRACT section 6) as functions of what the ledger read inside its transaction. The
// first failing check names the refusal; the endpoints map refusals to the API's codes.

export const EXTERNAL_PLAYER_ID_MAX = 200;

/** `externalPlayerId`: 1 to 200 characters (code points), no C0 control character (U+0000-U+001F) nor DEL (U+007F). */
export function isValidExternalPlayerId(id: string): boolean {
  if (id === '' || [...id].length > EXTERNAL_PLAYER_ID_MAX) return false;
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    if (code <= 0x1f || code === 0x7f) return false;
  }
  return true;
}

/** A link intent as the ledger found it by its token's hash. */
export interface IntentState {
  consumed: boolean;
  /** `expires_at` is at or before now: valid for exactly 10 minutes after creation. */
  expired: boolean;
}

export type LinkRefusal =
  /** No intent has this token: 404 invalid_link. */
  | 'unknown'
  /** Consumed by an earlier approval: 409 invalid_link. */
  | 'used'
  /** Past its 10 minutes: 409 invalid_link. */
  | 'expired'
  /** The intent's player is linked already (through another intent): 409 already_linked. */
  | 'player_linked'
  /** The approving account is linked to another player of the same game: 409 already_linked. */
  | 'account_linked';

/** Whether a token can still be used; used wins over expired (both are final). */
export function intentRefusal(intent: IntentState | undefined): LinkRefusal | undefined {
  if (!intent) return 'unknown';
  if (intent.consumed) return 'used';
  if (intent.expired) return 'expired';
  return undefined;
}

/** Inspection: the token, then the player (an already linked player cannot be linked again). */
export function inspectionRefusal(
  intent: IntentState | undefined,
  player: { linked: boolean } | undefined,
): LinkRefusal | undefined {
  const refusal = intentRefusal(intent);
  if (refusal) return refusal;
  if (player?.linked) return 'player_linked';
  return undefined;
}

/** Approval: the token, the player, then the account (one player per account and game). */
export function approvalRefusal(
  intent: IntentState | undefined,
  player: { linked: boolean } | undefined,
  accountLinkedElsewhere: boolean,
): LinkRefusal | undefined {
  const refusal = inspectionRefusal(intent, player);
  if (refusal) return refusal;
  if (accountLinkedElsewhere) return 'account_linked';
  return undefined;
}
