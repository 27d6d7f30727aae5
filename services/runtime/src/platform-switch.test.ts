import { DependencyUnavailableError } from './errors.ts';
import { PLATFORM_CACHE_MS, PLATFORM_SHARE_MS, PLATFORM_STALE_MAX_MS, PlatformSwitch } from './platform-switch.ts';
import type { Transport } from './transport/operation.ts';

/** A transport whose GetPlatformState calls are answered (or never) by the test. */
function fakeTransport() {
  const calls: Array<{ resolve: (enabled: boolean) => void; reject: (error: Error) => void }> = [];
  const transport = {
    kind: 'in-process',
    isReady: () => true,
    call: () =>
      new Promise((resolve, reject) => {
        calls.push({ resolve: (enabled) => resolve({ enabled }), reject });
      }),
  } as unknown as Transport;
  return { transport, calls };
}

const ctx = { requestId: 'test' };

describe('PlatformSwitch', () => {
  it('shares a recent request; does not join one older than the share window (it may be lost)', async () => {
    let now = 0;
    const { transport, calls } = fakeTransport();
    const platform = new PlatformSwitch(transport, () => now);
    const first = platform.isEnabled(ctx);
    const joined = platform.isEnabled(ctx);
    expect(calls).toHaveLength(1);
    // The first request is never answered (a replica died holding it).
    now += PLATFORM_SHARE_MS;
    const fresh = platform.isEnabled(ctx);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(false);
    await expect(fresh).resolves.toBe(false);
    // The answer is cached: no further request within the cache time.
    await expect(platform.isEnabled(ctx)).resolves.toBe(false);
    expect(calls).toHaveLength(2);
    // The old request's late answer does not replace the newer cached value.
    calls[0]!.resolve(true);
    await expect(first).resolves.toBe(true);
    await expect(joined).resolves.toBe(true);
    await expect(platform.isEnabled(ctx)).resolves.toBe(false);
    now += PLATFORM_CACHE_MS;
    void platform.isEnabled(ctx);
    expect(calls).toHaveLength(3);
  });

  it('a failed request is not shared afterwards', async () => {
    const { transport, calls } = fakeTransport();
    const platform = new PlatformSwitch(transport, () => 0);
    const failing = platform.isEnabled(ctx);
    calls[0]!.reject(new Error('connection lost'));
    await expect(failing).rejects.toThrow('connection lost');
    const next = platform.isEnabled(ctx);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(true);
    await expect(next).resolves.toBe(true);
  });

  it('knownEnabled: true only while a fresh cached state says enabled (the gate then skips its async check)', async () => {
    let now = 0;
    const { transport, calls } = fakeTransport();
    const platform = new PlatformSwitch(transport, () => now);
    expect(platform.knownEnabled()).toBe(false); // nothing known yet
    const asked = platform.isEnabled(ctx);
    expect(platform.knownEnabled()).toBe(false); // asked, not answered
    calls[0]!.resolve(true);
    await asked;
    expect(platform.knownEnabled()).toBe(true);
    now += PLATFORM_CACHE_MS - 1;
    expect(platform.knownEnabled()).toBe(true);
    now += 1;
    expect(platform.knownEnabled()).toBe(false); // stale: assertEnabled asks again
    const again = platform.isEnabled(ctx);
    calls[1]!.resolve(false);
    await again;
    expect(platform.knownEnabled()).toBe(false); // disabled
    expect(calls).toHaveLength(2);
  });

  it('identity-admission cannot answer: the last state within the bound (at once after a failure), then fails closed', async () => {
    let now = 0;
    const { transport, calls } = fakeTransport();
    const platform = new PlatformSwitch(transport, () => now);
    const unavailable = () => new DependencyUnavailableError('identity', 'no responders', 'not_delivered');
    const first = platform.isEnabled(ctx);
    calls[0]!.resolve(true);
    await expect(first).resolves.toBe(true);
    now = PLATFORM_CACHE_MS;
    const failing = platform.isEnabled(ctx);
    calls[1]!.reject(unavailable());
    await expect(failing).resolves.toBe(true); // the refresh failed: the last known state
    now = PLATFORM_STALE_MAX_MS - 1;
    await expect(platform.isEnabled(ctx)).resolves.toBe(true); // answered before its refresh ends
    expect(calls).toHaveLength(3);
    calls[2]!.reject(unavailable());
    now = PLATFORM_STALE_MAX_MS - 1 + PLATFORM_SHARE_MS; // past the bound, and that refresh no longer shared
    const closed = platform.isEnabled(ctx);
    calls[3]!.reject(unavailable());
    await expect(closed).rejects.toBeInstanceOf(DependencyUnavailableError);
    // An answer again: served on it, and a failure of another kind (a bug) is never hidden by the last state.
    const back = platform.isEnabled(ctx);
    calls[4]!.resolve(true);
    await expect(back).resolves.toBe(true);
    now += PLATFORM_CACHE_MS;
    const bug = platform.isEnabled(ctx);
    calls[5]!.reject(new Error('bug'));
    await expect(bug).rejects.toThrow('bug');
  });
});
