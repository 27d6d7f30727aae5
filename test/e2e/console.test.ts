// The web console in a real browser (Debian's Chromium driven by playwright-core) against the whole service on real
// PostgreSQL and NATS: the developer's journey from sign-in to a revoked key, a viewer without write buttons, the
// server's code and message at the field for bad input, axe-core on every page, keyboard use, and the screenshots
// of docs/console-ui.md (written to docs/console-ui/). Timings are printed, never asserted.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page, WebSocket } from 'playwright-core';
import { insertPlayer } from '../integration/console/helpers.ts';
import { liveSubscriptions, until } from '../integration/graphql/live-helpers.ts';
import { launchChromium, SCREENSHOTS, severeViolations, WAIT } from '../support/browser.ts';
import { sql } from '../support/database.ts';
import { postEvent } from '../support/ingest.ts';
import { admin, api, developerToken, startTestSystem, type TestSystem } from '../support/system.ts';

let system: TestSystem;
let browser: Browser;
const contexts: BrowserContext[] = [];
const ownerEmail = `owner-${randomUUID().slice(0, 8)}@example.com`;
const viewerEmail = `viewer-${randomUUID().slice(0, 8)}@example.com`;
let page: Page;
let secretKey = '';
let gameId = '';
const axeFindings: Record<string, string[]> = {};

