// The selector's decisions that need no server (test/integration/database/ runs it against real ones).
import * as net from 'node:net';
import { jest } from '@jest/globals';
import {
  NoSuitableServerError,
  SEARCH_BACKOFF_MAX_MS,
  SEARCH_BACKOFF_MIN_MS,
  ServerSelector,
  selectorFor,
} from './failover.ts';
import { classifyDatabaseFailure } from './failures.ts';
import { parseDatabaseUrl } from './url.ts';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ServerSelector', () => {
  it('one host and target_session_attrs=any: no search, no check, never forgotten', async () => {
    const selector = new ServerSelector(parseDatabaseUrl('postgres://u@db.invalid:5432/d'));
    await expect(selector.current()).resolves.toBe(0);
    selector.forget(0, 'connection_lost');
    await expect(selector.current()).resolves.toBe(0);
  });

  it('no host answers: one search for concurrent callers, failing as unavailable with every host named', async () => {
    const [p1, p2] = [await closedPort(), await closedPort()];
    const url = `postgres://u@127.0.0.1:${p1},127.0.0.1:${p2}/d?target_session_attrs=read-write&connect_timeout=2`;
    const selector = new ServerSelector(parseDatabaseUrl(url));
    const [first, second] = [selector.current(), selector.current()];
    expect(second).toBe(first);
    const error = await first.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoSuitableServerError);
    expect(classifyDatabaseFailure(error)).toBe('unavailable');
    expect((error as Error).message).toContain(`127.0.0.1:${p1}`);
    expect((error as Error).message).toContain(`127.0.0.1:${p2}`);
  });

  it('after a search that found no server the next waits, doubling up to a bound; callers meanwhile share it', async () => {
    // A server that closes each connection at once: every probe fails, and is counted. Timers and performance.now()
    // on jest's clock, so the searches' waits are exact; sockets and turns stay real.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    let probes = 0;
    const server = net.createServer((socket) => {
      probes++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const selector = new ServerSelector(
        parseDatabaseUrl(`postgres://u@127.0.0.1:${port}/d?target_session_attrs=read-write&connect_timeout=2`),
      );
      expect(selector.searchDelayMs).toBe(0);
      await expect(selector.current()).rejects.toBeInstanceOf(NoSuitableServerError);
      expect(probes).toBe(1);
      expect(selector.searchDelayMs).toBe(SEARCH_BACKOFF_MIN_MS);
      const second = selector.current();
      expect(selector.current()).toBe(second);
      second.catch(() => undefined);
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(probes).toBe(1); // its timer has not fired: nothing was probed
      await jest.advanceTimersByTimeAsync(SEARCH_BACKOFF_MIN_MS);
      await expect(second).rejects.toBeInstanceOf(NoSuitableServerError);
      expect(probes).toBe(2);
      expect(selector.searchDelayMs).toBe(2 * SEARCH_BACKOFF_MIN_MS);
      for (let search = 3; search <= 10; search++) {
        const next = selector.current();
        next.catch(() => undefined);
        await jest.advanceTimersByTimeAsync(selector.searchDelayMs);
        await expect(next).rejects.toBeInstanceOf(NoSuitableServerError);
        expect(probes).toBe(search);
      }
      expect(selector.searchDelayMs).toBe(SEARCH_BACKOFF_MAX_MS);
    } finally {
      jest.useRealTimers();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('one selector per DATABASE_URL in the process', () => {
    const url = 'postgres://u@a:1,b:2/d?target_session_attrs=primary';
    expect(selectorFor(url, parseDatabaseUrl(url))).toBe(selectorFor(url, parseDatabaseUrl(url)));
    const other = 'postgres://u@a:1,b:2/other?target_session_attrs=primary';
    expect(selectorFor(other, parseDatabaseUrl(other))).not.toBe(selectorFor(url, parseDatabaseUrl(url)));
  });
});

describe('FailoverClient.abandon', () => {
  it('leaves a connection whose socket is not open alone: no error event nobody listens to', async () => {
    // The failover fault's crash: during a switchover a health check abandoned the pool's connections, one of them
    // still searching for the new primary (its socket never opened); resetAndDestroy on a socket without a handle
    // emits ERR_SOCKET_CLOSED as an 'error' event of the socket, which pg listens to only once it connects, and the
    // process ended.
    const selector = new ServerSelector(parseDatabaseUrl('postgres://u@127.0.0.1:1/d'));
    const client = new selector.Client();
    const stream = (client as unknown as { connection: { stream: net.Socket } }).connection.stream;
    const unlistened: unknown[] = [];
    // What Node does with an 'error' event nobody listens to (it throws), seen without ending the test's process.
    const emit = stream.emit.bind(stream);
    stream.emit = ((name: string, ...args: unknown[]) => {
      if (name === 'error' && stream.listenerCount('error') === 0) {
        unlistened.push(args[0]);
        return false;
      }
      return emit(name, ...args);
    }) as typeof stream.emit;
    client.abandon(new Error('the database probe failed'));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(unlistened).toEqual([]);
    expect(stream.destroyed).toBe(true);
  });
});
