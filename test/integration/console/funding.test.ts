// Funding as a ledger under concurrency: many fundings and allocations at once against one organization never
// overspend, the totals add up afterwards, and the fixed lock order means no deadlock (every answer is a success or
// a rule's 400, never a 5xx).
import { sql } from '../../support/database.ts';
import { type ApiResponse, startTestSystem, type TestSystem } from '../../support/system.ts';
import { act, type Developer, developer, expectData, expectError, ok, snapshot } from './helpers.ts';

let system: TestSystem;
let dev: Developer;

beforeAll(async () => {
  // The races below check totals, not latency: 260 actions at once queue for the ledger's connections, and on a loaded
  // machine the default 5 s request timeout would turn some into 503s that say nothing about the rule under test.
  system = await startTestSystem({ env: { NATS_REQUEST_TIMEOUT_MS: '60000' } });
  dev = await developer(system);
});

afterAll(async () => {
  await system?.stop();
});

const db = (text: string, params: unknown[] = []) => sql(system.databaseUrl!, text, params);

/** Splits answers into successes and the named 400s; anything else fails the test. */
function tally(responses: ApiResponse[], allowed: string[]): { ok: number[]; refused: Record<string, number> } {
  const okIndexes: number[] = [];
  const refused: Record<string, number> = {};
  responses.forEach((response, index) => {
    if (response.status === 200) {
      expectData(response, 'DeveloperActionResult');
      okIndexes.push(index);
      return;
    }
    const code = response.body?.error?.code;
    if (response.status !== 400 || !allowed.includes(code)) {
      throw new Error(`unexpected answer ${response.status} ${JSON.stringify(response.body)}`);
    }
    expectError(response, 400, code);
    refused[code] = (refused[code] ?? 0) + 1;
  });
  return { ok: okIndexes, refused };
}

