// The fault suite's SQL invariants (test/faults/checks.ts) find what they are meant to find: none on a consistent
// ledger, each on the damage it describes.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { installSingleEventFunction } from '../../load/lib/single-event.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { createTestDatabase, sql } from '../support/database.ts';
import { createEventWorld, type EventWorld } from '../support/ledger-fixtures.ts';
import { checkInvariants } from './checks.ts';

describe('fault suite invariants', () => {
  let url: string;
  let world: EventWorld;
  const violated = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await checkInvariants(client)).filter((i) => i.violations > 0).map((i) => i.name);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    await installSingleEventFunction(url); // one decision written as the ledger writes it
    world = await createEventWorld(url, { budgetCredits: 1_000 });
  });

  it('holds on a consistent ledger and names each kind of damage', async () => {
    // The fixtures write budgets without funding: the funding invariant is the only one that sees it.
    expect(await violated()).toEqual(['organization balance + project budgets = recorded funding']);
    await sql(
      url,
      `insert into ledger.audit_log (organization_id, actor, action, target_id, details)
       values ($1, 'test', 'fundOrganization', $1, '{"amountCredits": 1000}')`,
      [world.game.organizationId],
    );
    const decided = await sql<{ o_outcome: string }>(
      url,
      `select o_outcome from ledger.record_event(
         (select key_hash from ledger.keys where id = $1), $2, $3, $4, floor(extract(epoch from now()) * 1000)::bigint,
         decode(repeat('ab', 32), 'hex'), null, 120)`,
      [world.key.id, randomUUID(), world.player.id, world.eventType],
    );
    expect(decided[0]?.o_outcome).toBe('decided');
    expect(await violated()).toEqual([]);

    // An accepted decision without its spend, daily total and minute count.
    await sql(
      url,
      `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
         occurred_at, status, reason, reward_credits, payload_hash)
       values ($1, $2, $3, $4, $5, $6, $7, $8, now(), 'accepted', null, 10, decode(repeat('cd', 32), 'hex'))`,
      [
        randomUUID(),
        world.game.gameId,
        world.game.projectId,
        world.game.organizationId,
        randomUUID(),
        world.player.id,
        world.key.id,
        world.eventType,
      ],
    );
    expect(await violated()).toEqual([
      'game spent = Σ accepted rewards',
      'daily totals = Σ accepted rewards per player and UTC day',
      'minute counters = decisions stored',
    ]);
  });

  it('sees budgets that do not add up and caps exceeded', async () => {
    await sql(url, `update ledger.games set budget_credits = budget_credits + 1 where id = $1`, [world.game.gameId]);
    await sql(url, `update ledger.games set daily_player_cap_credits = 1 where id = $1`, [world.game.gameId]);
    await sql(url, `update ledger.organizations set balance_credits = 5 where id = $1`, [world.game.organizationId]);
    expect(await violated()).toEqual(
      expect.arrayContaining([
        'daily totals within the daily cap',
        'project allocated = Σ game budgets',
        'organization balance + project budgets = recorded funding',
      ]),
    );
  });
});
