// npm run bench's step searches: a step's completed count against its offered rate (load/lib/steps.ts). k6's
// constant-arrival-rate offers exactly rate x seconds; pgbench -R draws a Poisson schedule, whose count varies.
import { completedEnough } from '../../load/lib/steps.ts';

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
