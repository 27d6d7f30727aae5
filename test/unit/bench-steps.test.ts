// npm run bench's step searches (load/lib/steps.ts): a step's completed count against its offered rate (k6's
// constant-arrival-rate offers exactly rate x seconds; pgbench -R draws a Poisson schedule, whose count varies), and
// the search for the highest rate at p99 <= 25 ms, each rate decided by a majority of its tries.
import {
  completedEnough,
  held,
  interleavedSearches,
  P99_BOUND_MS,
  type Step,
  StepSearch,
  triesToHold,
} from '../../load/lib/steps.ts';

test('a constant schedule must complete 95 % of what was offered', () => {
  expect(completedEnough({ offeredPerSecond: 1000, completedPerSecond: 950 }, 5, 'constant')).toBe(true);
  expect(completedEnough({ offeredPerSecond: 1000, completedPerSecond: 949 }, 5, 'constant')).toBe(false);
  expect(completedEnough({ offeredPerSecond: 138, completedPerSecond: 131 }, 5, 'constant')).toBe(false);
});

test('a Poisson schedule may draw three standard deviations fewer: the step that failed pgbench at 138/s holds', () => {
  // 690 expected, 655 completed: 94.9 %, 1.3 standard deviations below (npm run bench, 2026-11-29 10:01 UTC).
  expect(completedEnough({ offeredPerSecond: 138, completedPerSecond: 131 }, 5, 'poisson')).toBe(true);
  // 690 - 3 x 26.3 = 611: below it pgbench did not keep up.
  expect(completedEnough({ offeredPerSecond: 138, completedPerSecond: 122.4 }, 5, 'poisson')).toBe(true);
  expect(completedEnough({ offeredPerSecond: 138, completedPerSecond: 122 }, 5, 'poisson')).toBe(false);
  // At high rates three deviations are under 5 %: 95 % is the bound, as for k6.
  expect(completedEnough({ offeredPerSecond: 2000, completedPerSecond: 1900 }, 5, 'poisson')).toBe(true);
  expect(completedEnough({ offeredPerSecond: 2000, completedPerSecond: 1899 }, 5, 'poisson')).toBe(false);
});

test('a step holds with p99 within the bound, nothing failed or dropped and its rate completed', () => {
  const step = { offeredPerSecond: 100, completedPerSecond: 100, p50Ms: 2, p99Ms: P99_BOUND_MS, failed: 0, dropped: 0 };
  expect(held(step, 5, 'constant').held).toBe(true);
  expect(held({ ...step, p99Ms: P99_BOUND_MS + 0.1 }, 5, 'constant').held).toBe(false);
  expect(held({ ...step, failed: 1 }, 5, 'constant').held).toBe(false);
  expect(held({ ...step, dropped: 1 }, 5, 'constant').held).toBe(false);
  expect(held({ ...step, completedPerSecond: 90 }, 5, 'constant').held).toBe(false);
});

test('a strict majority of the tries decides a rate', () => {
  expect([1, 2, 3, 4, 5].map(triesToHold)).toEqual([1, 2, 2, 3, 3]);
});

/** A step at `rate` that held or not: p99 10 ms, or 40 ms (over the bound) when it did not. */
function step(rate: number, holds: boolean): Step {
  const p99Ms = holds ? 10 : 40;
  return held(
    { offeredPerSecond: rate, completedPerSecond: rate, p50Ms: 2, p99Ms, failed: 0, dropped: 0 },
    5,
    'constant',
  );
}

/**
 * A fake side whose steps hold at rates up to `threshold`, except the tries (counted from 0 over the whole search)
 * named in `flukes`, whose verdict is the other one: a slow commit that decides a step.
 */
function scriptedProbe(threshold: number, flukes: number[] = []) {
  let tries = 0;
  return async (rate: number): Promise<Step> => step(rate, rate <= threshold !== flukes.includes(tries++));
}

/** Runs one search to its end on `probe`; its result and its tries as `rate` (held) or `rate!` (not held). */
async function search(
  start: number,
  options: { maxSteps: number; tries: number },
  probe: (r: number) => Promise<Step>,
) {
  const s = new StepSearch('side', start, options);
  await interleavedSearches([{ search: s, probe }]);
  return { ...s.result, trace: s.steps.map((t) => `${t.offeredPerSecond}${t.held ? '' : '!'}`).join(' ') };
}

test('a rate whose tries held, failed, held holds; its verdict and every try are kept', async () => {
  const s = new StepSearch('service', 100, { maxSteps: 1, tries: 3 });
  s.record(step(100, true));
  expect(s.next).toBe(100);
  s.record(step(100, false));
  expect(s.next).toBe(100);
  s.record(step(100, true));
  expect(s.next).toBeUndefined();
  expect(s.result.ratePerSecond).toBe(100);
  expect(s.result.rates).toEqual([{ offeredPerSecond: 100, held: true, tries: 3, triesHeld: 2 }]);
  expect(s.result.steps.map((t) => [t.try, t.held])).toEqual([
    [1, true],
    [2, false],
    [3, true],
  ]);
});