beforeAll(async () => {
  browser = await launchChromium();
  system = await startTestSystem();
  for (const email of [ownerEmail, viewerEmail]) {
    const invited = await admin(system, 'POST', '/invitations', { email });
    expect(invited.status).toBe(200);
  }
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await system?.stop();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  return context.newPage();
}

/** axe-core on the page as it is now: no serious or critical violation. */
async function checkAccessibility(name: string) {
  axeFindings[name] = await severeViolations(page);
  expect(axeFindings[name]).toEqual([]);
}

async function screenshot(name: string) {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}

/** The form whose accessible name is `title`. */
const form = (title: string) => page.getByRole('form', { name: title, exact: true });

/** Submits a form and, for a confirmed one, confirms; returns once the form reports success or an error. */
async function submit(title: string, values: Record<string, string>, options: { confirm?: boolean } = {}) {
  const target = form(title);
  for (const [label, value] of Object.entries(values)) {
    const field = target.getByLabel(label, { exact: true });
    if ((await field.evaluate((el) => el.tagName)) === 'SELECT') await field.selectOption(value);
    else await field.fill(value);
  }
  await target.locator('button[type=submit]').click();
  if (options.confirm) {
    await target.getByRole('button', { name: /^Confirm/ }).click();
  }
}

/**
 * Waits until the live indicator shows `mode` (and `detail`, when given, somewhere in its text). The page starts in
 * 'Polling: ... connecting to live updates', so a test about why it polls must wait for the reason, not the mode.
 */
async function expectMode(mode: 'Live' | 'Polling', options: { timeout: number; detail?: string } = WAIT) {
  const indicator = page.getByTestId('live-mode');
  const detail = options.detail ? `.*${options.detail.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}` : '';
  await indicator.filter({ hasText: new RegExp(`^\\s*${mode}:${detail}`, 's') }).waitFor(options);
  return indicator.innerText();
}

async function expectDone(title: string) {
  await form(title).getByRole('status').waitFor(WAIT);
}

/** The server's code and message appear at the field (role=alert, linked by aria-describedby). */
async function expectFieldError(title: string, label: string, code: string) {
  const field = form(title).getByLabel(label, { exact: true });
  const alert = form(title).getByRole('alert');
  await alert.waitFor(WAIT);
  const text = await alert.innerText();
  expect(text).toContain(`${code}:`);
  expect(text.length).toBeGreaterThan(code.length + 3);
  expect(await field.getAttribute('aria-invalid')).toBe('true');
  const describedBy = await field.getAttribute('aria-describedby');
  expect(await alert.getAttribute('id')).toBe(describedBy);
}

test('a developer signs in, builds a game, funds it, issues keys and sees a posted event live', async () => {
  page = await newPage();
  const started = performance.now();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').waitFor(WAIT);
  const interactiveMs = performance.now() - started;
  process.stdout.write(`console: first page interactive after ${interactiveMs.toFixed(0)} ms\n`);
  // The first page's JavaScript, gzipped (the budget is 350 KiB).
  const scripts = await page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e.name)
      .filter((name) => name.endsWith('.js')),
  );
  let gzipped = 0;
  for (const url of scripts)
    gzipped += gzipSync(Buffer.from(await (await fetch(url)).arrayBuffer()), { level: 9 }).length;
  process.stdout.write(
    `console: first page JavaScript ${(gzipped / 1024).toFixed(1)} KiB gzipped (${scripts.length} files)\n`,
  );
  expect(gzipped).toBeLessThanOrEqual(350 * 1024);
  await checkAccessibility('sign-in');
  await screenshot('sign-in');

  // Keyboard: the e-mail field, then the button; Enter signs in.
  await page.getByLabel('E-mail').focus();
  await page.keyboard.type(ownerEmail);
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Sign in');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  expect(await page.getByText(ownerEmail).count()).toBe(1);

  // Bad input shows the server's code and message at the field.
  await submit('Create organization', { 'Organization name': '' });
  await expectFieldError('Create organization', 'Organization name', 'invalid_action');
  await submit('Create organization', { 'Organization name': 'Journey Studio' });
  await page.getByRole('heading', { name: 'Organization Journey Studio', exact: true }).waitFor(WAIT);

  // Funding with a confirmation of the figures before and after.
  await submit('Fund organization', { 'Amount to fund (credits)': 'ten' }, { confirm: true });
  await expectFieldError('Fund organization', 'Amount to fund (credits)', 'invalid_action');
  await form('Fund organization').getByLabel('Amount to fund (credits)', { exact: true }).fill('10000');
  await form('Fund organization').locator('button[type=submit]').click();
  const confirmation = form('Fund organization').getByRole('group');
  expect(await confirmation.innerText()).toMatch(/Organization balance\s+0\s+10,000/);
  await screenshot('funding-confirmation');
  await form('Fund organization')
    .getByRole('button', { name: /^Confirm/ })
    .click();
  await expectDone('Fund organization');
  await page.getByText('Balance: 10,000 credits.').waitFor(WAIT);

  await submit('New project', { 'Project name': 'Launch', 'Project ceiling (credits)': '5000' });
  await expectDone('New project');
  await page.getByRole('heading', { name: 'Project Launch', exact: true }).waitFor(WAIT);
  await submit('Allocate to project Launch', { 'Amount to allocate (credits)': '6000' }, { confirm: true });
  await expectFieldError('Allocate to project Launch', 'Amount to allocate (credits)', 'project_limit');
  await submit('Allocate to project Launch', { 'Amount to allocate (credits)': '3000' }, { confirm: true });
  await expectDone('Allocate to project Launch');

  await submit('New game in Launch', {
    'Game name': 'Space Race',
    Platform: 'web',
    'Game ceiling (credits)': '2000',
    'Daily cap per player (credits)': 'lots',
  });
  await expectFieldError('New game in Launch', 'Daily cap per player (credits)', 'invalid_action');
  await submit('New game in Launch', {
    'Game name': 'Space Race',
    Platform: 'web',
    'Game ceiling (credits)': '2000',
    'Daily cap per player (credits)': '500',
  });
  await expectDone('New game in Launch');
  await checkAccessibility('organization');
  await screenshot('organization');

  // The game page subscribes to its decisions over a WebSocket at /graphql; the frames it receives are recorded.
  const sockets: WebSocket[] = [];
  const socketFrames: string[] = [];
  page.on('websocket', (socket) => {
    sockets.push(socket);
    socket.on('framereceived', (frame) => socketFrames.push(String(frame.payload)));
  });
  await page.getByRole('link', { name: 'Game Space Race' }).click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  gameId = page.url().split('/game/')[1] ?? '';
  await expectMode('Live');
  expect(sockets.map((socket) => new URL(socket.url()).pathname)).toEqual(['/graphql']);
  expect(sockets[0]!.url()).toBe(`${system.url.replace(/^http/, 'ws')}/graphql`);
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '2500' }, { confirm: true });
  await expectFieldError('Allocate to game', 'Amount to allocate to the game (credits)', 'game_limit');
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '1000' }, { confirm: true });
  await expectDone('Allocate to game');

  // Rules: bad event type, create, edit, deactivate and activate.
  await submit('New rule', { 'Event type': 'Level Up!', 'Reward (credits)': '10' });
  await expectFieldError('New rule', 'Event type', 'invalid_action');
  await submit('New rule', { 'Event type': 'level.up', 'Reward (credits)': '10' });
  await expectDone('New rule');
  await page.getByRole('cell', { name: 'level.up', exact: true }).waitFor(WAIT);
  await submit('Edit reward of level.up', { 'New reward for level.up': '0' });
  await expectFieldError('Edit reward of level.up', 'New reward for level.up', 'invalid_action');
  await submit('Edit reward of level.up', { 'New reward for level.up': '25' });
  await page.getByRole('cell', { name: '25', exact: true }).waitFor(WAIT);
  await submit('Deactivate level.up', {});
  await page.getByRole('button', { name: 'Activate' }).waitFor(WAIT);
  await submit('Activate level.up', {});
  await page.getByRole('button', { name: 'Deactivate' }).waitFor(WAIT);

  // Keys: a bad name, then a secret key shown once with a copy button, and a public key.
  await submit('New key', { 'Key name': '', Kind: 'secret' });
  await expectFieldError('New key', 'Key name', 'invalid_action');
  await submit('New key', { 'Key name': 'server', Kind: 'secret' });
  const issued = page.getByTestId('issued-key');
  await issued.waitFor(WAIT);
  secretKey = await issued.innerText();
  expect(secretKey).toMatch(/^cr_sk_sandbox_[A-Za-z0-9_-]{43}$/);
  expect(await page.getByRole('button', { name: 'Copy key' }).count()).toBe(1);
  await screenshot('key-issued');
  await page.getByRole('button', { name: 'Done, hide it' }).click();
  expect(await page.getByTestId('issued-key').count()).toBe(0);
  await submit('New key', { 'Key name': 'browser', Kind: 'public' });
  await page.getByRole('cell', { name: 'browser', exact: true }).waitFor(WAIT);

  // An event posted with the secret key appears on the game's page without a reload.
  const playerId = await insertPlayer(system, gameId);
  // The player's platform account exists and is active, so that the decision is an accepted reward.
  const [player] = await sql(system.databaseUrl!, 'select credits_user_id from ledger.players where id = $1', [
    playerId,
  ]);
  expect((await admin(system, 'PUT', `/native-accounts/${player!.credits_user_id}`, { status: 'active' })).status).toBe(
    200,
  );
  // The gateway holds the page's subscription (its gauge) before the event is posted.
  await until(async () => (await liveSubscriptions(system.url)) >= 1, 'the page subscription', WAIT.timeout);
  const liveSince = performance.now();
  const posted = await postEvent(system.url, secretKey, {
    eventId: randomUUID(),
    playerId,
    eventType: 'level.up',
    occurredAt: new Date().toISOString(),
  });
  expect(posted.status).toBe(200);
  expect(posted.body.data.status).toBe('accepted');
  // The game server asks to link one of its players: the intent is listed on the game's page, pending, tokenless.
  const linkIntent = await api(system.url, 'POST', '/api/game-sdk/v2/link-intents', {
    token: secretKey,
    body: { externalPlayerId: 'link-me' },
  });
  expect(linkIntent.status).toBe(200);
  const live = page.getByRole('table', { name: 'Live decisions' });
  await live.getByRole('cell', { name: 'level.up', exact: true }).waitFor(WAIT);
  process.stdout.write(
    `console: posted event shown after ${(performance.now() - liveSince).toFixed(0)} ms (live, subscription)\n`,
  );
  expect(await live.getByRole('cell', { name: posted.body.data.status, exact: true }).count()).toBe(1);
  // It came over the subscription: a `next` frame of the socket carries it, and the page is still live.
  expect(socketFrames.some((frame) => frame.includes('"next"') && frame.includes(posted.body.data.eventId))).toBe(true);
  expect(sockets).toHaveLength(1);
  await expectMode('Live');
  await page
    .getByRole('table', { name: 'Players' })
    .getByRole('cell', { name: /^player-/ })
    .waitFor(WAIT);
  // The chart's aggregate (decisionStats) counts it too.
  const summary = page.getByTestId('decisions-summary');
  await summary.filter({ hasText: `1 ${posted.body.data.status}` }).waitFor(WAIT);
  await page.getByText('Spent: 25 of budget 1,000').waitFor(WAIT);
  const intents = page.getByRole('table', { name: 'Link intents' });
  await intents.getByRole('row', { name: /link-me pending/ }).waitFor(WAIT);
  expect(await intents.innerText()).not.toContain(linkIntent.body.data.linkToken);
  await page.getByRole('region', { name: 'Link intents' }).screenshot({ path: `${SCREENSHOTS}link-intents.png` });
  expect(await summary.innerText()).toMatch(/^\d+ accepted, \d+ rejected in the window/);
  expect(
    await page
      .getByRole('img', { name: /^Decisions per minute/ })
      .locator('canvas')
      .count(),
  ).toBe(1);
  await checkAccessibility('game');
  await screenshot('game');

  // Revoke the secret key: the key is refused from then on.
  await submit('Revoke key server', {});
  await form('Revoke key server').waitFor({ state: 'detached', ...WAIT });
  const refused = await postEvent(system.url, secretKey, {
    eventId: randomUUID(),
    playerId,
    eventType: 'level.up',
    occurredAt: new Date().toISOString(),
  });
  expect(refused.status).toBe(401);

  // Records explorer: bad page size, then the decision opened with its full record.
  await page.getByRole('link', { name: 'All decisions of this game' }).click();
  await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
  const filters = page.getByRole('form', { name: 'Record filters' });
  await filters.getByLabel('Page size').fill('500');
  await filters.getByRole('button', { name: 'Show records' }).click();
  await filters.getByRole('alert').waitFor(WAIT);
  expect(await filters.getByRole('alert').innerText()).toContain('INVALID_RECORD_QUERY:');
  await filters.getByLabel('Page size').fill('10');
  await filters.getByRole('button', { name: 'Show records' }).click();
  await page
    .getByRole('button', { name: /^Open record/ })
    .first()
    .click();
  const record = page.getByRole('region', { name: 'Record' });
  await record.waitFor(WAIT);
  expect(await record.innerText()).toContain(posted.body.data.eventId);
  await checkAccessibility('records');
  await screenshot('records');

  // Members: invite the viewer by e-mail as a viewer.
  await page.getByRole('link', { name: 'Organizations' }).click();
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await submit('Invite a member', { 'E-mail (development sign-in) or identity user id': '', Role: 'viewer' });
  await expectFieldError('Invite a member', 'E-mail (development sign-in) or identity user id', 'invalid_action');
  await submit('Invite a member', { 'E-mail (development sign-in) or identity user id': viewerEmail, Role: 'viewer' });
  await expectDone('Invite a member');
  await page.getByRole('cell', { name: 'viewer', exact: true }).waitFor(WAIT);
  await screenshot('members');
  await page.getByRole('link', { name: 'Organizations' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await checkAccessibility('organizations');
  await screenshot('organizations');
});

