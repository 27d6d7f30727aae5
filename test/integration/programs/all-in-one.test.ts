// `npm start` as a process: all five programs on one port, on the embedded default (PGlite under DATA_DIR and the
// in-process transport) and on real PostgreSQL and NATS.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../../support/database.ts';
import { startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';

async function expectBasics(url: string, metricsUrl = `${url}/metrics`) {
  const health = await fetch(`${url}/healthz`);
  expect(health.status).toBe(200);
  const ready = await fetch(`${url}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ready', checks: { transport: true, database: true, serving: true } });

  const access = await fetch(`${url}/api/developer/v1/access`);
  expect(access.status).toBe(401);
  expect(access.headers.get('cache-control')).toBe('no-store');
  expect(await access.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });

  const unknown = await fetch(`${url}/api/developer/v1/nothing-here`);
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });

  const wrongMethod = await fetch(`${url}/api/developer/v1/access`, { method: 'DELETE' });
  expect(wrongMethod.status).toBe(405);
  expect(await wrongMethod.json()).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });

  const requestId = await fetch(`${url}/healthz`, { headers: { 'X-Request-Id': 'trace-me-42' } });
  expect(requestId.headers.get('x-request-id')).toBe('trace-me-42');

  const metrics = await (await fetch(metricsUrl)).text();
  expect(metrics).toMatch(
    /http_requests_total\{program="all-in-one",method="GET",route="\/api\/developer\/v1\/access",status="401"\} 1/,
  );
}

describe('npm start (all five programs in one process)', () => {
  it('runs on the embedded default with nothing else installed, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rewards-start-'));
    try {
      // The first start of the embedded default includes PGlite's initdb: minutes on a loaded machine.
      const system = await startProgram('all-in-one', { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, 280_000);
      try {
        await expectBasics(system.url);
        expect(system.output()).toMatch(/Database +embedded PostgreSQL \(PGlite\)/);
        expect(system.output()).toMatch(/npm run -s dev:token -- --email/);
        expect(existsSync(join(dataDir, 'pglite'))).toBe(true);
        expect(existsSync(join(dataDir, 'dev-identity', 'developer.private.jwk.json'))).toBe(true);
      } finally {
        expect(await system.stop()).toBe(0);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('runs on real PostgreSQL and NATS when DATABASE_URL and NATS_URL are set', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rewards-start-'));
    const nats = await startNats();
    try {
      const system = await startProgram('all-in-one', {
        DATA_DIR: dataDir,
        DATABASE_URL: await createTestDatabase(),
        NATS_URL: nats.url,
        // METRICS_PORT (the image sets it): /metrics leaves the public port for a port of its own (here a free one).
        METRICS_PORT: '0',
      });
      try {
        const metricsUrl = /Metrics +(http:\S+)/.exec(system.output())?.[1];
        expect(metricsUrl).toMatch(/^http:\/\/localhost:\d+\/metrics$/);
        expect((await fetch(`${system.url}/metrics`)).status).toBe(404);
        await expectBasics(system.url, metricsUrl);
        expect(system.output()).toMatch(/Transport +NATS/);
      } finally {
        expect(await system.stop()).toBe(0);
      }
    } finally {
      await nats.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