test('a rate whose first two tries failed is decided after two: not held, and the search moves down', async () => {
  const s = new StepSearch('pgbench', 100, { maxSteps: 8, tries: 3 });
  s.record(step(100, false));
  expect(s.next).toBe(100);
  s.record(step(100, false));
  expect(s.result.rates).toEqual([{ offeredPerSecond: 100, held: false, tries: 2, triesHeld: 0 }]);
  expect(s.next).toBe(50);
  expect(() => s.record(step(100, true))).toThrow(/50\/s/);
});

test('two held tries of three end the rate, and the search moves up by a quarter', async () => {
  const s = new StepSearch('service', 100, { maxSteps: 8, tries: 3 });
  s.record(step(100, true));
  s.record(step(100, true));
  expect(s.steps).toHaveLength(2);
  expect(s.next).toBe(125);
});

test('with an even count a tie does not hold: 2 tries need both', async () => {
  const s = new StepSearch('side', 100, { maxSteps: 8, tries: 2 });
  s.record(step(100, false));
  expect(s.result.rates).toEqual([{ offeredPerSecond: 100, held: false, tries: 1, triesHeld: 0 }]);
});

test('one try a rate is the search as it was: the same rates on scripted steps, flukes and all', async () => {
  // The sequences the search of load/bench.ts gave before tries (commit 65a185c) on the same scripted steps.
  const once = { maxSteps: 8, tries: 1 };
  expect(await search(100, once, scriptedProbe(300))).toMatchObject({
    ratePerSecond: 290,
    trace: '100 125 156 195 244 305! 275 290',
  });
  // One slow step at 156/s (the third) and the search settles at half the rate that holds.
  expect(await search(100, once, scriptedProbe(300, [2]))).toMatchObject({
    ratePerSecond: 149,
    trace: '100 125 156! 141 149',
  });
  expect(await search(400, once, scriptedProbe(300))).toMatchObject({
    ratePerSecond: 300,
    trace: '400! 200 300 350! 325! 313!',
  });
  expect(await search(400, once, scriptedProbe(300, [1, 4]))).toMatchObject({
    ratePerSecond: 169,
    trace: '400! 200! 100 150 175! 163 169',
  });
  expect(await search(200, { maxSteps: 30, tries: 1 }, scriptedProbe(1000, [3]))).toMatchObject({
    ratePerSecond: 382,
    trace: '200 250 313 391! 352 372 382',
  });
});

test('three tries a rate outvote the slow step that one try let decide', async () => {
  const result = await search(100, { maxSteps: 8, tries: 3 }, scriptedProbe(300, [2]));
  // The fluke is the first try of 125/s (tries 0-1 were 100/s): its next two hold, and the search goes on up.
  expect(result.trace.startsWith('100 100 125! 125 125 156 156')).toBe(true);
  expect(result.ratePerSecond).toBeGreaterThan(280);
  expect(result.rates).toHaveLength(8);
  expect(result.rates[1]).toEqual({ offeredPerSecond: 125, held: true, tries: 3, triesHeld: 2 });
});

test('maxSteps counts rates, not tries', async () => {
  const result = await search(100, { maxSteps: 3, tries: 3 }, scriptedProbe(1000));
  expect(result.rates.map((r) => r.offeredPerSecond)).toEqual([100, 125, 156]);
  expect(result.steps).toHaveLength(6);
});

test('the search converges within 5 % of a deterministic threshold', async () => {
  for (const [start, threshold] of [
    [100, 300],
    [400, 300],
    [40, 2451],
    [1100, 61],
    [300, 300],
  ] as const) {
    const result = await search(start, { maxSteps: 30, tries: 3 }, scriptedProbe(threshold));
    expect(result.ratePerSecond).toBeLessThanOrEqual(threshold);
    expect(result.ratePerSecond).toBeGreaterThanOrEqual(threshold / 1.05);
    // Each try agrees with the one before, so each rate takes two.
    expect(result.rates.every((r) => r.tries === 2)).toBe(true);
  }
});

test("the two sides' tries alternate, one of each side still searching, then the next", async () => {
  const calls: string[] = [];
  const side = (name: string, threshold: number, flukes: number[]) => {
    const probe = scriptedProbe(threshold, flukes);
    return async (rate: number) => {
      calls.push(`${name} ${rate}`);
      return probe(rate);
    };
  };
  const service = new StepSearch('service', 100, { maxSteps: 2, tries: 3 });
  const pgbench = new StepSearch('pgbench', 200, { maxSteps: 3, tries: 3 });
  await interleavedSearches([
    { search: service, probe: side('service', 1000, [1]) },
    { search: pgbench, probe: side('pgbench', 1000, []) },
  ]);
  expect(calls).toEqual([
    'service 100',
    'pgbench 200',
    'service 100', // a fluke: a third try decides 100/s
    'pgbench 200',
    'service 100',
    'pgbench 250',
    'service 125',
    'pgbench 250',
    'service 125',
    'pgbench 313',
    'pgbench 313', // the service's search is over: pgbench's goes on alone
  ]);
  expect(service.result.ratePerSecond).toBe(125);
  expect(pgbench.result.ratePerSecond).toBe(313);
});