describe('concurrent funding and allocation of one organization', () => {
  it('never overspends and the totals add up', async () => {
    const organizationId = (await ok(system, dev.token, { type: 'createOrganization', name: 'Busy' })).id;
    await ok(system, dev.token, { type: 'fundOrganization', organizationId, amountCredits: 500 });
    const projects: string[] = [];
    for (let i = 0; i < 4; i++) {
      projects.push(
        (
          await ok(system, dev.token, {
            type: 'createProject',
            organizationId,
            name: `P${i}`,
            maxPayoutCredits: 1_000_000,
          })
        ).id,
      );
    }
    const games: Array<{ id: string; projectId: string }> = [];
    for (const projectId of projects.slice(0, 2)) {
      for (let i = 0; i < 3; i++) {
        const id = (
          await ok(system, dev.token, {
            type: 'createGame',
            projectId,
            name: `G${i}`,
            platform: 'web',
            maxPayoutCredits: 1_000_000,
            dailyPlayerCapCredits: 10,
          })
        ).id;
        games.push({ id, projectId });
      }
    }

    // 40 fundings of 30 (1,200 in all) race 160 project allocations of 5..20 (about 2,000 asked) and 60 game
    // allocations of 10 out of those project budgets.
    const actions: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 40; i++) actions.push({ type: 'fundOrganization', organizationId, amountCredits: 30 });
    for (let i = 0; i < 160; i++) {
      actions.push({ type: 'allocateProject', projectId: projects[i % 4], amountCredits: 5 + (i % 16) });
    }
    for (let i = 0; i < 60; i++)
      actions.push({ type: 'allocateGame', gameId: games[i % games.length]!.id, amountCredits: 10 });
    // Interleave deterministically so that every kind is in flight at once.
    const order = actions.map((_, i) => i).sort((a, b) => ((a * 7919) % 263) - ((b * 7919) % 263));
    const responses = new Array<ApiResponse>(actions.length);
    await Promise.all(
      order.map(async (index) => {
        responses[index] = await act(system, dev.token, actions[index]!);
      }),
    );
    const { ok: succeeded, refused } = tally(responses, ['insufficient_funds']);

    const sumOf = (type: string) =>
      succeeded
        .map((i) => actions[i]!)
        .filter((a) => a.type === type)
        .reduce((total, a) => total + (a.amountCredits as number), 0);
    const funded = 500 + sumOf('fundOrganization');
    const allocatedToProjects = sumOf('allocateProject');
    const allocatedToGames = sumOf('allocateGame');
    expect(sumOf('fundOrganization')).toBe(1200);
    expect(refused.insufficient_funds).toBeGreaterThan(0);
    expect(allocatedToProjects).toBeGreaterThan(0);

    const snap = await snapshot(system, dev.token);
    const organization = snap.organizations.find((o: any) => o.id === organizationId);
    const mine = snap.projects.filter((p: any) => p.organizationId === organizationId);
    const budgets = mine.reduce((total: number, p: any) => total + p.budgetCredits, 0);
    // The decrease of the balance is exactly what the projects received.
    expect(organization.balanceCredits).toBe(funded - allocatedToProjects);
    expect(budgets).toBe(allocatedToProjects);
    expect(organization.balanceCredits).toBeGreaterThanOrEqual(0);

    // Games: their budgets are carved out of their project's budget and never exceed it.
    const gameBudgets = snap.games
      .filter((g: any) => g.organizationId === organizationId)
      .reduce((total: number, g: any) => total + g.budgetCredits, 0);
    expect(gameBudgets).toBe(allocatedToGames);
    const rows = await db(
      `select p.id, p.budget_credits::bigint::int as budget, p.allocated_credits::int as allocated,
              coalesce((select sum(g.budget_credits) from ledger.games g where g.project_id = p.id), 0)::int as games
         from ledger.projects p where p.organization_id = $1`,
      [organizationId],
    );
    for (const row of rows) {
      expect(row.allocated).toBe(row.games);
      expect(row.allocated).toBeLessThanOrEqual(row.budget);
    }
    // One audit row per successful mutation.
    const [audit] = await db(
      `select count(*)::int as n from ledger.audit_log
        where organization_id = $1 and action in ('fundOrganization', 'allocateProject', 'allocateGame')`,
      [organizationId],
    );
    expect(audit!.n).toBe(1 + succeeded.length);
  });

  it('keeps racing allocations within the project ceiling and the project budget', async () => {
    const organizationId = (await ok(system, dev.token, { type: 'createOrganization', name: 'Ceiling' })).id;
    await ok(system, dev.token, { type: 'fundOrganization', organizationId, amountCredits: 100_000 });
    const projectId = (
      await ok(system, dev.token, { type: 'createProject', organizationId, name: 'Capped', maxPayoutCredits: 1_000 })
    ).id;
    const responses = await Promise.all(
      Array.from({ length: 60 }, () =>
        act(system, dev.token, { type: 'allocateProject', projectId, amountCredits: 30 }),
      ),
    );
    const { ok: succeeded, refused } = tally(responses, ['project_limit']);
    // 33 allocations of 30 fit under 1,000; the other 27 hit the ceiling.
    expect(succeeded.length).toBe(33);
    expect(refused.project_limit).toBe(27);

    const gameIds: string[] = [];
    for (let i = 0; i < 4; i++) {
      gameIds.push(
        (
          await ok(system, dev.token, {
            type: 'createGame',
            projectId,
            name: `G${i}`,
            platform: 'ios',
            maxPayoutCredits: 300,
            dailyPlayerCapCredits: 1,
          })
        ).id,
      );
    }
    const gameResponses = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        act(system, dev.token, { type: 'allocateGame', gameId: gameIds[i % 4], amountCredits: 25 }),
      ),
    );
    const games = tally(gameResponses, ['insufficient_funds', 'game_limit']);
    // The project budget of 990 holds 39 allocations of 25 (975); the four ceilings of 300 would hold 48, so
    // whatever the order, exactly 39 succeed and no game passes 300.
    expect(games.ok.length).toBe(39);
    const snap = await snapshot(system, dev.token);
    const project = snap.projects.find((p: any) => p.id === projectId);
    expect(project.budgetCredits).toBe(990);
    const budgets = snap.games.filter((g: any) => g.projectId === projectId).map((g: any) => g.budgetCredits);
    expect(budgets.reduce((a: number, b: number) => a + b, 0)).toBe(975);
    for (const budget of budgets) expect(budget).toBeLessThanOrEqual(300);
  });
});

describe('database invariants', () => {
  it('refuse overspending written by hand, whatever the code does', async () => {
    const organizationId = (await ok(system, dev.token, { type: 'createOrganization', name: 'Guarded' })).id;
    await expect(
      db('update ledger.organizations set balance_credits = -1 where id = $1', [organizationId]),
    ).rejects.toThrow(/check constraint/);
    const projectId = (
      await ok(system, dev.token, { type: 'createProject', organizationId, name: 'P', maxPayoutCredits: 10 })
    ).id;
    await expect(db('update ledger.projects set budget_credits = 11 where id = $1', [projectId])).rejects.toThrow(
      /check constraint/,
    );
    await expect(db('update ledger.projects set allocated_credits = 1 where id = $1', [projectId])).rejects.toThrow(
      /check constraint/,
    );
    // Whatever the refused statements tried, the console still reads consistent numbers.
    expect(await act(system, dev.token, { type: 'allocateProject', projectId, amountCredits: 1 })).toMatchObject({
      status: 400,
    });
  });
});