test('a viewer sees the organization and its game without any write button', async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(viewerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await page.getByText('Your role:').waitFor(WAIT);
  expect(await page.getByText('viewer', { exact: true }).count()).toBeGreaterThan(0);
  expect(await page.locator('main form').count()).toBe(0);
  await page.getByRole('link', { name: 'Game Space Race' }).click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  await page
    .getByRole('table', { name: 'Live decisions' })
    .getByRole('cell', { name: 'level.up', exact: true })
    .waitFor(WAIT);
  await page
    .getByRole('table', { name: 'Link intents' })
    .getByRole('row', { name: /link-me pending/ })
    .waitFor(WAIT);
  expect(await page.locator('main form').count()).toBe(0);
  expect(await page.locator('main button').count()).toBe(0);
  await checkAccessibility('game-viewer');
  await screenshot('game-viewer');
});

test('without the live socket the game page polls, still shows a posted event, and goes live again later', async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  // Between the page and the gateway, the WebSocket upgrade is refused as the gateway does when a dependency is
  // unavailable (1013 Try Again Later), until `refuse` turns false; then the socket reaches the real gateway.
  let refuse = true;
  let refused = 0;
  await page.routeWebSocket(/\/graphql$/, (socket) => {
    if (!refuse) {
      socket.connectToServer();
      return;
    }
    refused += 1;
    void socket.close({ code: 1013, reason: 'AUTH_UNAVAILABLE' });
  });
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(ownerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await page.getByRole('link', { name: 'Game Space Race' }).click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  expect(await expectMode('Polling', { ...WAIT, detail: '1013 AUTH_UNAVAILABLE' })).toContain('1013 AUTH_UNAVAILABLE');
  await checkAccessibility('game-polling');

  // A new secret key (the journey revoked its own), then an event: it appears by polling.
  await submit('New key', { 'Key name': 'fallback', Kind: 'secret' });
  const issued = page.getByTestId('issued-key');
  await issued.waitFor(WAIT);
  const key = await issued.innerText();
  const [player] = await sql(
    system.databaseUrl!,
    'select id from ledger.players where game_id = $1 and credits_user_id is not null limit 1',
    [gameId],
  );
  const since = performance.now();
  const posted = await postEvent(system.url, key, {
    eventId: randomUUID(),
    playerId: player!.id,
    eventType: 'level.up',
    occurredAt: new Date().toISOString(),
  });
  expect(posted.status).toBe(200);
  const live = page.getByRole('table', { name: 'Live decisions' });
  await until(
    async () => (await live.getByRole('cell', { name: 'level.up', exact: true }).count()) === 2,
    'the second decision on the page',
    WAIT.timeout,
  );
  process.stdout.write(`console: posted event shown after ${(performance.now() - since).toFixed(0)} ms (polling)\n`);
  await expectMode('Polling');
  expect(refused).toBeGreaterThanOrEqual(1);

  // The socket works again: the page's next attempt (3 s, 6 s, 12 s, ... after the failures) goes live.
  refuse = false;
  await expectMode('Live', { timeout: 90_000 });
}, 150_000);

test('the session expiring closes the live socket (4401) and the console shows the signed-out state', async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  // The development sign-in answers a real session of the same provider that expires in 10 s (the route signs 12 h).
  const token = await developerToken(system, viewerEmail, { expiresIn: '10s' });
  await page.route('**/console/dev-session', (route) =>
    route.fulfill({ json: { data: { token, email: viewerEmail } } }),
  );
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(viewerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await page.getByRole('link', { name: 'Game Space Race' }).click();
  await expectMode('Live');
  // The gateway closes the socket at the token's exp; the console forgets the session and asks to sign in again.
  const alert = page.getByRole('alert').filter({ hasText: 'SESSION_EXPIRED' });
  await alert.waitFor(WAIT);
  await page.getByLabel('E-mail').waitFor(WAIT);
  expect(await page.getByRole('heading', { name: 'Game Space Race' }).count()).toBe(0);
  expect(await page.getByText(viewerEmail).count()).toBe(0);
});

test('a developer without an invitation sees the server code at sign-in', async () => {
  page = await newPage();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(`stranger-${randomUUID().slice(0, 8)}@example.com`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor(WAIT);
  expect(await alert.innerText()).toContain('DEVELOPER_INVITATION_REQUIRED:');
});
