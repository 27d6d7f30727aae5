// npm run bench:export: the decision export's rate and memory. The five programs run as separate
// processes on real PostgreSQL and NATS (load/lib/system.ts); one game gets N decisions (written in SQL, one
// statement), a developer of its organization exports them once as NDJSON (and once as CSV), reading the stream as
// fast as it comes; printed: decisions, seconds, decisions/s, MiB/s, and the gateway's and the ledger's RSS idle
// before and their peak (VmHWM) after.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLoadIdentity } from './lib/identity.ts';
import { rssMiB } from './lib/proc.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:export -- [options]

  --decisions N   decisions of the exported game        default 1000000
  --help          this text

Environment: DECISION_EXPORT_PAGE_SIZE (the gateway's page, default 500).
`;

const { values } = parseArgs({ options: { decisions: { type: 'string' }, help: { type: 'boolean' } } });
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const DECISIONS = Number(values.decisions ?? 1_000_000);
const log = (line: string) => process.stderr.write(`[export] ${line}\n`);

async function json(response: Response): Promise<{ data: { id: string } }> {
  const body = (await response.json()) as { data: { id: string } };
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function main(): Promise<void> {
  const runId = randomBytes(4).toString('hex');
  const identity = await createLoadIdentity(runId, 0);
  const adminToken = randomBytes(24).toString('hex');
  const system = await startLoadSystem({
    mode: 'programs',
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      ...(process.env.DECISION_EXPORT_PAGE_SIZE && {
        DECISION_EXPORT_PAGE_SIZE: process.env.DECISION_EXPORT_PAGE_SIZE,
      }),
    },
    logDir: mkdtempSync(join(tmpdir(), 'bench-export-')),
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
      ).data.id;
    const organizationId = await act({ type: 'createOrganization', name: 'Export' });
    const projectId = await act({ type: 'createProject', organizationId, name: 'Export', maxPayoutCredits: 1000 });
    const gameId = await act({
      type: 'createGame',
      projectId,
      name: 'Export',
      platform: 'web',
      maxPayoutCredits: 1000,
      dailyPlayerCapCredits: 10,
    });
    const newest = new Date();
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    try {
      log(`writing ${DECISIONS} decisions`);
      const playerId = randomUUID();
      const keyId = randomUUID();
      await client.query(
        `insert into ledger.players (id, game_id, organization_id, external_player_id)
         select $1, g.id, g.organization_id, 'export-player' from ledger.games g where g.id = $2`,
        [playerId, gameId],
      );
      await client.query(
        `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
         select $1, g.id, g.organization_id, 'secret', 'bench', 'cr_sk_sandbox_AAAAAA', null, $2
           from ledger.games g where g.id = $3`,
        [keyId, randomBytes(32), gameId],
      );
      await client.query(
        `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                    occurred_at, status, reason, reward_credits, payload_hash, created_at)
         select gen_random_uuid(), g.id, g.project_id, g.organization_id, gen_random_uuid(), $1, $2, 'level.up',
                $3::timestamptz - make_interval(secs => i / 1000.0),
                case when i % 2 = 0 then 'accepted' else 'rejected' end,
                case when i % 2 = 0 then null else 'daily_player_cap' end,
                case when i % 2 = 0 then 5 else 0 end, sha256(int8send(i)),
                $3::timestamptz - make_interval(secs => i / 1000.0)
           from ledger.games g, generate_series(1::bigint, $4::bigint) i where g.id = $5`,
        [playerId, keyId, newest.toISOString(), DECISIONS, gameId],
      );
      await client.query('analyze ledger.events');
    } finally {
      await client.end();
    }
    const pid = (name: string) => system.processes.find((p) => p.name === name)!.pid;
    const idle = { gateway: rssMiB(pid('gateway'), 'VmRSS'), ledger: rssMiB(pid('ledger'), 'VmRSS') };
    const from = new Date(newest.getTime() - 30 * 86_400_000).toISOString();
    const to = new Date(newest.getTime() + 1).toISOString();
    const rows: string[] = [];
    for (const format of ['ndjson', 'csv']) {
      const started = performance.now();
      const response = await fetch(
        `${base}/api/developer/v1/decisions/export?${new URLSearchParams({ gameId, from, to, format })}`,
        { headers: { Authorization: developer.Authorization } },
      );
      if (response.status !== 200) throw new Error(`export: ${response.status} ${await response.text()}`);
      let bytes = 0;
      let lines = 0;
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        for (const byte of chunk) if (byte === 10) lines += 1;
      }
      const seconds = (performance.now() - started) / 1000;
      const decisions = format === 'csv' ? lines - 1 : lines;
      if (decisions !== DECISIONS) throw new Error(`${format}: ${decisions} decisions exported of ${DECISIONS}`);
      rows.push(
        `| ${format} | ${decisions} | ${seconds.toFixed(1)} | ${Math.round(decisions / seconds)} | ${(bytes / 2 ** 20 / seconds).toFixed(1)} |`,
      );
    }
    const peak = { gateway: rssMiB(pid('gateway')), ledger: rssMiB(pid('ledger')) };
    process.stdout.write(
      [
        `decision export, ${DECISIONS} decisions of one game, page ${process.env.DECISION_EXPORT_PAGE_SIZE ?? 500}; load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(', ')}`,
        '',
        '| format | decisions | seconds | decisions/s | MiB/s |',
        '|---|---|---|---|---|',
        ...rows,
        '',
        `RSS idle before (MiB): gateway ${idle.gateway.toFixed(0)}, ledger ${idle.ledger.toFixed(0)}; peak (VmHWM) after both exports: gateway ${peak.gateway.toFixed(0)}, ledger ${peak.ledger.toFixed(0)}`,
        '',
      ].join('\n'),
    );
  } finally {
    await system.stop();
  }
}

await main();
