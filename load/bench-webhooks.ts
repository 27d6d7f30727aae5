// npm run bench:webhooks: webhook delivery latency, from a decision's commit to the receiver's 2xx. The five
// programs run as separate processes on real PostgreSQL and NATS (load/lib/system.ts); one game with one endpoint
// subscribed to its decisions, pointing at a receiver in this process that answers 204 at once; events are posted
// to the ingest edge at a fixed rate; each delivery's latency is the receiver's clock at arrival minus the message's
// created_at (the decision's transaction time, the same machine's clock). Printed: deliveries, p50, p99, max, the
// poll interval and the load average.
//
// With --slow-endpoints N: fairness across tenants. Another organization's game has N endpoints on a receiver that
// answers after --slow-ms; the quiet game's deliveries are measured alone (the slow endpoints idle), then while the
// other game posts at the same rate and its messages pile up at its slow endpoints: the quiet game's p99 beside /
// alone (target: within 2 x).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLoadIdentity } from './lib/identity.ts';
import { percentile } from './lib/proc.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:webhooks -- [options]

  --events N          events posted (each a decision, each a delivery)   default 600
  --rate N            events posted per second                           default 20
  --slow-endpoints N  another organization's game with N endpoints answering after --slow-ms: the quiet game's
                      delivery latency alone, then beside that game's events                default 0 (none)
  --slow-ms MS        the slow endpoints' answer time                    default 14000
  --help              this text

