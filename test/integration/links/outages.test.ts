// A state owner that does not answer: the linking routes answer 503 with their code and change nothing. The programs
// are composed here as the all-in-one process composes them (the launcher's in-process mode), on a private
// nats-server, so that one of the two state owners can be left out (its subjects then have no responders).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EnvReader } from '#runtime/config.ts';
import { issueKeyValue, issueLinkToken } from '#runtime/credentials/keys.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';
import { Lifecycle } from '#runtime/lifecycle.ts';
import { createMetrics } from '#runtime/metrics.ts';
import type { ProgramName } from '#runtime/program.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { readProgramConfigs, startInProcess } from '../../../services/launcher/src/in-process.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { startNats } from '../../support/servers.ts';
import { api } from '../../support/system.ts';
import { APPROVE, expectError, INSPECT, LINK_INTENTS, PLAYERS } from './helpers.ts';

const logger = pino({ level: 'silent' });
// Admission without device permits: the test has no operator API to issue them.
const ENV = { NATIVE_ADMISSION_MODE: 'off' };

interface Composed {
  url: string;
  stop(): Promise<void>;
}

/** The links edge, plus identity-admission and the ledger when asked for, on one database. */
async function compose(
  natsUrl: string,
  databaseUrl: string,
  dataDir: string,
  owners: { identity: boolean; ledger: boolean },
): Promise<Composed> {
  const metrics = createMetrics();
  const lifecycle = new Lifecycle(logger);
  return lifecycle.start(async () => {
    const transport = await lifecycle.step(
      'transport',
      () => NatsTransport.connect({ url: natsUrl, connectionName: 'test', requestTimeoutMs: 2000, logger, metrics }),
      (connected) => connected.close(),
    );
    const database = await lifecycle.step(
      'database',
      () => Database.open({ url: databaseUrl, poolMax: 4, logger }),
      (opened) => opened.close(),
    );
    const programs: ProgramName[] = [
      ...(owners.identity ? (['identity-admission'] as const) : []),
      ...(owners.ledger ? (['ledger'] as const) : []),
      'links',
    ];
    const started = await startInProcess({
      programs,
      configs: readProgramConfigs(new EnvReader(ENV), programs),
      transport,
      database,
      logger,
      metrics,
      devIdentityDataDir: dataDir,
      lifecycle,
      http: { name: 'test', port: 0, host: '127.0.0.1', readiness: async () => ({}) },
    });
    return {
      url: `http://127.0.0.1:${started.port}`,
      async stop() {
        await lifecycle.stop();
      },
    };
  });
}

