// runtime_collection_entries{program,collection}: every program reports the entries of its in-memory maps keyed by
// tenants' input and of its queues on /metrics (what npm run bench:soak reads at the end of its hour). The all-in-one
// registers what each of the five programs does.
import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem();
});

afterAll(async () => {
  await system?.stop();
});

async function collections(): Promise<Map<string, number>> {
  const text = await (await fetch(`${system.url}/metrics`)).text();
  const found = new Map<string, number>();
  for (const m of text.matchAll(/^runtime_collection_entries\{program="([^"]+)",collection="([^"]+)"\} (\S+)$/gm)) {
    found.set(`${m[1]} ${m[2]}`, Number(m[3]));
  }
  return found;
}

describe('runtime_collection_entries', () => {
  it("lists every program's tenant-keyed maps and queues, with their entries now", async () => {
    const before = await collections();
    expect([...before.keys()].sort()).toEqual(
      expect.arrayContaining([
        'gateway developer_limit_subjects',
        'gateway developer_limit_tokens',
        'gateway fair_reads_developers',
        'gateway live_developers',
        'gateway live_games',
        'identity-admission developer_tokens_verified',
        'identity-admission native_tokens_verified',
        'ingest admission_games',
        'ingest admission_organizations',
        'ingest batcher_events_queued',
        'ingest batcher_keys_in_flight',
        'ingest batcher_keys_in_line',
        'ingest flood_pacer_flood_runs',
        'ingest flood_pacer_resume_at',
        'ingest key_tenants',
        'ledger batcher_events_queued',
        'ledger batcher_keys_in_line',
        'ledger batcher_keys_out',
        'ledger console_read_turns_organizations',
        'ledger console_reads_waiting',
        'ledger member_organizations',
        'ledger simulation_organizations',
        'ledger webhook_messages_in_flight',
        'ledger webhook_organizations_in_flight',
      ]),
    );
    expect(before.get('ingest key_tenants')).toBe(0);

    // A key's first decision teaches the edge its game: one credential kept; nothing waits once it is answered.
    const world = await createEventWorld(system.databaseUrl!);
    expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
    const after = await collections();
    expect(after.get('ingest key_tenants')).toBe(1);
    expect(after.get('ingest admission_games')).toBe(0);
    expect(after.get('ingest batcher_events_queued')).toBe(0);
    expect(after.get('ledger batcher_keys_in_line')).toBe(0);
  });
});
