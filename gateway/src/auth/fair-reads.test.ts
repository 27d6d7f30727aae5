// The fair console reads' scheduler (fair-reads.ts), without a gateway: its two bounds, FIFO within a developer, and
// turns between developers (a developer with a long queue does not delay another's first read beyond the reads out).
import { FairScheduler } from './fair-reads.ts';

/** Work that runs until its `finish` is called; `order` records when each started. */
function gate(order: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const work = async () => {
    order.push(name);
    await done;
    return name;
  };
  return { work, finish };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('FairScheduler', () => {
  it('runs at most perDeveloperMax of one developer and inFlightMax in all; the rest wait in order', async () => {
    const scheduler = new FairScheduler({ inFlightMax: 3, perDeveloperMax: 2 });
    const order: string[] = [];
    const a = [1, 2, 3, 4].map((n) => gate(order, `a${n}`));
    const b = [1, 2].map((n) => gate(order, `b${n}`));
    const results = [...a, ...b].map((g, i) => scheduler.run(i < 4 ? 'a' : 'b', g.work));
    await turn();
    expect(order).toEqual(['a1', 'a2', 'b1']);
    expect(scheduler.counts).toEqual({ running: 3, waiting: 3, keys: 2 });
    a[0]?.finish();
    await turn();
    // a's slot went to a (b's second waits for b's first: both bounds), a3 before a4.
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
    b[0]?.finish();
    await turn();
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'b2']);
    for (const g of [...a, ...b]) g.finish();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
    expect(scheduler.counts).toEqual({ running: 0, waiting: 0, keys: 0 });
  });

  it("serves developers in turns: another developer's read goes before the flooding one's queue", async () => {
    const scheduler = new FairScheduler({ inFlightMax: 1, perDeveloperMax: 1 });
    const order: string[] = [];
    const a = [1, 2, 3, 4, 5].map((n) => gate(order, `a${n}`));
    const running = a.map((g) => scheduler.run('a', g.work));
    await turn();
    const b = gate(order, 'b1');
    const bRun = scheduler.run('b', b.work);
    a[0]?.finish();
    await turn();
    expect(order).toEqual(['a1', 'b1']);
    b.finish();
    await turn();
    expect(order).toEqual(['a1', 'b1', 'a2']);
    for (const g of a) g.finish();
    await Promise.all([...running, bRun]);
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('gives the slot back when the work fails', async () => {
    const scheduler = new FairScheduler({ inFlightMax: 1, perDeveloperMax: 1 });
    await expect(scheduler.run('a', async () => Promise.reject(new Error('ledger down')))).rejects.toThrow(
      'ledger down',
    );
    expect(await scheduler.run('a', async () => 'next')).toBe('next');
    expect(scheduler.counts).toEqual({ running: 0, waiting: 0, keys: 0 });
  });
});