describe('linking routes with a state owner down', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let databaseUrl: string;
  let dataDir: string;
  let secretKey: string;
  let playerId: string;
  let linkToken: string;
  let session: string;

  beforeAll(async () => {
    nats = await startNats();
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-links-outage-'));
    databaseUrl = await createTestDatabase();
    await migrate(databaseUrl, [ledgerMigrations, identityMigrations], logger);
    // A game, a secret key, a player and a pending intent, written directly (no console in this composition).
    const key = issueKeyValue('secret');
    const token = issueLinkToken();
    secretKey = key.value;
    linkToken = token.value;
    playerId = randomUUID();
    await sql(
      databaseUrl,
      `with o as (insert into ledger.organizations (id, name, created_by) values (gen_random_uuid(), 'Org', 'test') returning id),
            p as (insert into ledger.projects (id, organization_id, name, max_payout_credits)
                  select gen_random_uuid(), o.id, 'Project', 1000 from o returning id, organization_id),
            g as (insert into ledger.games (id, project_id, organization_id, slug, name, platform, max_payout_credits,
                                            daily_player_cap_credits)
                  select gen_random_uuid(), p.id, p.organization_id, gen_random_uuid(), 'Game', 'web', 1000, 10 from p
                  returning id, organization_id),
            k as (insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, key_hash)
                  select gen_random_uuid(), g.id, g.organization_id, 'secret', 'server', 'cr_sk_sandbox_AAAAAA', $1 from g),
            pl as (insert into ledger.players (id, game_id, organization_id, external_player_id)
                   select $2, g.id, g.organization_id, 'outage-player' from g returning id, game_id)
       insert into ledger.link_intents (id, game_id, player_id, token_hash, expires_at)
       select gen_random_uuid(), pl.game_id, pl.id, $3, now() + interval '10 minutes' from pl`,
      [key.hash, playerId, token.hash],
    );
    const provider = await loadDevProvider(dataDir, 'native');
    session = await provider.sign({ sid: 'sid-outage' }, { subject: randomUUID() });
  });
  afterAll(async () => {
    await nats?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const nativeHeaders = { 'X-Client-Country': 'DE', 'X-Client-Build': '1' };
  const unchanged = async () => {
    const rows = await sql(
      databaseUrl,
      `select (select count(*)::int from ledger.link_intents where consumed_at is not null) as consumed,
              (select count(*)::int from ledger.players) as players,
              (select count(*)::int from ledger.players where linked_at is not null) as linked`,
    );
    expect(rows[0]).toEqual({ consumed: 0, players: 1, linked: 0 });
  };

  it('ledger down: 503 retry_later on every linking route (native ones after admission); nothing changes', async () => {
    const edge = await compose(nats.url, databaseUrl, dataDir, { identity: true, ledger: false });
    try {
      for (const path of [INSPECT, APPROVE]) {
        const answer = await api(edge.url, 'POST', path, {
          token: session,
          headers: nativeHeaders,
          body: { linkToken },
        });
        expectError(answer, 503, 'retry_later');
        expect(answer.headers.get('retry-after')).toBe('1');
        // Admission still answers first.
        expectError(
          await api(edge.url, 'POST', path, { headers: nativeHeaders, body: { linkToken } }),
          401,
          'UNAUTHORIZED',
        );
      }
      expectError(
        await api(edge.url, 'POST', LINK_INTENTS, { token: secretKey, body: { externalPlayerId: 'new-player' } }),
        503,
        'retry_later',
      );
      expectError(await api(edge.url, 'GET', `${PLAYERS}/${playerId}`, { token: secretKey }), 503, 'retry_later');
      expectError(
        await api(edge.url, 'GET', `${PLAYERS}?externalPlayerId=outage-player`, { token: secretKey }),
        503,
        'retry_later',
      );
      await unchanged();
    } finally {
      await edge.stop();
    }
  }, 120_000);

  it('identity-admission down: 503 ACCOUNT_STATUS_UNAVAILABLE on the native routes, retry_later on the game routes', async () => {
    const edge = await compose(nats.url, databaseUrl, dataDir, { identity: false, ledger: true });
    try {
      for (const path of [INSPECT, APPROVE]) {
        const answer = await api(edge.url, 'POST', path, {
          token: session,
          headers: nativeHeaders,
          body: { linkToken },
        });
        expectError(answer, 503, 'ACCOUNT_STATUS_UNAVAILABLE');
      }
      expectError(
        await api(edge.url, 'POST', LINK_INTENTS, { token: secretKey, body: { externalPlayerId: 'new-player' } }),
        503,
        'retry_later',
      );
      expectError(await api(edge.url, 'GET', `${PLAYERS}/${playerId}`, { token: secretKey }), 503, 'retry_later');
      await unchanged();
    } finally {
      await edge.stop();
    }
  }, 120_000);

  it('both back: the same requests succeed', async () => {
    const edge = await compose(nats.url, databaseUrl, dataDir, { identity: true, ledger: true });
    try {
      const approved = await api(edge.url, 'POST', APPROVE, {
        token: session,
        headers: nativeHeaders,
        body: { linkToken },
      });
      expect(approved.status).toBe(200);
      expect(approved.body.data).toMatchObject({ playerId, linked: true });
    } finally {
      await edge.stop();
    }
  }, 120_000);
});
