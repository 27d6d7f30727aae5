// The bounded queue of one live subscription: values in order, a push past the bound refused (the caller then drops
// the slow consumer), an error ends it at once, and the end callback runs once however it ends.
import { LiveChannel } from './live-channel.ts';

describe('LiveChannel', () => {
  it('hands values over in order and refuses a push past its bound', async () => {
    let ended = 0;
    const channel = new LiveChannel<number>(2, () => {
      ended += 1;
    });
    expect([channel.push(1), channel.push(2), channel.push(3)]).toEqual([true, true, false]);
    expect(channel.depth).toBe(2);
    expect(await channel.next()).toEqual({ value: 1, done: false });
    expect(channel.push(4)).toBe(true);
    expect(await channel.next()).toEqual({ value: 2, done: false });
    expect(await channel.next()).toEqual({ value: 4, done: false });
    // A waiting pull takes the next push directly.
    const pending = channel.next();
    expect(channel.push(5)).toBe(true);
    expect(await pending).toEqual({ value: 5, done: false });
    await channel.return();
    await channel.return();
    expect(channel.push(6)).toBe(false);
    expect(await channel.next()).toEqual({ value: undefined, done: true });
    expect(ended).toBe(1);
  });

  it('ends with an error at once, dropping what was queued, then is done', async () => {
    let ended = 0;
    const channel = new LiveChannel<number>(5, () => {
      ended += 1;
    });
    channel.push(1);
    const failure = new Error('removed');
    channel.fail(failure);
    channel.fail(new Error('twice'));
    await expect(channel.next()).rejects.toBe(failure);
    expect(await channel.next()).toEqual({ value: undefined, done: true });
    expect(ended).toBe(1);

    const waiting = new LiveChannel<number>(5, () => undefined);
    const pull = waiting.next();
    waiting.fail(failure);
    await expect(pull).rejects.toBe(failure);
    expect(await waiting.next()).toEqual({ value: undefined, done: true });
  });
});
