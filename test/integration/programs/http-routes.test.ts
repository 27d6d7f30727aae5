// The shared HTTP app serves the routes of a static path without the router's matching (services/runtime/src/http/
// static-routes.ts): on the ingest program run alone, the events route (two middleware: the platform gate, then the
// handler) and a probe answer as the router answered them, with the same route label in the metrics, and the
// router's own answers (405 with Allow, OPTIONS, HEAD, 404, a trailing slash) are unchanged.
import { type ProgramProcess, startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';

const EVENTS = '/api/game-sdk/v2/events';

/** The error envelope's code. */
async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

describe('static routes on a running program', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let ingest: ProgramProcess;
  beforeAll(async () => {
    // A private nats-server with no identity-admission: the events route's platform gate answers 503 retry_later.
    nats = await startNats();
    ingest = await startProgram('ingest', { NATS_URL: nats.url, NATS_REQUEST_TIMEOUT_MS: '2000' });
  }, 120_000);
  afterAll(async () => {
    await ingest?.stop();
    await nats?.stop();
  });

  it('the events route, the probes and the router answers keep their status, headers, envelope and route label', async () => {
    const post = await fetch(`${ingest.url}${EVENTS}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'static-route-1' },
      body: '{}',
    });
    expect(post.status).toBe(503);
    expect(post.headers.get('x-request-id')).toBe('static-route-1');
    expect(post.headers.get('x-content-type-options')).toBe('nosniff');
    expect(post.headers.get('retry-after')).toBe('1');
    expect(post.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await post.json()).toEqual({ error: { code: 'retry_later', message: expect.any(String) } });

    // The same route through the router: a trailing slash is the same route for it.
    const slash = await fetch(`${ingest.url}${EVENTS}/`, { method: 'POST', body: '{}' });
    expect([slash.status, await errorCode(slash)]).toEqual([503, 'retry_later']);

    const health = await fetch(`${ingest.url}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const head = await fetch(`${ingest.url}/healthz`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);

    const get = await fetch(`${ingest.url}${EVENTS}`);
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    expect(await get.json()).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });
    const options = await fetch(`${ingest.url}${EVENTS}`, { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([200, 'POST']);
    const missing = await fetch(`${ingest.url}/api/game-sdk/v2/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });

    const metrics = await (await fetch(`${ingest.url}/metrics`)).text();
    for (const labels of [
      `method="POST",route="${EVENTS}",status="503"} 2`,
      'method="GET",route="/healthz",status="200"} 1',
      'method="HEAD",route="/healthz",status="200"} 1',
      'method="GET",route="unmatched",status="405"} 1',
      'method="OPTIONS",route="unmatched",status="200"} 1',
      'method="GET",route="unmatched",status="404"} 1',
    ]) {
      expect(metrics).toContain(`http_requests_total{program="ingest",${labels}`);
    }
  }, 60_000);
});
