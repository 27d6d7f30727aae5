// The selector's decisions that need no server (test/integration/database/ runs it against real ones).
import * as net from 'node:net';
import { NoSuitableServerError, ServerSelector, selectorFor } from './failover.ts';
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

  it('one selector per DATABASE_URL in the process', () => {
    const url = 'postgres://u@a:1,b:2/d?target_session_attrs=primary';
    expect(selectorFor(url, parseDatabaseUrl(url))).toBe(selectorFor(url, parseDatabaseUrl(url)));
    const other = 'postgres://u@a:1,b:2/other?target_session_attrs=primary';
    expect(selectorFor(other, parseDatabaseUrl(other))).not.toBe(selectorFor(url, parseDatabaseUrl(url)));
  });
});
