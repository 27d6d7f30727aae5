// A program's life as a platform team sees it: up but not ready while NATS cannot be reached at start-up,
// ready once a server answers; on SIGTERM an edge keeps serving, /readyz 503, for its drain, closes idle keep-alive
// connections and exits; started through npm, it still stops gracefully when npm is told to stop.
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import { startProgram } from '../../support/processes.ts';
import { freePort, startNats } from '../../support/servers.ts';

async function until(condition: () => Promise<boolean>, what: string, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const status = async (url: string) => (await fetch(url).catch(() => undefined))?.status;

describe('program lifecycle', () => {
  it('stays up and not ready while NATS is unreachable at start-up, and becomes ready when it answers', async () => {
    const natsPort = await freePort();
    const ingest = await startProgram('ingest', { NATS_URL: `nats://127.0.0.1:${natsPort}` }, 60_000, 'alive');
    let nats: Awaited<ReturnType<typeof startNats>> | undefined;
    try {
      expect(await status(`${ingest.url}/healthz`)).toBe(200);
      const ready = await fetch(`${ingest.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: unknown }).checks).toEqual({ nats: false, started: false });
      // Any other route: 503 with Retry-After, not a 404 of a half-started program.
      const early = await fetch(`${ingest.url}/api/game-sdk/v2/config?publicKey=x`);
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).not.toBeNull();
      expect(((await early.json()) as { error: { code: string } }).error.code).toBe('PLATFORM_UNAVAILABLE');
      // Still up once it has found NATS unreachable for a while and says so (program.ts: after 2 s of trying).
      await until(
        async () => ingest.output().includes('NATS unreachable: not ready, still trying'),
        'the program to report NATS unreachable',
      );
      expect(ingest.child.exitCode).toBeNull();

      nats = await startNats(natsPort);
      await until(async () => (await status(`${ingest.url}/readyz`)) === 200, 'ingest to be ready');
      // Now the real route answers: its first check, the platform switch, finds no identity-admission here.
      const config = await fetch(`${ingest.url}/api/game-sdk/v2/config?publicKey=x`);
      expect(((await config.json()) as { error: { code: string } }).error.code).toBe('retry_later');
      expect(await ingest.stop()).toBe(0);
    } finally {
      if (ingest.child.exitCode === null) ingest.child.kill('SIGKILL');
      await nats?.stop();
    }
  }, 90_000);

  it('an edge drains on SIGTERM: /readyz 503 while it still serves, then idle keep-alive connections close', async () => {
    const nats = await startNats();
    try {
      const ingest = await startProgram('ingest', { NATS_URL: nats.url, SHUTDOWN_DRAIN_MS: '1500' });
      const port = Number(new URL(ingest.url).port);
      // A keep-alive connection left idle, as a client's pool keeps one.
      const idle = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => idle.once('connect', resolve));
      idle.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n');
      await new Promise((resolve) => idle.once('data', resolve));
      const idleClosed = new Promise((resolve) => idle.once('close', resolve));

      const exited = new Promise((resolve) => ingest.child.once('exit', resolve));
      ingest.child.kill('SIGTERM');
      await until(async () => (await status(`${ingest.url}/readyz`)) === 503, '/readyz to turn 503', 5000);
      const during = await fetch(`${ingest.url}/healthz`);
      expect(during.status).toBe(200);
      // Each answer during the drain closes its connection: the client's next request goes elsewhere.
      expect(during.headers.get('connection')).toBe('close');
      const readyz = await fetch(`${ingest.url}/readyz`);
      expect(await readyz.json()).toMatchObject({ status: 'shutting-down' });
      await idleClosed;
      await exited;
      expect(ingest.child.exitCode).toBe(0);
    } finally {
      await nats.stop();
    }
  }, 60_000);

  it('started with npm run start:<program>, stops gracefully when npm is sent SIGTERM', async () => {
    const nats = await startNats();
    const port = await freePort();
    const npm = spawn('npm', ['run', 'start:ingest'], {
      cwd: process.cwd(),
      env: { ...process.env, NATS_URL: nats.url, HTTP_PORT: String(port), LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk) => {
      output += chunk;
    });
    npm.stderr.on('data', (chunk) => {
      output += chunk;
    });
    try {
      await until(async () => (await status(`http://127.0.0.1:${port}/readyz`)) === 200, 'ingest via npm', 60_000);
      npm.kill('SIGTERM');
      // The program itself logs its graceful stop (after npm has gone) and lets go of its port.
      await until(async () => output.includes('"msg":"stopped"'), `the program's graceful stop:\n${output}`, 15_000);
      await until(async () => (await status(`http://127.0.0.1:${port}/healthz`)) === undefined, 'the port to close');
    } finally {
      npm.kill('SIGKILL');
      await nats.stop();
    }
  }, 90_000);
});