Environment: WEBHOOK_POLL_INTERVAL_MS (the ledger's, default 500).
`;

const { values } = parseArgs({
  options: {
    events: { type: 'string' },
    rate: { type: 'string' },
    'slow-endpoints': { type: 'string' },
    'slow-ms': { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const EVENTS = Number(values.events ?? 600);
const RATE = Number(values.rate ?? 20);
const SLOW_ENDPOINTS = Number(values['slow-endpoints'] ?? 0);
const SLOW_MS = Number(values['slow-ms'] ?? 14_000);
const POLL_MS = process.env.WEBHOOK_POLL_INTERVAL_MS ?? '500';
const log = (line: string) => process.stderr.write(`[webhooks] ${line}\n`);

async function json(response: Response): Promise<{ data: { id: string; issuedKey?: string } }> {
  const body = (await response.json()) as { data: { id: string; issuedKey?: string } };
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function main(): Promise<void> {
  const arrivals = new Map<string, number>();
  const receiver = createServer((request, response) => {
    const slow = request.url === '/slow';
    if (!slow) arrivals.set(String(request.headers['webhook-id']), Date.now());
    request.resume();
    request.on('end', () => {
      if (slow) setTimeout(() => response.writeHead(204).end(), SLOW_MS).unref();
      else response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  const runId = randomBytes(4).toString('hex');
  const identity = await createLoadIdentity(runId, 0);
  const adminToken = randomBytes(24).toString('hex');
  const system = await startLoadSystem({
    mode: 'programs',
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
      WEBHOOK_POLL_INTERVAL_MS: POLL_MS,
    },
    logDir: mkdtempSync(join(tmpdir(), 'bench-webhooks-')),
    startTimeoutMs: 240_000,
    log,
  });
  try {
    const base = system.urls.gateway;
    const developer = { Authorization: `Bearer ${identity.developerToken}`, 'Content-Type': 'application/json' };
    await json(
      await fetch(`${base}/api/admin/v1/invitations`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: identity.developerEmail }),
      }),
    );
    await json(await fetch(`${base}/api/developer/v1/access`, { headers: developer }));
    const act = async (action: Record<string, unknown>) =>
      (
        await json(
          await fetch(`${base}/api/developer/v1/console`, {
            method: 'POST',
            headers: developer,
            body: JSON.stringify(action),
          }),
        )
      ).data;
    /** An organization with one game, its key, `endpoints` endpoints at `url`, and one (unlinked) player. */
    const makeGame = async (name: string, url: string, endpoints: number) => {
      const organizationId = (await act({ type: 'createOrganization', name })).id;
      const projectId = (await act({ type: 'createProject', organizationId, name, maxPayoutCredits: 0 })).id;
      const gameId = (
        await act({
          type: 'createGame',
          projectId,
          name,
          platform: 'web',
          maxPayoutCredits: 0,
          dailyPlayerCapCredits: 0,
        })
      ).id;
      const key = (await act({ type: 'issueKey', gameId, kind: 'secret', name: 'bench' })).issuedKey!;
      const endpointIds: string[] = [];
      for (let i = 0; i < endpoints; i++) {
        endpointIds.push(
          (
            await act({
              type: 'createWebhookEndpoint',
              gameId,
              url,
              eventTypes: ['decision.accepted', 'decision.rejected'],
            })
          ).id,
        );
      }
      // One player of the game (unlinked: every decision is a rejection, a decision all the same).
      const playerId = randomUUID();
      await client.query(
        `insert into ledger.players (id, game_id, organization_id, external_player_id)
         select $1, g.id, g.organization_id, 'webhooks-player' from ledger.games g where g.id = $2`,
        [playerId, gameId],
      );
      return { key, playerId, endpointIds };
    };
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    try {
      const quiet = await makeGame('Webhooks', receiverUrl, 1);
      const noisy =
        SLOW_ENDPOINTS > 0
          ? await makeGame('Noisy', receiverUrl.replace(/\/hooks$/, '/slow'), SLOW_ENDPOINTS)
          : undefined;
      const post = (game: { key: string; playerId: string }) =>
        fetch(`${system.urls.ingest}/api/game-sdk/v2/events`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${game.key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            eventId: randomUUID(),
            playerId: game.playerId,
            eventType: 'level.up',
            occurredAt: new Date().toISOString(),
          }),
        }).then(async (response) => {
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`event: ${response.status}`);
        });
      /** EVENTS events of the quiet game at RATE (and as many of `beside`'s game); its deliveries' latencies. */
      const phase = async (beside: typeof noisy) => {
        const since = new Date();
        arrivals.clear();
        log(`posting ${EVENTS} events at ${RATE}/s${beside ? ', and as many of the other organization' : ''}`);
        const started = performance.now();
        const posts: Array<Promise<void>> = [];
        for (let i = 0; i < EVENTS; i += 1) {
          const due = started + (i * 1000) / RATE;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          posts.push(post(quiet));
          if (beside) posts.push(post(beside));
        }
        await Promise.all(posts);
        const deadline = Date.now() + 120_000;
        while (arrivals.size < EVENTS && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 100));
        const { rows } = await client.query<{ id: string; created_ms: string }>(
          `select id, (extract(epoch from created_at) * 1000)::float8::text as created_ms from ledger.webhook_messages
            where endpoint_id = $1 and created_at >= $2`,
          [quiet.endpointIds[0], since],
        );
        const latencies = Float64Array.from(
          rows.filter((row) => arrivals.has(row.id)).map((row) => arrivals.get(row.id)! - Number(row.created_ms)),
        ).sort();
        return { latencies, messages: rows.length, load: loadavg()[0]! };
      };
      const row = (label: string, p: Awaited<ReturnType<typeof phase>>) =>
        `| ${label} | ${p.latencies.length} of ${p.messages} | ${percentile(p.latencies, 50).toFixed(0)} | ${percentile(p.latencies, 99).toFixed(0)} | ${(p.latencies.at(-1) ?? 0).toFixed(0)} | ${p.load.toFixed(2)} |`;
      const alone = await phase(undefined);
      const lines = [
        `webhook delivery latency, commit to the receiver's arrival: ${EVENTS} events at ${RATE}/s, ` +
          `WEBHOOK_POLL_INTERVAL_MS ${POLL_MS}`,
        '',
        '| phase | delivered | p50 ms | p99 ms | max ms | load avg 1m |',
        '|---|---|---|---|---|---|',
        row('alone', alone),
      ];
      if (noisy) {
        const beside = await phase(noisy);
        lines.push(
          row(`beside ${SLOW_ENDPOINTS} slow endpoints (${SLOW_MS} ms) of another organization`, beside),
          '',
          `RATIO the quiet game's p99 beside / alone: ${(percentile(beside.latencies, 99) / percentile(alone.latencies, 99)).toFixed(2)} (target <= 2)`,
        );
      }
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      await client.end();
    }
  } finally {
    await system.stop();
    receiver.closeAllConnections();
    receiver.close();
  }
}

await main();
