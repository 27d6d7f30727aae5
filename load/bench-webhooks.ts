// npm run bench:webhooks: webhook delivery latency, from a decision's commit to the receiver's 2xx. The five
// programs run as separate processes on real PostgreSQL and NATS (load/lib/system.ts); one game with one endpoint
// subscribed to its decisions, pointing at a receiver in this process that answers 204 at once; events are posted
// to the ingest edge at a fixed rate; each delivery's latency is the receiver's clock at arrival minus the message's
// created_at (the decision's transaction time, the same machine's clock). Printed: deliveries, p50, p99, max, the
// poll interval and the load average.
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

  --events N      events posted (each a decision, each a delivery)   default 600
  --rate N        events posted per second                           default 20
  --help          this text

Environment: WEBHOOK_POLL_INTERVAL_MS (the ledger's, default 500).
`;

const { values } = parseArgs({
  options: { events: { type: 'string' }, rate: { type: 'string' }, help: { type: 'boolean' } },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const EVENTS = Number(values.events ?? 600);
const RATE = Number(values.rate ?? 20);
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
    arrivals.set(String(request.headers['webhook-id']), Date.now());
    request.resume();
    request.on('end', () => response.writeHead(204).end());
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
    const organizationId = (await act({ type: 'createOrganization', name: 'Webhooks' })).id;
    const projectId = (await act({ type: 'createProject', organizationId, name: 'Webhooks', maxPayoutCredits: 0 })).id;
    const gameId = (
      await act({
        type: 'createGame',
        projectId,
        name: 'Webhooks',
        platform: 'web',
        maxPayoutCredits: 0,
        dailyPlayerCapCredits: 0,
      })
    ).id;
    const key = (await act({ type: 'issueKey', gameId, kind: 'secret', name: 'bench' })).issuedKey!;
    await act({
      type: 'createWebhookEndpoint',
      gameId,
      url: receiverUrl,
      eventTypes: ['decision.accepted', 'decision.rejected'],
    });
    // One player of the game (unlinked: every decision is a rejection, a decision all the same).
    const playerId = randomUUID();
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    try {
      await client.query(
        `insert into ledger.players (id, game_id, organization_id, external_player_id)
         select $1, g.id, g.organization_id, 'webhooks-player' from ledger.games g where g.id = $2`,
        [playerId, gameId],
      );

      log(`posting ${EVENTS} events at ${RATE}/s`);
      const started = performance.now();
      const posts: Array<Promise<void>> = [];
      for (let i = 0; i < EVENTS; i += 1) {
        const due = started + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        posts.push(
          fetch(`${system.urls.ingest}/api/game-sdk/v2/events`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({
              eventId: randomUUID(),
              playerId,
              eventType: 'level.up',
              occurredAt: new Date().toISOString(),
            }),
          }).then(async (response) => {
            await response.arrayBuffer();
            if (response.status !== 200) throw new Error(`event: ${response.status}`);
          }),
        );
      }
      await Promise.all(posts);
      const deadline = Date.now() + 60_000;
      while (arrivals.size < EVENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      const { rows } = await client.query<{ id: string; created_ms: string }>(
        `select id, (extract(epoch from created_at) * 1000)::float8::text as created_ms from ledger.webhook_messages`,
      );
      const latencies = Float64Array.from(
        rows.filter((row) => arrivals.has(row.id)).map((row) => arrivals.get(row.id)! - Number(row.created_ms)),
      ).sort();
      process.stdout.write(
        [
          `webhook delivery latency, commit to the receiver's arrival: ${latencies.length} of ${rows.length} messages ` +
            `delivered, ${EVENTS} events at ${RATE}/s, WEBHOOK_POLL_INTERVAL_MS ${POLL_MS}; load average ${loadavg()
              .map((l) => l.toFixed(2))
              .join(', ')}`,
          '',
          '| p50 ms | p99 ms | max ms |',
          '|---|---|---|',
          `| ${percentile(latencies, 50).toFixed(0)} | ${percentile(latencies, 99).toFixed(0)} | ${(latencies.at(-1) ?? 0).toFixed(0)} |`,
          '',
        ].join('\n'),
      );
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
