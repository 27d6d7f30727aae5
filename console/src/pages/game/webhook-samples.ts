// A sample body per message type, from the shapes docs/webhooks.md documents ("A delivery"): what a receiver can
// expect before its endpoint got one. The ids and figures are made up; the fields and their order are the service's
// (a decision's data is its GameEventResult without `replayed`, plus `gameTime`; the other types' data is stored as
// jsonb, whose text puts shorter keys first). test/unit/console-webhook-samples.test.ts holds them to the service's
// own rendering.

const GAME = '0b8f6f0e-6c1e-4f3a-9a57-0d4c2f1b7e21';
const ORGANIZATION = '5d2a9c44-1f0b-4c8e-b7b3-8e61a0f4c9d2';
const TIMESTAMP = '2026-11-28T14:24:05.123Z';

const decision = (status: 'accepted' | 'rejected') => ({
  id: status === 'accepted' ? '7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f' : '8d2f3e4a-5b6c-4d7e-9f0a-1b2c3d4e5f6a',
  eventId: '3f2c9a1b-7e6d-4c5b-a4f3-e2d1c0b9a8f7',
  gameId: GAME,
  organizationId: ORGANIZATION,
  playerId: '9a8b7c6d-5e4f-4a3b-b2c1-d0e9f8a7b6c5',
  eventType: 'level.complete',
  occurredAt: '2026-11-28T14:24:04.900Z',
  status,
  reason: status === 'accepted' ? null : 'daily_player_cap',
  rewardCredits: status === 'accepted' ? 25 : 0,
  createdAt: TIMESTAMP,
  gameTime: TIMESTAMP,
  mode: 'sandbox',
});

const budget = (spentCredits: number) => ({
  gameId: GAME,
  spentCredits,
  budgetCredits: 100_000,
  organizationId: ORGANIZATION,
  remainingCredits: 100_000 - spentCredits,
});

/** The data of each message type, in the order the types are offered. */
export const SAMPLE_DATA: Record<string, Record<string, unknown>> = {
  'decision.accepted': decision('accepted'),
  'decision.rejected': decision('rejected'),
  'game.budget_low': budget(90_500),
  'game.budget_exhausted': budget(100_000),
  'game.paused': { gameId: GAME, status: 'paused', organizationId: ORGANIZATION },
  'game.resumed': { gameId: GAME, status: 'active', organizationId: ORGANIZATION },
  'webhook.test': {
    gameId: GAME,
    organizationId: ORGANIZATION,
    webhookEndpointId: '1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6',
  },
};

/** When each type is sent, in a sentence. */
export const SAMPLE_WHEN: Record<string, string> = {
  'decision.accepted': 'Each fresh decision that paid the player (replays report nothing).',
  'decision.rejected': 'Each fresh decision that paid nothing, with its reason.',
  'game.budget_low': "A decision left the game's budget below 10 % of it.",
  'game.budget_exhausted': 'The first decision rejected because the budget is used up (once per budget amount).',
  'game.paused': "The game's status was set to paused.",
  'game.resumed': "The game's status was set back to active.",
  'webhook.test': 'Send test, whatever the endpoint’s event types.',
};

/** A sample body of `type`, indented as the console shows payloads formatted. */
export function samplePayload(type: string): string {
  return JSON.stringify({ type, timestamp: TIMESTAMP, data: SAMPLE_DATA[type] ?? {} }, null, 2);
}
