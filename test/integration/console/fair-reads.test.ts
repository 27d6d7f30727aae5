// Probe of an attacker holding a valid account: one developer keeping as many reads in flight as its limits
// allow must not make another developer's read wait behind them. Console reads take turns per developer for the
// ledger (gateway/src/auth/fair-reads.ts): the other developer's read goes out at once, beside at most the flooding
// developer's share, so that only a few of the flood's reads complete while it runs, not the flood's whole queue.
import { CONSOLE, world } from '../../support/console.ts';
import { api, invitedDeveloper, startTestSystem, type TestSystem } from '../../support/system.ts';

const A_IN_FLIGHT = 16;

async function readsWhileFlooded(system: TestSystem) {
  const a = await invitedDeveloper(system);
  const b = await invitedDeveloper(system);
  await world(system, a.token);
  await world(system, b.token);
  let stopped = false;
  let aCompleted = 0;
  const aStatuses = new Set<number>();
  // A: A_IN_FLIGHT snapshots always in flight (its in-flight bound), a closed loop.
  const flood = Promise.all(
    Array.from({ length: A_IN_FLIGHT }, async () => {
      while (!stopped) {
        aStatuses.add((await api(system.url, 'GET', CONSOLE, { token: a.token })).status);
        aCompleted += 1;
      }
    }),
  );
  // Let A's flood fill its queue first.
  while (aCompleted < 2 * A_IN_FLIGHT) await new Promise((resolve) => setTimeout(resolve, 10));
  // B: five snapshots, one after the other; how many of A's reads completed while each was out.
  const during: number[] = [];
  const bStatuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = aCompleted;
    bStatuses.push((await api(system.url, 'GET', CONSOLE, { token: b.token })).status);
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
    const { during, bStatuses, aStatuses } = await readsWhileFlooded(system);
    expect(bStatuses).toEqual([200, 200, 200, 200, 200]);
    expect(aStatuses).toEqual([200]);
    // Behind A's queue, B's read sees most of it complete first (without the turns: 12 to 26 of A's reads during each
    // of B's); taking turns, B's read runs beside one of A's (1 or 2).
    expect(Math.max(...during)).toBeLessThan(A_IN_FLIGHT / 2);
  }, 60_000);
});
