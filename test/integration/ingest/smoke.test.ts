import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

describe('smoke', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem();
  });
  afterAll(async () => system?.stop());

  it('accepts an event', async () => {
    const world = await createEventWorld(system.databaseUrl!);
    const body = eventBody(world);
    const first = expectDecision(await postEvent(system.url, world.key.value, body));
    expect(first).toMatchObject({ status: 'accepted', reason: null, rewardCredits: 10, replayed: false });
    const again = expectDecision(await postEvent(system.url, world.key.value, body));
    expect(again).toEqual({ ...first, replayed: true });
  });
});
