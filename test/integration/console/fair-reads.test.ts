// Probe of an attacker holding a valid account: one developer keeping as many reads in flight as its limits
// allow must not make another developer's read wait behind them. Console reads take turns per developer for the
// ledger (gateway/src/auth/fair-reads.ts): the other developer's read goes out at once, beside at most the flooding
// developer's share, so that only a few of the flood's reads complete while it runs, not the flood's whole queue.
// The same for a team: the developers of one organization flooding together hold at most their organization's turns
// in the ledger (services/ledger/src/console/organization-turns.ts), whatever their number.
import { addMember, CONSOLE, developer, world } from '../../support/console.ts';
import { api, invitedDeveloper, startTestSystem, type TestSystem } from '../../support/system.ts';

const A_IN_FLIGHT = 16;

/** Floods with `inFlight` snapshots of each of `floodTokens` (closed loops); B reads five times meanwhile. */
async function readsWhileFlooded(system: TestSystem, floodTokens: string[], bToken: string, inFlight = A_IN_FLIGHT) {
  let stopped = false;
  let aCompleted = 0;
  const aStatuses = new Set<number>();
  const flood = Promise.all(
    floodTokens.flatMap((token) =>
      Array.from({ length: inFlight }, async () => {
        while (!stopped) {
          aStatuses.add((await api(system.url, 'GET', CONSOLE, { token })).status);
          aCompleted += 1;
        }
      }),
    ),
  );
  // Let the flood fill its queues first.
  while (aCompleted < 2 * inFlight * floodTokens.length) await new Promise((resolve) => setTimeout(resolve, 10));
  // B: five snapshots, one after the other; how many of A's reads completed while each was out.
  const during: number[] = [];
  const bStatuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = aCompleted;
    bStatuses.push((await api(system.url, 'GET', CONSOLE, { token: bToken })).status);
    during.push(aCompleted - before);
  }
  stopped = true;
  await flood;
  return { during, bStatuses, aStatuses: [...aStatuses] };
}

describe("one developer's flood of reads and another developer's read", () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({
      env: {
        DEVELOPER_IN_FLIGHT_MAX: String(A_IN_FLIGHT),
        CONSOLE_READS_IN_FLIGHT_MAX: '2',
        CONSOLE_READS_PER_DEVELOPER_MAX: '1',
      },
    });
  });
  afterAll(() => system?.stop());

  it("the other developer's snapshot goes out beside the flood's share, not behind its queue", async () => {
    const a = await invitedDeveloper(system);
    const b = await invitedDeveloper(system);
    await world(system, a.token);
    await world(system, b.token);
    const { during, bStatuses, aStatuses } = await readsWhileFlooded(system, [a.token], b.token);
    expect(bStatuses).toEqual([200, 200, 200, 200, 200]);
    expect(aStatuses).toEqual([200]);
    // Behind A's queue, B's read sees most of it complete first (without the turns: 12 to 26 of A's reads during each
    // of B's); taking turns, B's read runs beside one of A's (1 or 2).
    expect(Math.max(...during)).toBeLessThan(A_IN_FLIGHT / 2);
  }, 60_000);
});

function median(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0;
}

describe("one organization's developers flooding reads together and another organization's read", () => {
  const TEAM = 4;
  const PER_DEVELOPER = 4;
  const flood = async (system: TestSystem) => {
    const owner = await developer(system);
    const team = [owner, ...(await Promise.all(Array.from({ length: TEAM - 1 }, () => developer(system))))];
    const { organizationId } = await world(system, owner.token);
    for (const member of team.slice(1)) await addMember(system, owner.token, organizationId, member, 'viewer');
    const b = await developer(system);
    await world(system, b.token);
    return readsWhileFlooded(
      system,
      team.map((member) => member.token),
      b.token,
      PER_DEVELOPER,
    );
  };
  // Each developer within its own bounds; together the team would hold all of the gateway's reads.
  const env = {
    DEVELOPER_IN_FLIGHT_MAX: String(PER_DEVELOPER),
    CONSOLE_READS_IN_FLIGHT_MAX: String(TEAM * PER_DEVELOPER + 1),
    CONSOLE_READS_PER_DEVELOPER_MAX: String(PER_DEVELOPER),
  };

  describe('with one turn per organization in the ledger', () => {
    let system: TestSystem;
    beforeAll(async () => {
      system = await startTestSystem({ env: { ...env, CONSOLE_READS_PER_ORGANIZATION_MAX: '1' } });
    });
    afterAll(() => system?.stop());

    it("the other organization's snapshot runs beside one of the team's reads, not behind all of them", async () => {
      const { during, bStatuses, aStatuses } = await flood(system);
      expect(bStatuses).toEqual([200, 200, 200, 200, 200]);
      expect(aStatuses).toEqual([200]);
      // The team's 16 reads in flight run one at a time in the ledger: during B's read a few of them complete (0 to
      // 6 measured), not most of what is in flight (10 to 21 with the bound lifted, below).
      expect(median(during)).toBeLessThanOrEqual(7);
    }, 120_000);
  });

  describe('with the bound lifted (the control)', () => {
    let system: TestSystem;
    beforeAll(async () => {
      system = await startTestSystem({ env: { ...env, CONSOLE_READS_PER_ORGANIZATION_MAX: '1000' } });
    });
    afterAll(() => system?.stop());

    it("the team's reads run together and many complete during each of B's", async () => {
      const { during, bStatuses } = await flood(system);
      expect(bStatuses).toEqual([200, 200, 200, 200, 200]);
      expect(median(during)).toBeGreaterThan(7);
    }, 120_000);
  });
});
