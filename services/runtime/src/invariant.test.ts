// The invariant helper both ways: in tests a broken invariant throws; in production it is counted and logged as an
// error, and the caller goes on.
import { Writable } from 'node:stream';
import { InvariantError, invariant, invariantsThrow, reportInvariantsTo } from './invariant.ts';
import { createLogger } from './logger.ts';
import { createMetrics } from './metrics.ts';

test('under jest a broken invariant throws, naming it and the state; a kept one does nothing', () => {
  expect(() => invariant(true, 'kept')).not.toThrow();
  let error: unknown;
  try {
    invariant(false, 'queued_not_negative', () => ({ queued: -1 }));
  } catch (thrown) {
    error = thrown;
  }
  expect(error).toBeInstanceOf(InvariantError);
  expect((error as InvariantError).invariant).toBe('queued_not_negative');
  expect((error as Error).message).toBe('invariant queued_not_negative broken: {"queued":-1}');
});

test('in production a broken invariant is counted by name and logged as an error, and returns', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const metrics = createMetrics();
  reportInvariantsTo(createLogger('test', 'info', destination), metrics.invariantViolations);
  const before = invariantsThrow(false);
  try {
    invariant(false, 'lent_not_negative', () => ({ lent: -1 }));
    invariant(false, 'lent_not_negative');
    invariant(true, 'lent_not_negative');
  } finally {
    invariantsThrow(before);
  }
  const counted = await metrics.registry.getSingleMetric('invariant_violations_total')?.get();
  expect(counted?.values).toEqual([{ labels: { name: 'lent_not_negative' }, value: 2 }]);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ level: 50, invariant: 'lent_not_negative', lent: -1 });
  expect(lines[0]?.msg).toBe('invariant lent_not_negative broken');
});
