// The web console in a real browser (Debian's Chromium driven by playwright-core) against the whole service on real
// PostgreSQL and NATS: the developer's journey from sign-in to a revoked key, confirmation dialogs for destructive
// actions, plain sentences for bad input (checked in the browser) and for the server's refusals, the banners of a
// game's state, a viewer without write buttons, axe-core on every page, keyboard use, and the screenshots of
// docs/console-ui.md (written to docs/console-ui/). Timings are printed, never asserted.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page, WebSocket } from 'playwright-core';
import { insertPlayer } from '../integration/console/helpers.ts';
import { liveSubscriptions, until } from '../integration/graphql/live-helpers.ts';
import { launchChromium, SCREENSHOTS, WAIT } from '../support/browser.ts';
import { sql } from '../support/database.ts';
import { postEvent } from '../support/ingest.ts';
import { admin, api, developerToken, startTestSystem, TEST_ADMIN_TOKEN, type TestSystem } from '../support/system.ts';

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

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function newPage(viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  return context.newPage();
}

/** axe-core on the page as it is now: no violation of any impact (critical, serious, moderate or minor). */
async function checkAccessibility(name: string) {
  await expectNoSidewaysScroll();
  const results = await new AxeBuilder({ page }).analyze();
  axeFindings[name] = results.violations.map(
    (v) => `${v.impact}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
  );
  expect(axeFindings[name]).toEqual([]);
}

/** The page never scrolls sideways: tables scroll inside their own box. */
async function expectNoSidewaysScroll() {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: (globalThis as any).document.scrollingElement.scrollWidth as number,
    innerWidth: (globalThis as any).innerWidth as number,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

/** Text the server or GraphQL writes for machines never reaches the page. */
const RAW_TEXT = /Variable "\$|got invalid value|Expected type|PositiveCredits|GraphQL|Syntax Error|\bat "input\./;
async function expectNoRawText() {
  expect(await page.locator('body').innerText()).not.toMatch(RAW_TEXT);
}

async function expectTitle(title: string) {
  await until(async () => (await page.title()) === `${title} · Sandbox Rewards console`, `the title ${title}`, 5000);
}

/** The POST /graphql bodies the page sent (to check that refused input sent nothing). */
function recordRequests(target: Page): string[] {
  const bodies: string[] = [];
  target.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql')
      bodies.push(request.postData() ?? '');
  });
  return bodies;
}
const sent = (bodies: string[], action: string) => bodies.filter((b) => b.includes(`Console_${action}`)).length;

const activeText = () => page.evaluate(() => (globalThis as any).document.activeElement?.textContent ?? '');
const focusInside = (selector: string) =>
  page.evaluate((s) => Boolean((globalThis as any).document.activeElement?.closest(s)), selector);

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
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /^Confirm/ })
      .click();
  }
}

/** The open confirmation dialog; `destructive`: red, the focus on Cancel. Escape closes it. */
async function expectDialog(name: string, destructive: boolean) {
  const dialog = page.getByRole('dialog', { name, exact: true });
  await dialog.waitFor(WAIT);
  expect(await dialog.evaluate((el) => el.classList.contains('dialog-danger'))).toBe(destructive);
  expect(await activeText()).toBe(destructive ? 'Cancel' : await dialog.getByRole('button').first().innerText());
  // Focus is trapped: Tab and Shift+Tab cycle inside the dialog.
  for (const key of ['Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
    await page.keyboard.press(key);
    expect(await focusInside('dialog')).toBe(true);
  }
  if (destructive) {
    const confirm = dialog.getByRole('button').first();
    expect(await confirm.evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor)).toBe(
      'rgb(176, 0, 32)',
    );
  }
  return dialog;
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

/**
 * A plain sentence appears at the field (role=alert, linked by aria-describedby): with the server's code in
 * parentheses when the server refused, without one when the browser did (nothing was sent).
 */
async function expectFieldError(title: string, label: string, sentence: string, code?: string) {
  const field = form(title).getByLabel(label, { exact: true });
  const alert = form(title).getByRole('alert');
  await alert.waitFor(WAIT);
  const text = await alert.innerText();
  expect(text).toContain(sentence);
  if (code) expect(text).toMatch(new RegExp(`\\(${code}\\)$`));
  else expect(text).not.toMatch(/\(\w+\)$/);
  expect(text).not.toMatch(RAW_TEXT);
  expect(await field.getAttribute('aria-invalid')).toBe('true');
  const describedBy = (await field.getAttribute('aria-describedby'))?.split(' ') ?? [];
  expect(describedBy).toContain(await alert.getAttribute('id'));
}

test('a developer signs in, builds a game, funds it, issues keys and sees a posted event live', async () => {
  page = await newPage();
  const requests = recordRequests(page);
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
  await expectTitle('Sign in');
  await checkAccessibility('sign-in');
  await screenshot('sign-in');

  // Keyboard: the e-mail field, then the button; Enter signs in.
  await page.getByLabel('E-mail').focus();
  await page.keyboard.type(ownerEmail);
  await page.keyboard.press('Tab');
  expect(await activeText()).toBe('Sign in');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await expectTitle('Organizations');
  expect(await page.getByText(ownerEmail).count()).toBe(1);

  // An empty name is refused in the browser, with a sentence and without a request.
  await submit('Create organization', { 'Organization name': '' });
  await expectFieldError('Create organization', 'Organization name', 'Organization name cannot be empty.');
  expect(sent(requests, 'createOrganization')).toBe(0);
  await submit('Create organization', { 'Organization name': 'Journey Studio' });
  await page.getByRole('heading', { name: 'Organization Journey Studio', exact: true }).waitFor(WAIT);
  await expectTitle('Organization Journey Studio');
  // A new organization has no balance: the page says so, and what to do.
  expect(await page.getByTestId('balance-empty').innerText()).toContain('Fund the organization');

  // Amounts: "1.5", "ten" and "" are refused in the browser with a sentence; nothing is sent.
  const amount = 'Amount to fund (credits)';
  await submit('Fund organization', { [amount]: '1.5' });
  await expectFieldError('Fund organization', amount, 'Credits are whole numbers: leave out the decimal point.');
  await submit('Fund organization', { [amount]: 'ten' });
  await expectFieldError('Fund organization', amount, 'Enter a whole number of credits, like 1,000 or 1000.');
  await submit('Fund organization', { [amount]: '' });
  await expectFieldError('Fund organization', amount, 'Enter an amount, like 1,000.');
  await submit('Fund organization', { [amount]: '0' });
  await expectFieldError('Fund organization', amount, 'Enter an amount above 0 credits.');
  expect(await page.getByRole('dialog').count()).toBe(0);
  expect(sent(requests, 'fundOrganization')).toBe(0);
  // "10,000" is 10,000: the confirmation shows the figures before and after, in credits and dollars (never "?").
  await form('Fund organization').getByLabel(amount, { exact: true }).fill('10,000');
  expect(await form('Fund organization').getByText('= $10.00 sandbox test credit').count()).toBe(1);
  await form('Fund organization').locator('button[type=submit]').click();
  const confirmation = await expectDialog('Confirm: Fund organization', false);
  const figures = await confirmation.innerText();
  expect(figures).toMatch(/Organization balance\s+0 \(\$0\.00\)\s+10,000 \(\$10\.00\)/);
  expect(figures).not.toContain('?');
  await checkAccessibility('funding-confirmation');
  await screenshot('funding-confirmation');
  // Escape cancels: nothing is sent, the focus is back on the button that opened it.
  await page.keyboard.press('Escape');
  await confirmation.waitFor({ state: 'detached', ...WAIT });
  expect(sent(requests, 'fundOrganization')).toBe(0);
  expect(await activeText()).toBe('Fund');
  await form('Fund organization').locator('button[type=submit]').click();
  await page.getByRole('dialog').getByRole('button', { name: 'Confirm Fund' }).click();
  await expectDone('Fund organization');
  expect(sent(requests, 'fundOrganization')).toBe(1);
  await page.getByText('Balance: 10,000 credits ($10.00 sandbox test credit).').waitFor(WAIT);
  await page.getByTestId('balance-empty').waitFor({ state: 'detached', ...WAIT });

  // The next action clears the last one's message.
  await submit('New project', { 'Project name': 'Launch', 'Project ceiling (credits)': '5,000' });
  await expectDone('New project');
  expect(await form('Fund organization').getByRole('status').count()).toBe(0);
  await page.getByRole('heading', { name: 'Project Launch', exact: true }).waitFor(WAIT);
  // The server's refusal is a plain sentence with its code.
  await submit('Allocate to project Launch', { 'Amount to allocate (credits)': '6000' }, { confirm: true });
  await expectFieldError(
    'Allocate to project Launch',
    'Amount to allocate (credits)',
    "This would take the project's budget above its ceiling",
    'project_limit',
  );
  await submit('Allocate to project Launch', { 'Amount to allocate (credits)': '3,000' }, { confirm: true });
  await expectDone('Allocate to project Launch');
  expect(await form('Allocate to project Launch').getByRole('alert').count()).toBe(0);

  await submit('New game in Launch', {
    'Game name': 'Space Race',
    Platform: 'web',
    'Game ceiling (credits)': '2000',
    'Daily cap per player (credits)': 'lots',
  });
  await expectFieldError(
    'New game in Launch',
    'Daily cap per player (credits)',
    'Enter a whole number of credits, like 1,000 or 1000.',
  );
  expect(sent(requests, 'createGame')).toBe(0);
  await submit('New game in Launch', {
    'Game name': 'Space Race',
    Platform: 'web',
    'Game ceiling (credits)': '2000',
    'Daily cap per player (credits)': '500',
  });
  await expectDone('New game in Launch');
  await checkAccessibility('organization');
  await expectNoRawText();
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
  await expectTitle('Game Space Race');
  gameId = page.url().split('/game/')[1] ?? '';
  await expectMode('Live');
  expect(sockets.map((socket) => new URL(socket.url()).pathname)).toEqual(['/graphql']);
  expect(sockets[0]!.url()).toBe(`${system.url.replace(/^http/, 'ws')}/graphql`);
  // A game without budget says so; the status select shows the current status.
  expect(await page.getByTestId('banner-budget').innerText()).toContain('This game has no budget yet.');
  expect(await form('Change game').getByLabel('Status', { exact: true }).inputValue()).toBe('active');
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '2500' }, { confirm: true });
  await expectFieldError(
    'Allocate to game',
    'Amount to allocate to the game (credits)',
    "This would take the game's budget above its ceiling",
    'game_limit',
  );
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '1,000' });
  const allocation = await expectDialog('Confirm: Allocate to game', false);
  expect(await allocation.innerText()).toMatch(/Game budget\s+0 \(\$0\.00\)\s+1,000 \(\$1\.00\)/);
  await allocation.getByRole('button', { name: 'Confirm Allocate' }).click();
  await expectDone('Allocate to game');
  await page.getByTestId('banner-budget').waitFor({ state: 'detached', ...WAIT });

  // Rules: a bad event type is refused by the server: a plain sentence, never GraphQL's text.
  await submit('New rule', { 'Event type': 'Level Up!', 'Reward (credits)': '10' });
  await expectFieldError(
    'New rule',
    'Event type',
    'Start with a lower-case letter, then up to 63 lower-case letters',
    'invalid_action',
  );
  await submit('New rule', { 'Event type': 'level.up', 'Reward (credits)': '10' });
  await expectDone('New rule');
  await page.getByRole('cell', { name: 'level.up', exact: true }).waitFor(WAIT);
  await submit('Edit reward of level.up', { 'New reward for level.up': '0' });
  await expectFieldError('Edit reward of level.up', 'New reward for level.up', 'Enter an amount above 0 credits.');
  expect(await form('New rule').getByRole('status').count()).toBe(0);
  expect(sent(requests, 'updateRule')).toBe(0);
  // Even what GraphQL itself refuses (here a reward of 0 slipped past the browser's check) reads as a sentence.
  await page.route('**/graphql', async (route) => {
    const body = route.request().postDataJSON();
    if (body?.operationName === 'Console_updateRule' && body.variables?.input?.rewardCredits === 7) {
      body.variables.input.rewardCredits = 0;
      await route.continue({ postData: JSON.stringify(body) });
    } else await route.continue();
  });
  await submit('Edit reward of level.up', { 'New reward for level.up': '7' });
  await expectFieldError(
    'Edit reward of level.up',
    'New reward for level.up',
    'Enter a whole number of credits above 0, like 1,000.',
    'invalid_action',
  );
  await expectNoRawText();
  await page.unroute('**/graphql');
  await submit('Edit reward of level.up', { 'New reward for level.up': '25' });
  await page.getByRole('cell', { name: '25', exact: true }).waitFor(WAIT);
  // Deactivating asks first: a red dialog with the focus on Cancel, trapped; Escape cancels and sends nothing.
  const updates = sent(requests, 'updateRule');
  await submit('Deactivate level.up', {});
  await expectDialog('Deactivate level.up?', true);
  await checkAccessibility('dialog-deactivate');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached', ...WAIT });
  expect(sent(requests, 'updateRule')).toBe(updates);
  expect(await activeText()).toBe('Deactivate');
  await submit('Deactivate level.up', {});
  await page.getByRole('dialog').getByRole('button', { name: 'Deactivate rule' }).click();
  await page.getByRole('button', { name: 'Activate', exact: true }).waitFor(WAIT);
  // Activating needs no confirmation.
  await submit('Activate level.up', {});
  await page.getByRole('button', { name: 'Deactivate', exact: true }).waitFor(WAIT);
  expect(await page.getByRole('dialog').count()).toBe(0);

  // Keys: an empty name, a public key, then a secret key shown once (the focus moves to it) with a copy button.
  await submit('New key', { 'Key name': '', Kind: 'secret' });
  await expectFieldError('New key', 'Key name', 'Key name cannot be empty.');
  await submit('New key', { 'Key name': 'browser', Kind: 'public' });
  await page.getByRole('cell', { name: 'browser', exact: true }).waitFor(WAIT);
  await submit('New key', { 'Key name': 'server', Kind: 'secret' });
  const issued = page.getByTestId('issued-key');
  await issued.filter({ hasText: /^cr_sk_/ }).waitFor(WAIT);
  secretKey = await issued.innerText();
  expect(secretKey).toMatch(/^cr_sk_sandbox_[A-Za-z0-9_-]{43}$/);
  expect(await focusInside('.issued')).toBe(true);
  expect(await page.getByRole('button', { name: 'Copy key' }).count()).toBe(1);
  await screenshot('key-issued');

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
  await page
    .getByRole('region', { name: 'Link intents', exact: true })
    .screenshot({ path: `${SCREENSHOTS}link-intents.png` });
  expect(await summary.innerText()).toMatch(/^\d+ accepted, \d+ rejected in the window/);
  expect(
    await page
      .getByRole('img', { name: /^Decisions per minute/ })
      .locator('canvas')
      .count(),
  ).toBe(1);
  await checkAccessibility('game');
  await expectNoRawText();
  await screenshot('game');

  // Pausing asks first; the page then says the game is paused, and the select shows it. Resuming is one button.
  await submit('Change game', { Status: 'paused' });
  await expectDialog('Pause Space Race?', true);
  await page.getByRole('dialog').getByRole('button', { name: 'Pause game' }).click();
  const paused = page.getByTestId('banner-paused');
  await paused.waitFor(WAIT);
  expect(await paused.innerText()).toContain('This game is paused.');
  await until(
    async () => (await form('Change game').getByLabel('Status', { exact: true }).inputValue()) === 'paused',
    'the status select showing paused',
    WAIT.timeout,
  );
  await checkAccessibility('game-paused');
  await screenshot('game-paused');
  await form('Resume game').getByRole('button', { name: 'Resume game' }).click();
  await paused.waitFor({ state: 'detached', ...WAIT });
  await until(
    async () => (await form('Change game').getByLabel('Status', { exact: true }).inputValue()) === 'active',
    'the status select showing active',
    WAIT.timeout,
  );

  // Revoke the secret key (after a red confirmation): the key is refused from then on.
  await submit('Revoke key server', {});
  const revoke = await expectDialog('Revoke key server?', true);
  expect(await revoke.innerText()).toContain('This cannot be undone');
  await revoke.getByRole('button', { name: 'Revoke key' }).click();
  await form('Revoke key server').waitFor({ state: 'detached', ...WAIT });
  // The one-time banner of that key goes with it.
  expect(await page.getByTestId('issued-key').count()).toBe(0);
  const refused = await postEvent(system.url, secretKey, {
    eventId: randomUUID(),
    playerId,
    eventType: 'level.up',
    occurredAt: new Date().toISOString(),
  });
  expect(refused.status).toBe(401);

  // Records explorer: a bad page size reads as a sentence, then the decision opens with its full record.
  await page.getByRole('link', { name: 'All decisions of this game' }).click();
  await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
  await expectTitle('Records: decisions');
  const filters = page.getByRole('form', { name: 'Record filters' });
  await filters.getByLabel('Page size').fill('500');
  await filters.getByRole('button', { name: 'Show records' }).click();
  await filters.getByRole('alert').waitFor(WAIT);
  expect(await filters.getByRole('alert').innerText()).toBe(
    'The page size must be a whole number from 1 to 100. (INVALID_RECORD_QUERY)',
  );
  await filters.getByLabel('Page size').fill('10');
  await filters.getByRole('button', { name: 'Show records' }).click();
  await page
    .getByRole('button', { name: /^Open record/ })
    .first()
    .click();
  const record = page.getByRole('region', { name: 'Record', exact: true });
  await record.waitFor(WAIT);
  expect(await record.innerText()).toContain(posted.body.data.eventId);
  expect(await record.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
  await checkAccessibility('records');
  await screenshot('records');

  // Members: invite the viewer by e-mail as a viewer; the role select shows the member's role.
  await page.getByRole('link', { name: 'Organizations' }).click();
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  const invite = 'E-mail (development sign-in) or identity user id';
  await submit('Invite a member', { [invite]: '', Role: 'viewer' });
  await expectFieldError(
    'Invite a member',
    invite,
    'E-mail (development sign-in) or identity user id cannot be empty.',
  );
  await submit('Invite a member', { [invite]: viewerEmail, Role: 'viewer' });
  await expectDone('Invite a member');
  await page.getByRole('cell', { name: 'viewer', exact: true }).waitFor(WAIT);
  const roleOfViewer = page.getByRole('form', { name: /^Change role of dev\|/ }).getByLabel('Role');
  expect(await roleOfViewer.inputValue()).toBe('viewer');
  await submit('Invite a member', { [invite]: viewerEmail, Role: 'admin' });
  await expectFieldError('Invite a member', invite, 'This person is already a member of the organization.', 'conflict');
  await screenshot('members');
  // Removing a member asks first.
  const extra = `extra-${randomUUID().slice(0, 8)}@example.com`;
  await submit('Invite a member', { [invite]: extra, Role: 'admin' });
  await expectDone('Invite a member');
  const removeForms = page.getByRole('form', { name: /^Remove dev\|/ });
  await until(async () => (await removeForms.count()) === 2, 'two removable members', WAIT.timeout);
  await removeForms.last().getByRole('button', { name: 'Remove' }).click();
  const remove = await expectDialog((await removeForms.last().getAttribute('aria-label'))!.concat('?'), true);
  await checkAccessibility('dialog-remove-member');
  await remove.getByRole('button', { name: 'Remove member' }).click();
  await until(async () => (await removeForms.count()) === 1, 'the member removed', WAIT.timeout);
  await page.getByRole('link', { name: 'Organizations' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await checkAccessibility('organizations');
  await screenshot('organizations');
});

test("a game's state shows as banners: under 10 % of its budget left, then used up", async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(ownerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await submit('New game in Launch', {
    'Game name': 'Tiny',
    Platform: 'web',
    'Game ceiling (credits)': '100',
    'Daily cap per player (credits)': '1000',
  });
  await expectDone('New game in Launch');
  await page.getByRole('link', { name: 'Game Tiny' }).click();
  await page.getByRole('heading', { name: 'Game Tiny', exact: true }).waitFor(WAIT);
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '100' }, { confirm: true });
  await expectDone('Allocate to game');
  await submit('New rule', { 'Event type': 'bonus', 'Reward (credits)': '95' });
  await expectDone('New rule');
  await submit('New key', { 'Key name': 'tiny', Kind: 'secret' });
  const key = await page.getByTestId('issued-key').innerText();
  const tinyId = page.url().split('/game/')[1] ?? '';
  const playerId = await insertPlayer(system, tinyId);
  const [player] = await sql(system.databaseUrl!, 'select credits_user_id from ledger.players where id = $1', [
    playerId,
  ]);
  await admin(system, 'PUT', `/native-accounts/${player!.credits_user_id}`, { status: 'active' });
  const event = () =>
    postEvent(system.url, key, {
      eventId: randomUUID(),
      playerId,
      eventType: 'bonus',
      occurredAt: new Date().toISOString(),
    });
  expect((await event()).body.data.status).toBe('accepted');
  const banner = page.getByTestId('banner-budget');
  await banner.filter({ hasText: 'Less than 10 % of the budget is left' }).waitFor(WAIT);
  expect(await banner.innerText()).toContain('5 credits ($0.005 sandbox test credit) of 100 credits');
  await submit('Edit reward of bonus', { 'New reward for bonus': '5' });
  await page.getByRole('cell', { name: '5', exact: true }).waitFor(WAIT);
  expect((await event()).body.data.status).toBe('accepted');
  await banner.filter({ hasText: 'The budget is used up' }).waitFor(WAIT);
  expect((await event()).body.data.reason).toBe('game_budget_exhausted');
  await checkAccessibility('game-exhausted');
  await screenshot('game-exhausted');
  // The lists say it too.
  await page.getByRole('link', { name: 'Organizations' }).click();
  await page.getByRole('listitem').filter({ hasText: /^Tiny/ }).getByText('budget used up').waitFor(WAIT);
});

/** Where the decisions chart draws bars of `color`: the columns of its plot area that hold them. */
async function barColumns(chart: ReturnType<Page['getByRole']>, color: [number, number, number]) {
  return chart.evaluate((element, rgb) => {
    const canvas = element.querySelector('canvas') as any;
    const over = element.querySelector('.u-over') as any;
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    const [left, top] = [Math.round(over.offsetLeft * ratio), Math.round(over.offsetTop * ratio)];
    const [width, height] = [Math.round(over.offsetWidth * ratio), Math.round(over.offsetHeight * ratio)];
    const pixels = canvas.getContext('2d').getImageData(left, top, width, height).data;
    const columns = new Set<number>();
    for (let y = 0; y < height; y += 1)
      for (let x = 0; x < width; x += 1) {
        const i = (y * width + x) * 4;
        if (rgb.every((c: number, k: number) => Math.abs(pixels[i + k] - c) < 12)) columns.add(x);
      }
    return { width, first: Math.min(...columns), last: Math.max(...columns), count: columns.size };
  }, color);
}

test("a new game's empty state gives the commands that send its first event; the charts then show it whole", async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(ownerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await submit('New game in Launch', {
    'Game name': 'Fresh',
    Platform: 'web',
    'Game ceiling (credits)': '20,000',
    'Daily cap per player (credits)': '1,000',
  });
  await expectDone('New game in Launch');
  await page.getByRole('link', { name: 'Game Fresh' }).click();
  await page.getByRole('heading', { name: 'Game Fresh', exact: true }).waitFor(WAIT);
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '500' }, { confirm: true });
  await expectDone('Allocate to game');
  await submit('New rule', { 'Event type': 'level.up', 'Reward (credits)': '10' });
  await expectDone('New rule');
  await submit('New key', { 'Key name': 'fresh', Kind: 'secret' });
  const key = await page.getByTestId('issued-key').innerText();

  // No decision yet: the page says what to do next, with the commands for this game (its key, its address).
  const first = page.getByTestId('first-event');
  await first.waitFor(WAIT);
  expect(await first.innerText()).toContain('No decisions yet: send your first event.');
  const empty = page.getByTestId('charts-empty');
  await empty.waitFor(WAIT);
  expect(await empty.innerText()).toContain('No decisions in the last hour.');
  const commands = first.locator('pre');
  expect(await commands.count()).toBe(2);
  const createPlayer = await commands.first().innerText();
  expect(createPlayer).toContain(`${system.url}/api/game-sdk/v2/link-intents -H "Authorization: Bearer ${key}"`);
  await checkAccessibility('game-empty');
  await screenshot('game-empty');

  // Pasted into bash as shown: a player, then (the page fills in its id) the first event.
  const player = await run('bash', ['-c', createPlayer]);
  expect(player.code).toBe(0);
  const playerId = JSON.parse(player.stdout).data.playerId as string;
  await until(
    async () => (await commands.count()) === 1 && (await commands.first().innerText()).includes(playerId),
    'the event command with the new player',
    WAIT.timeout,
  );
  const sendEvent = await commands.first().innerText();
  expect(sendEvent).toContain(`${system.url}/api/game-sdk/v2/events -H "Authorization: Bearer ${key}"`);
  const decided = await run('bash', ['-c', sendEvent]);
  expect(decided.code).toBe(0);
  // The player is not linked to a platform account yet: a rejected decision, but a decision.
  expect(JSON.parse(decided.stdout).data).toMatchObject({ status: 'rejected', reason: 'player_not_linked' });
  await page
    .getByRole('table', { name: 'Live decisions' })
    .getByRole('cell', { name: 'player_not_linked' })
    .waitFor(WAIT);

  // Legends carry the window's real figures; the reasons are listed with their counts.
  const legend = page.getByRole('list', { name: 'Decisions in the window' });
  await legend.filter({ hasText: 'rejected: player_not_linked: 1' }).waitFor(WAIT);
  expect(await legend.innerText()).toContain('accepted: 0');
  const reasons = page.getByRole('table', { name: 'Rejection reasons' });
  expect(await reasons.getByRole('row', { name: /player_not_linked 1 100 %/ }).count()).toBe(1);
  expect(await page.getByRole('list', { name: 'Budget burn' }).innerText()).toMatch(/ceiling: 20,000/);

  // The budget-burn y axis is as wide as its widest label ("20,000"): nothing clipped.
  const burn = page.getByRole('img', { name: 'Spending against budget and ceiling' });
  const fit = await burn.evaluate((element) => {
    const context = (globalThis as any).document.createElement('canvas').getContext('2d');
    context.font = '12px system-ui, sans-serif';
    return { axis: (element.querySelector('.u-over') as any).offsetLeft, label: context.measureText('20,000').width };
  });
  expect(fit.axis).toBeGreaterThan(fit.label + 10);
  // The current bucket is drawn whole (not cut in half at the plot's right edge), in the hour's and the day's view.
  const chart = page.getByRole('img', { name: /^Decisions per minute/ });
  const hour = await barColumns(chart, [176, 0, 32]);
  // Whole: as wide as any bar (80 % of a 61st of the plot: 60 buckets and half a bucket each side), within a pixel.
  expect(hour.count).toBeGreaterThanOrEqual(Math.floor((hour.width / 61) * 0.8) - 1);
  await page.getByLabel('Chart window').selectOption('day');
  const day = page.getByRole('img', { name: /^Decisions per hour/ });
  await day.waitFor(WAIT);
  await until(async () => (await barColumns(day, [176, 0, 32])).count > 0, 'the bar of the current hour', WAIT.timeout);
  const bar = await barColumns(day, [176, 0, 32]);
  expect(bar.count).toBeGreaterThanOrEqual(Math.floor((bar.width / 25) * 0.8) - 1);
  expect(bar.last).toBeLessThan(bar.width);
  await checkAccessibility('game-charts');
  await page.getByRole('region', { name: 'Charts', exact: true }).screenshot({ path: `${SCREENSHOTS}charts.png` });
});

test('on a phone (390 px) no page scrolls sideways, the navigation collapses, and every page passes axe', async () => {
  expect(gameId).not.toBe('');
  page = await newPage(PHONE);
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').waitFor(WAIT);
  await checkAccessibility('phone-sign-in');
  await page.getByLabel('E-mail').fill(ownerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await checkAccessibility('phone-organizations');
  await screenshot('phone-organizations');

  // The navigation hides behind a Menu button (a disclosure) and opens with it.
  const menu = page.getByRole('button', { name: 'Menu' });
  const records = page.getByRole('link', { name: 'Records' });
  expect(await menu.getAttribute('aria-expanded')).toBe('false');
  expect(await records.isVisible()).toBe(false);
  await menu.click();
  expect(await menu.getAttribute('aria-expanded')).toBe('true');
  await records.waitFor({ state: 'visible', ...WAIT });
  await checkAccessibility('phone-menu');
  await screenshot('phone-menu');
  await menu.click();
  await records.waitFor({ state: 'hidden', ...WAIT });

  await page.getByRole('link', { name: 'Journey Studio' }).click();
  await page.getByRole('heading', { name: 'Organization Journey Studio', exact: true }).waitFor(WAIT);
  await expectTitle('Organization Journey Studio');
  await checkAccessibility('phone-organization');
  await screenshot('phone-organization');

  await page.getByRole('link', { name: 'Game Space Race' }).click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  await expectTitle('Game Space Race');
  await page.getByTestId('decisions-summary').waitFor(WAIT);
  await page.getByRole('table', { name: 'Keys' }).waitFor(WAIT);
  // A wide table scrolls inside its own box, which the keyboard reaches.
  const keys = page.getByRole('region', { name: 'Keys (scrolls sideways)' });
  expect(await keys.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  expect(await keys.getAttribute('tabindex')).toBe('0');
  await checkAccessibility('phone-game');
  await screenshot('phone-game');
  // A dialog fits the screen too.
  await submit('Revoke key browser', {});
  await expectDialog('Revoke key browser?', true);
  await checkAccessibility('phone-dialog');
  await page.screenshot({ path: `${SCREENSHOTS}phone-dialog.png` });
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached', ...WAIT });

  await menu.click();
  await records.click();
  await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
  await expectTitle('Records: decisions');
  expect(await menu.getAttribute('aria-expanded')).toBe('false');
  const open = page.getByRole('button', { name: /^Open record/ }).first();
  await open.click();
  // The record opened takes the focus; closing it gives the focus back to its Open button.
  const record = page.getByRole('region', { name: 'Record', exact: true });
  await record.waitFor(WAIT);
  expect(await record.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
  await checkAccessibility('phone-records');
  await screenshot('phone-records');
  await record.getByRole('button', { name: 'Close' }).click();
  expect(await open.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
});

/** Runs a command to its end (in the repository's folder, with this Node first on PATH). */
async function run(command: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(command, args, {
    cwd: process.cwd(),
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

test("npm run demo ends with the console's address and a curl line that posts an event the console shows", async () => {
  const demo = await run(process.execPath, ['services/all-in-one/src/demo.ts', '--url', system.url], {
    DATA_DIR: system.dataDir,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  });
  expect({ code: demo.code, stderr: demo.stderr }).toEqual({ code: 0, stderr: '' });
  const consoleUrl = /^ {2}Console {2}(\S+)$/m.exec(demo.stdout)?.[1];
  expect(consoleUrl).toBe(`${system.url}/console/`);
  const curl = demo.stdout
    .split('\n')
    .find((line) => line.startsWith('  curl') && line.includes('/api/game-sdk/v2/events'))
    ?.trim();
  // The whole secret key, not a shortened one.
  expect(curl).toMatch(/-H "Authorization: Bearer cr_sk_sandbox_[A-Za-z0-9_-]{43}" /);
  const email = /Sign in with (demo-[0-9a-f]+@example\.com)/.exec(demo.stdout)?.[1];
  expect(email).toBeDefined();

  // The printed address, signed in as the demo's developer: the demo game's page, live.
  page = await newPage();
  await page.goto(consoleUrl!);
  await page.getByLabel('E-mail').fill(email!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Demo Studio' }).click();
  await page.getByRole('link', { name: 'Game Demo Quest' }).click();
  await expectMode('Live');
  const decisions = page.getByRole('table', { name: 'Live decisions' }).getByRole('cell', { name: 'level.completed' });
  await decisions.first().waitFor(WAIT);
  expect(await decisions.count()).toBe(1);

  // The printed line, pasted into bash as it is: an accepted event, shown on the page at once.
  const posted = await run('bash', ['-c', curl!]);
  expect(posted.code).toBe(0);
  expect(JSON.parse(posted.stdout).data).toMatchObject({ status: 'accepted', rewardCredits: 250, replayed: false });
  await until(async () => (await decisions.count()) === 2, 'the pasted event on the page', WAIT.timeout);
}, 120_000);

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
  expect(await alert.innerText()).toBe(
    'This e-mail has no invitation to the console yet: ask the operator to invite it (npm run admin -- invite EMAIL). ' +
      '(DEVELOPER_INVITATION_REQUIRED)',
  );
});
