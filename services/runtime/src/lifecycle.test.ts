// The one lifecycle (lifecycle.ts): undos in reverse, a failed start undoes what came before it, and the deadline
// ends the wait for a stuck undo.
import { pino } from 'pino';
import { Lifecycle } from './lifecycle.ts';

const logger = pino({ level: 'silent' });

describe('Lifecycle', () => {
  it('runs the undos in reverse order of the steps, each given its step result, once', async () => {
    const lifecycle = new Lifecycle(logger);
    const undone: string[] = [];
    await lifecycle.start(async () => {
      const http = await lifecycle.step(
        'http',
        () => 'server',
        (value) => {
          undone.push(`http(${value})`);
        },
      );
      await lifecycle.step(
        'nats',
        async () => `${http}+nats`,
        async (value) => {
          undone.push(`nats(${value})`);
        },
      );
      lifecycle.onStop('drain flag', () => {
        undone.push('drain flag');
      });
    });
    expect(lifecycle.stopping).toBe(false);
    const report = await lifecycle.stop();
    expect(lifecycle.stopping).toBe(true);
    expect(undone).toEqual(['drain flag', 'nats(server+nats)', 'http(server)']);
    expect(report).toEqual({ failed: [], skipped: [] });
    expect(await lifecycle.stop()).toBe(report);
    expect(undone).toHaveLength(3);
  });

  it('undoes the steps before a failing one, rethrows, and registers nothing for the failed step', async () => {
    const lifecycle = new Lifecycle(logger);
    const undone: string[] = [];
    const failure = lifecycle.start(async () => {
      await lifecycle.step(
        'first',
        () => 1,
        () => void undone.push('first'),
      );
      await lifecycle.step(
        'second',
        () => 2,
        () => void undone.push('second'),
      );
      await lifecycle.step(
        'third',
        () => {
          throw new Error('port taken');
        },
        () => void undone.push('third'),
      );
      await lifecycle.step(
        'fourth',
        () => 4,
        () => void undone.push('fourth'),
      );
    });
    await expect(failure).rejects.toThrow('port taken');
    expect(undone).toEqual(['second', 'first']);
    await expect(lifecycle.step('late', () => 5)).rejects.toThrow('the lifecycle is stopping');
  });

  it('goes on after a failing undo and names it', async () => {
    const lifecycle = new Lifecycle(logger);
    const undone: string[] = [];
    lifecycle.onStop('database', () => void undone.push('database'));
    lifecycle.onStop('transport', () => {
      throw new Error('already closed');
    });
    lifecycle.onStop('http', () => void undone.push('http'));
    const report = await lifecycle.stop();
    expect(undone).toEqual(['http', 'database']);
    expect(report).toEqual({ failed: ['transport'], skipped: [] });
  });

  it('stops waiting at the deadline: names the stuck undo and skips the ones after it', async () => {
    const lifecycle = new Lifecycle(logger);
    const undone: string[] = [];
    let release: () => void = () => undefined;
    lifecycle.onStop('database', () => void undone.push('database'));
    lifecycle.onStop(
      'queue groups',
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    lifecycle.onStop('http', () => void undone.push('http'));
    const report = await lifecycle.stop(50);
    expect(report).toEqual({ failed: [], unfinished: 'queue groups', skipped: ['database'] });
    // The stuck undo finishing later does not run the skipped ones: the process is exiting by then.
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(undone).toEqual(['http']);
  });
});
