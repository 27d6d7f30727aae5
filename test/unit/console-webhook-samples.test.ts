// The Webhooks tab's sample payloads (console/src/pages/game/webhook-samples.ts) are the service's shapes: a decision's
// sample is what the ledger renders for a decision (services/ledger/src/webhooks/body.ts), field for field and in its
// order, with GameEventResult's fields less `replayed`, plus `gameTime`; the other types carry the fields
// docs/webhooks.md lists, in the order PostgreSQL's jsonb text gives them (shorter keys first, then bytewise).
import { gameEventResultSchema } from '#runtime/contracts/ingest-shapes.ts';
import { SAMPLE_DATA, SAMPLE_WHEN, samplePayload } from '../../console/src/pages/game/webhook-samples.ts';
import { WEBHOOK_EVENT_TYPES } from '../../services/ledger/src/console/action-service.ts';
import { messageBody } from '../../services/ledger/src/webhooks/body.ts';

/** Keys in jsonb's output order. */
const jsonbOrder = (keys: string[]) =>
  [...keys].sort((a, b) => a.length - b.length || (Buffer.from(a) < Buffer.from(b) ? -1 : a === b ? 0 : 1));

describe('webhook sample payloads', () => {
  it('has one per event type and webhook.test, each with when it is sent', () => {
    expect(Object.keys(SAMPLE_DATA)).toEqual([...WEBHOOK_EVENT_TYPES, 'webhook.test']);
    expect(Object.keys(SAMPLE_WHEN).sort()).toEqual(Object.keys(SAMPLE_DATA).sort());
  });

  it.each(['decision.accepted', 'decision.rejected'])('%s is what the ledger renders for a decision', (type) => {
    const sample = SAMPLE_DATA[type] as Record<string, never>;
    const rendered = JSON.parse(
      messageBody({
        eventType: type,
        createdAt: '2026-11-28T14:24:05.123Z',
        data: undefined,
        decision: { ...sample, reason: sample.reason ?? undefined } as never,
      }),
    ) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(JSON.stringify(rendered.data)).toBe(JSON.stringify(sample));
    expect(JSON.parse(samplePayload(type))).toEqual(rendered);
    const fields = gameEventResultSchema.required.filter((f) => f !== 'replayed');
    expect(Object.keys(sample).sort()).toEqual([...fields, 'gameTime'].sort());
  });

  it.each([
    ['game.budget_low', ['gameId', 'organizationId', 'budgetCredits', 'spentCredits', 'remainingCredits']],
    ['game.budget_exhausted', ['gameId', 'organizationId', 'budgetCredits', 'spentCredits', 'remainingCredits']],
    ['game.paused', ['gameId', 'organizationId', 'status']],
    ['game.resumed', ['gameId', 'organizationId', 'status']],
    ['webhook.test', ['webhookEndpointId', 'gameId', 'organizationId']],
  ])('%s carries the documented fields in jsonb order', (type, fields) => {
    expect(Object.keys(SAMPLE_DATA[type]!)).toEqual(jsonbOrder(fields));
  });

  it('budget figures add up', () => {
    for (const type of ['game.budget_low', 'game.budget_exhausted']) {
      const data = SAMPLE_DATA[type] as { budgetCredits: number; spentCredits: number; remainingCredits: number };
      expect(data.budgetCredits - data.spentCredits).toBe(data.remainingCredits);
    }
    expect((SAMPLE_DATA['game.budget_low'] as { remainingCredits: number }).remainingCredits * 10).toBeLessThan(
      100_000,
    );
  });
});
