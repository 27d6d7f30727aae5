// Webhook limits of the contract (CONTRACT section 11.2), spelled once for the console action and the migration that
// makes the database hold them.

/** Most webhook endpoints of one game. */
export const WEBHOOK_ENDPOINTS_PER_GAME_MAX = 20;

/** The transaction-scoped advisory lock key that serializes the creation of one game's endpoints. */
export function endpointsOfGameLockKey(gameId: string): string {
  return `ledger.webhook_endpoints:${gameId}`;
}
