// The whole journey end to end on the embedded default: the real `npm start` process (PGlite, in-process transport)
// with its development identity provider. Invite, organization -> project -> game -> rule -> keys, funding, link
// intent, inspection and approval from a native session, an event, the accepted decision, the spend in the snapshot
// and the event in the records. Every answer validates against the served /openapi.json. Then `npm run demo` runs
// the same journey against the same process and prints it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { type JourneyResult, runJourney } from '../../../services/all-in-one/src/journey.ts';
import { runScript } from '../../support/cli.ts';
import { type ProgramProcess, startProgram } from '../../support/processes.ts';
import { freePort } from '../../support/servers.ts';
import { api, TEST_ADMIN_TOKEN } from '../../support/system.ts';

describe('the whole journey on `npm start` (embedded default)', () => {
  let dataDir: string;
  let server: ProgramProcess;
  let doc: any;
  let journey: JourneyResult;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-journey-'));
    server = await startProgram('all-in-one', { DATA_DIR: dataDir, ADMIN_TOKEN: TEST_ADMIN_TOKEN }, 90_000);
    doc = (await api(server.url, 'GET', '/openapi.json')).body;
    journey = await runJourney({ url: server.url, adminToken: TEST_ADMIN_TOKEN, dataDir });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** The document's path template matching a concrete path. */
  const templateOf = (path: string): string => {
    const pathname = path.split('?')[0]!;
    const match = Object.keys(doc.paths).find((template) =>
      new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
    );
    if (!match) throw new Error(`no path of /openapi.json matches ${pathname}`);
    return match;
  };

  it('runs on the embedded default', async () => {
    const ready = await api(server.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(server.output()).not.toMatch(/"level":(50|60)/); // no error or fatal log line
  });

  it('every step answered 200 with a body that matches the served OpenAPI document', () => {
    const served = new SchemaSet(doc.components.schemas);
    expect(journey.steps.map((s) => `${s.method} ${templateOf(s.path)}`)).toEqual([
      'POST /api/admin/v1/invitations',
      'GET /api/developer/v1/access',
      ...Array(9).fill('POST /api/developer/v1/console'),
      'POST /api/game-sdk/v2/link-intents',
      'POST /api/admin/v1/device-permits',
      'POST /api/native/v1/link-intents/inspect',
      'POST /api/native/v1/link-intents/approve',
      'GET /api/game-sdk/v2/players/{playerId}',
      'POST /api/game-sdk/v2/events',
      'GET /api/developer/v1/console',
      'GET /api/developer/v1/records',
    ]);
    for (const step of journey.steps) {
      const operation = doc.paths[templateOf(step.path)][step.method.toLowerCase()];
      const validate = served.compile(operation.responses['200'].content['application/json'].schema);
      expect({
        step: step.title,
        status: step.status,
        valid: validate(step.body),
        errors: validate.errors ?? null,
      }).toEqual({
        step: step.title,
        status: 200,
        valid: true,
        errors: null,
      });
    }
  });

  it('links the player: inspection shows the game, approval links the native account', () => {
    const byTitle = (title: string) => journey.steps.find((s) => s.title === title)!.body as any;
    expect(byTitle('Inspect the link token').data).toMatchObject({ gameName: 'Demo Quest', mode: 'sandbox' });
    expect(byTitle('Approve the link token').data).toEqual({
      playerId: journey.playerId,
      gameId: journey.gameId,
      linked: true,
      mode: 'sandbox',
    });
    expect(byTitle('Read the player (now linked)').data).toMatchObject({ linked: true, linkedAt: expect.any(String) });
  });

  it('accepts the event with the rule reward', () => {
    expect(journey.decision).toMatchObject({
      playerId: journey.playerId,
      status: 'accepted',
      reason: null,
      rewardCredits: 250,
      replayed: false,
    });
  });

  it('shows the spend in the snapshot and the event in the records', () => {
    const { snapshot, records } = journey;
    expect(snapshot.organizations.find((o) => o.id === journey.organizationId)).toMatchObject({
      balanceCredits: 80_000,
    });
    expect(snapshot.projects.find((p) => p.id === journey.projectId)).toMatchObject({
      budgetCredits: 20_000,
      spentCredits: 250,
    });
    expect(snapshot.games.find((g) => g.id === journey.gameId)).toMatchObject({
      budgetCredits: 5_000,
      spentCredits: 250,
    });
    expect(snapshot.players).toEqual([
      expect.objectContaining({ id: journey.playerId, creditsUserId: journey.creditsUserId, username: 'Demo Player' }),
    ]);
    expect(snapshot.events).toEqual([
      expect.objectContaining({ eventId: journey.decision.eventId, status: 'accepted', rewardCredits: 250 }),
    ]);
    expect(records.records).toEqual([
      expect.objectContaining({ eventId: journey.decision.eventId, playerId: journey.playerId, status: 'accepted' }),
    ]);
  });

  describe('npm run demo', () => {
    const runDemo = (args: string[], env: Record<string, string | undefined>) =>
      runScript('services/all-in-one/src/demo.ts', args, env);

    it('walks through the journey step by step and ends with the decision and the snapshot figures', async () => {
      const { code, stdout, stderr } = await runDemo(['--url', server.url], {
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        DATA_DIR: dataDir,
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toContain('-> POST /api/game-sdk/v2/link-intents');
      expect(stdout).toContain('-> POST /api/native/v1/link-intents/approve');
      expect(stdout).toContain('-> POST /api/game-sdk/v2/events');
      expect(stdout).toContain('Decision: accepted, rewardCredits 250, replayed false');
      expect(stdout).toMatch(/game "Demo Quest": budgetCredits 5000, spentCredits 250, available 4750/);
      expect(stdout).toMatch(/project "Demo Project": budgetCredits 20000, spentCredits 250/);
      // Secrets are shown by their form only, in the steps. The one exception is the closing "send another event
      // yourself" line: the demo's own sandbox secret key, whole, so that the line can be pasted.
      expect(stdout).toMatch(/cr_link_sandbox_[A-Za-z0-9_-]{6}…/);
      const [steps = '', closing = ''] = stdout.split('== Send another event yourself');
      expect(steps).not.toMatch(/cr_(sk|pk|link)_sandbox_[A-Za-z0-9_-]{43}/);
      expect(closing.match(/cr_(sk|pk|link)_sandbox_[A-Za-z0-9_-]{43}/g)).toEqual([
        expect.stringMatching(/^cr_sk_sandbox_/),
      ]);
      expect(stdout).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
    });

    it('explains what is missing: no ADMIN_TOKEN, nothing listening, a wrong ADMIN_TOKEN, another DATA_DIR', async () => {
      const noToken = await runDemo(['--url', server.url], { DATA_DIR: dataDir });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain('ADMIN_TOKEN is not set');

      const closed = `http://127.0.0.1:${await freePort()}`;
      const nobody = await runDemo(['--url', closed], { ADMIN_TOKEN: TEST_ADMIN_TOKEN, DATA_DIR: dataDir });
      expect(nobody.code).toBe(2);
      expect(nobody.stderr).toContain(`nothing answers at ${closed}`);
      expect(nobody.stderr).toContain('npm start');

      const wrong = await runDemo(['--url', server.url], { ADMIN_TOKEN: 'x'.repeat(40), DATA_DIR: dataDir });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('ADMIN_TOKEN does not match the server');

      const elsewhere = mkdtempSync(join(tmpdir(), 'rewards-journey-other-'));
      try {
        const other = await runDemo(['--url', server.url], { ADMIN_TOKEN: TEST_ADMIN_TOKEN, DATA_DIR: elsewhere });
        expect(other.code).toBe(1);
        expect(other.stderr).toContain('No development identity key');
      } finally {
        rmSync(elsewhere, { recursive: true, force: true });
      }
    });
  });
});
