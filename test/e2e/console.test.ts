// The web console in a real browser (Debian's Chromium driven by playwright-core) against the whole service on real
// PostgreSQL and NATS: the developer's journey from sign-in to a revoked key, confirmation dialogs for destructive
// actions, plain sentences for bad input (checked in the browser) and for the server's refusals, the banners of a
// game's state, a viewer without write buttons, axe-core on every page, keyboard use, and the screenshots of
// docs/console-ui.md (written to docs/console-ui/). Timings are printed, never asserted.
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Locator, Page, WebSocket } from 'playwright-core';
import { developerSubject } from '#runtime/identity/dev-identity-provider.ts';
import { firstRowLayout, launchChromium, SCREENSHOTS, WAIT } from '../support/browser.ts';
import { runCommand } from '../support/cli.ts';
import { insertPlayer } from '../support/console.ts';
import { sql } from '../support/database.ts';
import { postEvent } from '../support/ingest.ts';
import { liveSubscriptions, until } from '../support/live.ts';
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

// What a step of the developer's journey leaves to the next ones.
let requests: string[] = [];
let nav: Locator;
let headline: Locator;
let dryRun: Locator;
let result: Locator;
let updatesBefore = 0;
let playerId = '';
/** The game page's WebSockets and the frames they received. */
const sockets: WebSocket[] = [];
const socketFrames: string[] = [];

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

/**
 * The game page's tabs are all in view, whole: one row where they fit, wrapped where they do not (none runs past the
 * screen's right edge), and the page does not scroll sideways.
 */
async function expectTabsInView() {
  const row = await page.getByRole('navigation', { name: 'Game sections' }).evaluate((nav) => {
    const width = (globalThis as any).innerWidth as number;
    const tabs = Array.from(nav.querySelectorAll('a')) as Array<{
      getBoundingClientRect(): { left: number; right: number };
    }>;
    return {
      count: tabs.length,
      outside: tabs.filter((t) => t.getBoundingClientRect().left < 0 || t.getBoundingClientRect().right > width).length,
    };
  });
  expect(row.count).toBe(6); // Overview, Charts, Rules, Keys, Players, Webhooks
  expect(row.outside).toBe(0);
  await expectNoSidewaysScroll();
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

/**
 * A write form sits behind its action button ("New …", "Edit …", named as the form): opens it when it is closed.
 * The focus moves to the form's first field.
 */
async function reveal(title: string) {
  if ((await form(title).count()) > 0) return;
  const opener = page.getByRole('button', { name: title, exact: true });
  expect(await opener.getAttribute('aria-expanded')).toBe('false');
  await opener.click();
  expect(await opener.getAttribute('aria-expanded')).toBe('true');
  await form(title).waitFor(WAIT);
  expect(await focusInside(`form[aria-label="${title}"]`)).toBe(true);
}

/** A tab of the game page (its own address, #/game/<id>/<tab>). */
async function gameTab(name: 'Overview' | 'Charts' | 'Rules' | 'Keys' | 'Players') {
  // "Keys (new key)" while a new key's one-time banner is shown.
  const label = new RegExp(`^${name}( \\(new key\\))?$`);
  await page.getByRole('navigation', { name: 'Game sections' }).getByRole('link', { name: label }).click();
  await page.getByTestId(`tab-${name.toLowerCase()}`).waitFor(WAIT);
}

/** A link of the page's main part (the navigation holds the same names). */
const mainLink = (name: string) => page.getByRole('main').getByRole('link', { name, exact: true });

/** The game's id in the page's address. */
const gameIdOf = (url: string) => url.split('/game/')[1]?.split('/')[0] ?? '';

/** Submits a form (opening it first) and, for a confirmed one, confirms. */
async function submit(title: string, values: Record<string, string>, options: { confirm?: boolean } = {}) {
  await reveal(title);
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

// The developer's journey is one story told in steps, each a test of its own that goes on from the step before.
test('journey 1: a developer signs in (keyboard); the first page within its budget', async () => {
  page = await newPage();
  requests = recordRequests(page);
  const started = performance.now();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').waitFor(WAIT);
  const interactiveMs = performance.now() - started;
  process.stdout.write(`console: first page interactive after ${interactiveMs.toFixed(0)} ms\n`);
  // The first load's bytes on the wire (the page, its scripts and styles as the gateway sent them, pre-compressed,
  // and the requests it made), as the browser counts them (Resource Timing's transferSize: headers and encoded body).
  // The budget is 200 KB (a size, not a time).
  const transfer = await page.evaluate(() => {
    const timing = (globalThis as any).performance;
    return [...timing.getEntriesByType('navigation'), ...timing.getEntriesByType('resource')].map((e: any) => ({
      name: e.name as string,
      transferSize: e.transferSize as number,
      decodedBodySize: e.decodedBodySize as number,
    }));
  });
  const transferred = transfer.reduce((sum, e) => sum + e.transferSize, 0);
  const decoded = transfer.reduce((sum, e) => sum + e.decodedBodySize, 0);
  process.stdout.write(
    `console: first load ${(transferred / 1000).toFixed(1)} KB transferred (${(decoded / 1000).toFixed(1)} KB ` +
      `decoded, ${transfer.length} requests)\n`,
  );
  expect(transferred).toBeLessThanOrEqual(200_000);
  // Every script came compressed, with Vary.
  const script = transfer.find((e) => e.name.endsWith('.js'))!;
  const scriptResponse = await page.request.get(script.name, { headers: { 'Accept-Encoding': 'br, gzip' } });
  expect(scriptResponse.headers()['content-encoding']).toBe('br');
  expect(scriptResponse.headers().vary).toBe('Accept-Encoding');
  // The page links its icon, which the gateway serves at /favicon.ico.
  expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('/favicon.ico');
  expect((await page.request.get(`${system.url}/favicon.ico`)).status()).toBe(200);
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
  // The sandbox badge is on every page, in the header.
  expect(await page.locator('header').getByText('Sandbox', { exact: true }).isVisible()).toBe(true);
  // A new developer's empty overview says what to start with, not what a role forbids.
  expect(await page.getByRole('main').innerText()).toContain('Start with an organization');
  expect(await page.getByRole('main').innerText()).not.toContain('ask an owner');
  await checkAccessibility('organizations-empty');
}, 90_000);

test('journey 2: an organization, funded; bad amounts refused in the browser', async () => {
  // Write forms sit behind their action: the form is not on the page until "New organization" opens it.
  expect(await form('New organization').count()).toBe(0);
  // An empty name is refused in the browser, with a sentence and without a request.
  await submit('New organization', { 'Organization name': '' });
  await expectFieldError('New organization', 'Organization name', 'Organization name cannot be empty.');
  expect(sent(requests, 'createOrganization')).toBe(0);
  await submit('New organization', { 'Organization name': 'Journey Studio' });
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
  // Funding that would pass the 1e12 limit is refused in the browser with the room left: no dialog, nothing sent.
  await submit('Fund organization', { [amount]: '999,999,999,999' });
  await expectFieldError(
    'Fund organization',
    amount,
    'A balance can hold at most 1,000,000,000,000 credits: fund less. At most 999,999,990,000 ($999,999,990.00) more fits.',
  );
  expect(await page.getByRole('dialog').count()).toBe(0);
  expect(sent(requests, 'fundOrganization')).toBe(1);
  await checkAccessibility('funding-above-limit');
}, 90_000);

test('journey 3: a project and a game, their budgets; the game page is live', async () => {
  // The next action clears the last one's message.
  await submit('New project', { 'Project name': 'Launch', 'Project ceiling (credits)': '5,000' });
  await expectDone('New project');
  expect(await form('Fund organization').getByRole('status').count()).toBe(0);
  await page.getByRole('heading', { name: 'Project Launch', exact: true }).waitFor(WAIT);
  // The persistent navigation lists the organization and, under it, its project.
  nav = page.getByRole('navigation', { name: 'Console' });
  await nav.getByRole('link', { name: 'Launch', exact: true }).waitFor(WAIT);
  expect(await nav.getByRole('link', { name: 'Journey Studio' }).getAttribute('aria-current')).toBe('page');
  await checkAccessibility('organization');
  await expectNoRawText();
  await screenshot('organization');

  // The project has a page of its own: budget, games, and its actions.
  await mainLink('Project Launch').click();
  await page.getByRole('heading', { name: 'Project Launch', level: 1 }).waitFor(WAIT);
  await expectTitle('Project Launch');
  expect(await nav.getByRole('link', { name: 'Launch', exact: true }).getAttribute('aria-current')).toBe('page');
  // The server's refusal is a plain sentence with its code.
  // An allocation above the ceiling is refused in the browser, saying how much room is left: no "after" figures.
  await submit('Allocate to project Launch', { 'Amount to allocate (credits)': '6000' });
  await expectFieldError(
    'Allocate to project Launch',
    'Amount to allocate (credits)',
    "This would take the project's budget above its ceiling of 5,000: raise the ceiling, or allocate less. " +
      'At most 5,000 ($5.00) more fits.',
  );
  expect(await page.getByRole('dialog').count()).toBe(0);
  expect(sent(requests, 'allocateProject')).toBe(0);
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
  await nav.getByRole('link', { name: 'Space Race' }).waitFor(WAIT);
  await checkAccessibility('project');
  await expectNoRawText();
  await screenshot('project');

  // The game page subscribes to its decisions over a WebSocket at /graphql; the frames it receives are recorded.
  page.on('websocket', (socket) => {
    sockets.push(socket);
    socket.on('framereceived', (frame) => socketFrames.push(String(frame.payload)));
  });
  await mainLink('Game Space Race').click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  await expectTitle('Game Space Race');
  gameId = gameIdOf(page.url());
  // Headline figures first: budget left, spent today, accepted and rejected in the last 24 h, the top reasons.
  headline = page.getByRole('region', { name: 'Headline figures' });
  await headline
    .filter({
      hasText:
        /Budget left\s*0 \$0\.00\s*Spent today \(UTC\)\s*0 \$0\.00\s*Accepted, last 24 h\s*0\s*Rejected, last 24 h\s*0\s*Top rejection reasons, last 24 h\s*none/,
    })
    .waitFor(WAIT);
  await expectMode('Live');
  expect(sockets.map((socket) => new URL(socket.url()).pathname)).toEqual(['/graphql']);
  expect(sockets[0]!.url()).toBe(`${system.url.replace(/^http/, 'ws')}/graphql`);
  // A game without budget says so; the status select shows the current status.
  expect(await page.getByTestId('banner-budget').innerText()).toContain('This game has no budget yet.');
  await reveal('Edit game');
  expect(await form('Edit game').getByLabel('Status', { exact: true }).inputValue()).toBe('active');
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '2500' });
  await expectFieldError(
    'Allocate to game',
    'Amount to allocate to the game (credits)',
    "This would take the game's budget above its ceiling of 2,000: raise the game's ceiling, or allocate less. " +
      'At most 2,000 ($2.00) more fits.',
  );
  expect(await page.getByRole('dialog').count()).toBe(0);
  expect(sent(requests, 'allocateGame')).toBe(0);
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': '1,000' });
  const allocation = await expectDialog('Confirm: Allocate to game', false);
  expect(await allocation.innerText()).toMatch(/Game budget\s+0 \(\$0\.00\)\s+1,000 \(\$1\.00\)/);
  await allocation.getByRole('button', { name: 'Confirm Allocate' }).click();
  await expectDone('Allocate to game');
  await page.getByTestId('banner-budget').waitFor({ state: 'detached', ...WAIT });
}, 90_000);

test('journey 4: rules, a dry run, deactivated and activated', async () => {
  // Rules: a bad event type is refused by the server: a plain sentence, never GraphQL's text.
  await gameTab('Rules');
  await expectTitle('Game Space Race: Rules');
  expect(page.url()).toBe(`${system.url}/console/#/game/${gameId}/rules`);
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
  // "Edit" opens the dry run on that rule (the focus moves to it): a reward of 0 is refused in the browser.
  dryRun = page.getByRole('form', { name: 'Rule dry run' });
  await page.getByRole('button', { name: 'Edit level.up' }).click();
  expect(await dryRun.getByLabel('Event type').inputValue()).toBe('level.up');
  expect(await focusInside('form[aria-label="Rule dry run"]')).toBe(true);
  await dryRun.getByLabel('Reward per event (credits)').fill('0');
  await dryRun.getByRole('button', { name: 'Preview' }).click();
  await dryRun.getByRole('alert').waitFor(WAIT);
  expect(await dryRun.getByRole('alert').innerText()).toBe('Enter an amount above 0 credits.');
  expect(await dryRun.getByLabel('Reward per event (credits)').getAttribute('aria-invalid')).toBe('true');
  expect(await form('New rule').getByRole('status').count()).toBe(0);
  const simulations = () => requests.filter((b) => b.includes('ConsoleSimulateRule')).length;
  expect(simulations()).toBe(0);
  // Even what GraphQL itself refuses (here a reward of 0 slipped past the browser's check) reads as a sentence.
  await page.route('**/graphql', async (route) => {
    const body = route.request().postDataJSON();
    if (body?.operationName === 'ConsoleSimulateRule' && body.variables?.input?.rewardCredits === 7) {
      body.variables.input.rewardCredits = 0;
      await route.continue({ postData: JSON.stringify(body) });
    } else await route.continue();
  });
  await dryRun.getByLabel('Reward per event (credits)').fill('7');
  await dryRun.getByRole('button', { name: 'Preview' }).click();
  await dryRun
    .getByRole('alert')
    .filter({ hasText: /\(\w+\)$/ })
    .waitFor(WAIT);
  expect(await dryRun.getByRole('alert').innerText()).not.toMatch(RAW_TEXT);
  await expectNoRawText();
  await page.unroute('**/graphql');
  // A dry run with no decisions yet says so; saving applies the previewed reward.
  await dryRun.getByLabel('Reward per event (credits)').fill('25');
  await dryRun.getByRole('button', { name: 'Preview' }).click();
  result = page.getByTestId('dry-run-result');
  await result.waitFor(WAIT);
  expect(await result.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
  expect(await page.getByTestId('dry-run-summary').innerText()).toBe(
    'No decisions in this window: nothing to compare yet.',
  );
  await result.getByRole('button', { name: 'Save this change' }).click();
  await dryRun.getByRole('status').filter({ hasText: 'Saved: level.up pays 25 credits' }).waitFor(WAIT);
  await page.getByRole('table', { name: 'Reward rules' }).getByRole('cell', { name: /^25 / }).waitFor(WAIT);
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
  updatesBefore = sent(requests, 'updateRule');
}, 90_000);

test('journey 5: keys; an event posted with one shows live', async () => {
  // Keys: an empty name, a public key, then a secret key shown once (the focus moves to it) with a copy button.
  await gameTab('Keys');
  await submit('New key', { 'Key name': '', Kind: 'secret' });
  await expectFieldError('New key', 'Key name', 'Key name cannot be empty.');
  await submit('New key', { 'Key name': 'browser', Kind: 'public' });
  await page.getByRole('cell', { name: 'browser', exact: true }).waitFor(WAIT);
  // A public key's banner does not claim it is shown once: the table shows it whole. Its copy button copies it.
  const banners = page.locator('.issued');
  await banners.first().waitFor(WAIT);
  const publicKey = await page.getByTestId('issued-key').innerText();
  expect(await banners.first().innerText()).toContain('New public key “browser” (the table shows it too)');
  expect(await page.locator('main').innerText()).not.toContain('shown this once');
  expect(await page.getByRole('table', { name: 'Keys' }).getByRole('cell', { name: publicKey }).count()).toBe(1);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url });
  await page.getByRole('button', { name: 'Copy public key' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
  expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(publicKey);
  // A secret key next: its banner comes first with its own copy button (not "Copied"), the public one stays.
  await submit('New key', { 'Key name': 'server', Kind: 'secret' });
  const issued = page.getByTestId('issued-key');
  await issued.filter({ hasText: /^cr_sk_/ }).waitFor(WAIT);
  secretKey = await issued.first().innerText();
  expect(secretKey).toMatch(/^cr_sk_sandbox_[A-Za-z0-9_-]{43}$/);
  expect(await focusInside('.issued')).toBe(true);
  expect(await banners.first().getByRole('button', { name: 'Copy secret key' }).count()).toBe(1);
  expect(await banners.first().getByRole('button', { name: 'Copied' }).count()).toBe(0);
  expect(await banners.first().innerText()).toContain('New secret key “server”, shown this once');
  expect(await issued.count()).toBe(2);
  // A second secret key never replaces the first one's banner: both stay, with a warning, until each is hidden.
  await submit('New key', { 'Key name': 'spare', Kind: 'secret' });
  await until(async () => (await issued.count()) === 3, 'three banners', WAIT.timeout);
  const spareKey = await issued.first().innerText();
  expect(spareKey).not.toBe(secretKey);
  expect(await issued.nth(1).innerText()).toBe(secretKey);
  expect(await page.getByTestId('secrets-unhidden').innerText()).toContain('2 new secret keys are shown below');
  expect(await page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
  await checkAccessibility('keys-issued');
  await screenshot('key-issued');
  await banners.first().getByRole('button', { name: 'Done, hide it' }).click();
  await banners.filter({ hasText: 'New public key' }).getByRole('button', { name: 'Hide' }).click();
  await until(async () => (await issued.count()) === 1, 'one banner left', WAIT.timeout);
  expect(await issued.innerText()).toBe(secretKey);
  expect(await page.getByTestId('secrets-unhidden').count()).toBe(0);

  // An event posted with the secret key appears on the game's page without a reload.
  playerId = await insertPlayer(system, gameId);
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
  await gameTab('Overview');
  const live = page.getByRole('table', { name: 'Live decisions' });
  await live.getByRole('cell', { name: 'level.up', exact: true }).waitFor(WAIT);
  process.stdout.write(
    `console: posted event shown after ${(performance.now() - liveSince).toFixed(0)} ms (live, subscription)\n`,
  );
  // The headline figures count it: 25 credits spent today, one accepted decision, 975 left. The budget left comes
  // with the game (read again after a decision, at most once a second) and the day's figures with their own query,
  // both started by the decision's arrival: each is waited for, as either may answer first.
  await headline.filter({ hasText: /Spent today \(UTC\)\s*25 \$0\.025/ }).waitFor(WAIT);
  await headline.filter({ hasText: /Budget left\s*975 \$0\.975/ }).waitFor(WAIT);
  expect(await headline.innerText()).toMatch(/Accepted, last 24 h\s+1\s+Rejected, last 24 h\s+0/);
  expect(await live.getByRole('cell', { name: posted.body.data.status, exact: true }).count()).toBe(1);
  // The player column leads to that player's decisions in the decision search.
  expect(await live.getByRole('link').first().getAttribute('href')).toBe(`#/records?game=${gameId}&player=${playerId}`);
  // It came over the subscription: a `next` frame of the socket carries it, and the page is still live.
  expect(socketFrames.some((frame) => frame.includes('"next"') && frame.includes(posted.body.data.eventId))).toBe(true);
  expect(sockets).toHaveLength(1);
  await expectMode('Live');
  await page.getByText('Spent: 25 of budget 1,000').waitFor(WAIT);
  await checkAccessibility('game');
  await expectNoRawText();
  await screenshot('game');
  await gameTab('Players');
  await page
    .getByRole('table', { name: 'Players' })
    .getByRole('cell', { name: /^player-/ })
    .waitFor(WAIT);
  await checkAccessibility('game-players');
  const intents = page.getByRole('table', { name: 'Link intents' });
  await intents.getByRole('row', { name: /link-me pending/ }).waitFor(WAIT);
  expect(await intents.innerText()).not.toContain(linkIntent.body.data.linkToken);
  await page
    .getByRole('region', { name: 'Link intents', exact: true })
    .screenshot({ path: `${SCREENSHOTS}link-intents.png` });
  // The chart's aggregate (decisionStats) counts it too.
  await gameTab('Charts');
  const summary = page.getByTestId('decisions-summary');
  await summary.filter({ hasText: `1 ${posted.body.data.status}` }).waitFor(WAIT);
  expect(await summary.innerText()).toMatch(/^\d+ accepted, \d+ rejected in the window/);
  expect(
    await page
      .getByRole('img', { name: /^Decisions per minute/ })
      .locator('canvas')
      .count(),
  ).toBe(1);
  await checkAccessibility('game-charts-tab');
}, 90_000);

test('journey 6: the dry run replays the real decision', async () => {
  // The dry run on real decisions: a reward of 40 under a daily cap of 30 would have rejected the accepted one.
  await gameTab('Rules');
  await page.getByRole('button', { name: 'Edit level.up' }).click();
  await dryRun.getByLabel('Reward per event (credits)').fill('40');
  await dryRun.getByLabel('Daily cap per player (credits)').fill('30');
  await dryRun.getByRole('button', { name: 'Preview' }).click();
  await result.waitFor(WAIT);
  expect(await page.getByTestId('dry-run-summary').innerText()).toBe(
    '1 decision replayed. As decided it paid 25 credits ($0.025); with the change it would have paid 0 ' +
      'credits ($0.00), 25 credits less. 1 decision would change.',
  );
  const totals = page.getByRole('table', { name: 'Totals' });
  expect(await totals.getByRole('row', { name: /^Accepted 1 0$/ }).count()).toBe(1);
  expect(await totals.getByRole('row', { name: /^Rejected: daily_player_cap 0 1$/ }).count()).toBe(1);
  expect(await page.getByRole('img', { name: /^Credits paid per day/ }).count()).toBe(1);
  const today = new Date().toISOString().slice(0, 10);
  expect(
    await page
      .getByRole('table', { name: 'Per day' })
      .getByRole('row', { name: `${today} 25 0 1 0` })
      .count(),
  ).toBe(1);
  const flips = page.getByRole('table', { name: 'Decisions that would change' });
  expect(
    await flips.getByRole('row', { name: /level\.up accepted, 25 credits rejected: daily_player_cap$/ }).count(),
  ).toBe(1);
  // The changed decision names its player by the game's own id (externalPlayerId), not the start of a UUID.
  const [flipped] = await sql(system.databaseUrl!, 'select external_player_id from ledger.players where id = $1', [
    playerId,
  ]);
  await flips.getByRole('link', { name: flipped!.external_player_id, exact: true }).waitFor(WAIT);
  expect(await flips.innerText()).not.toContain(`${playerId.slice(0, 8)}…`);
  expect(await result.innerText()).toContain(
    'Saving changes the reward of level.up from 25 to 40 credits; the daily cap per player from 500 to 30 credits.',
  );
  await checkAccessibility('dry-run');
  await screenshot('dry-run');
  // Nothing was saved by the preview.
  expect(sent(requests, 'updateRule')).toBe(updatesBefore);
  await gameTab('Overview');
}, 90_000);

test('journey 7: the game paused and resumed, its key revoked', async () => {
  // Pausing asks first; the page then says the game is paused, and the select shows it. Resuming is one button.
  await submit('Edit game', { Status: 'paused' });
  await expectDialog('Pause Space Race?', true);
  await page.getByRole('dialog').getByRole('button', { name: 'Pause game' }).click();
  const paused = page.getByTestId('banner-paused');
  await paused.waitFor(WAIT);
  expect(await paused.innerText()).toContain('This game is paused.');
  await until(
    async () => (await form('Edit game').getByLabel('Status', { exact: true }).inputValue()) === 'paused',
    'the status select showing paused',
    WAIT.timeout,
  );
  await checkAccessibility('game-paused');
  await screenshot('game-paused');
  await form('Resume game').getByRole('button', { name: 'Resume game' }).click();
  await paused.waitFor({ state: 'detached', ...WAIT });
  await until(
    async () => (await form('Edit game').getByLabel('Status', { exact: true }).inputValue()) === 'active',
    'the status select showing active',
    WAIT.timeout,
  );

  // Revoke the secret key (after a red confirmation): the key is refused from then on.
  await gameTab('Keys');
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
}, 90_000);

test("journey 8: the game's decisions in the records; members", async () => {
  // The decision search (test/e2e/console-decisions.test.ts drives it): this game's decisions, from its page.
  await gameTab('Overview');
  await page.getByRole('link', { name: 'All decisions of this game' }).click();
  await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
  await expectTitle('Records: decisions');
  expect(await nav.getByRole('link', { name: 'Records' }).getAttribute('aria-current')).toBe('page');
  await checkAccessibility('records');
  await screenshot('records');

  // Members, by e-mail: invite the viewer as a viewer; the role select shows the member's role.
  await nav.getByRole('link', { name: 'Journey Studio' }).click();
  await page.getByRole('heading', { name: 'Organization Journey Studio', exact: true }).waitFor(WAIT);
  const members = page.getByRole('table', { name: 'Members' });
  // The owner is listed by e-mail; the identity id shows on demand.
  const owner = members.getByRole('row').filter({ hasText: ownerEmail });
  await owner.waitFor(WAIT);
  expect(await owner.locator('code').isVisible()).toBe(false);
  await owner.getByText('Identity id').click();
  expect(await owner.locator('code').innerText()).toMatch(/^dev\|[0-9a-f]{24}$/);
  const invite = 'E-mail (development sign-in) or identity user id';
  await reveal('Invite a member');
  // It says plainly what else the person needs: an invitation from the operator.
  const needs = page.locator('#invite-needs');
  expect(await needs.innerText()).toContain('They also need an operator invitation.');
  expect(await needs.innerText()).toContain('DEVELOPER_INVITATION_REQUIRED');
  await submit('Invite a member', { [invite]: '', Role: 'viewer' });
  await expectFieldError(
    'Invite a member',
    invite,
    'E-mail (development sign-in) or identity user id cannot be empty.',
  );
  await submit('Invite a member', { [invite]: viewerEmail, Role: 'viewer' });
  await expectDone('Invite a member');
  // Listed by identity id, its e-mail hidden: an owner's adding is not the member's joining (docs/identity.md,
  // "Member e-mails"); the viewer accepts in the viewer's test below.
  const viewerId = developerSubject(viewerEmail);
  await members
    .getByRole('row')
    .filter({ hasText: viewerId })
    .getByRole('cell', { name: 'viewer', exact: true })
    .waitFor(WAIT);
  const roleOfViewer = form(`Change role of ${viewerId}`).getByLabel('Role');
  expect(await roleOfViewer.inputValue()).toBe('viewer');
  await submit('Invite a member', { [invite]: viewerEmail, Role: 'admin' });
  await expectFieldError('Invite a member', invite, 'This person is already a member of the organization.', 'conflict');
  await checkAccessibility('members');
  await screenshot('members');
  // Removing a member asks first. Someone without an operator invitation is listed by identity id.
  const extra = `extra-${randomUUID().slice(0, 8)}@example.com`;
  await submit('Invite a member', { [invite]: extra, Role: 'admin' });
  await expectDone('Invite a member');
  const removeForms = page.getByRole('form', { name: /^Remove / });
  await until(async () => (await removeForms.count()) === 2, 'two removable members', WAIT.timeout);
  expect(await members.getByText('E-mail hidden until they accept the membership').count()).toBe(2);
  await removeForms.last().getByRole('button', { name: 'Remove' }).click();
  const remove = await expectDialog((await removeForms.last().getAttribute('aria-label'))!.concat('?'), true);
  expect(await removeForms.last().getAttribute('aria-label')).toMatch(/^Remove dev\|/);
  await checkAccessibility('dialog-remove-member');
  await remove.getByRole('button', { name: 'Remove member' }).click();
  await until(async () => (await removeForms.count()) === 1, 'the member removed', WAIT.timeout);
  await page.getByRole('link', { name: 'Organizations', exact: true }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await checkAccessibility('organizations');
  await screenshot('organizations');
}, 90_000);

/**
 * Signs the owner in on a new desktop page and, in project Launch, creates a game, allocates to it, adds a rule and
 * issues a secret key through the console's forms; the page is left on the game's Keys tab with the new key's banner.
 */
async function newGameWithRuleAndKey(game: {
  name: string;
  ceiling: string;
  dailyCap: string;
  allocate: string;
  eventType: string;
  reward: string;
  keyName: string;
}): Promise<{ key: string; gameId: string }> {
  page = await newPage();
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(ownerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await mainLink('Journey Studio').click();
  await mainLink('Project Launch').click();
  await submit('New game in Launch', {
    'Game name': game.name,
    Platform: 'web',
    'Game ceiling (credits)': game.ceiling,
    'Daily cap per player (credits)': game.dailyCap,
  });
  await expectDone('New game in Launch');
  await mainLink(`Game ${game.name}`).click();
  await page.getByRole('heading', { name: `Game ${game.name}`, exact: true }).waitFor(WAIT);
  await submit('Allocate to game', { 'Amount to allocate to the game (credits)': game.allocate }, { confirm: true });
  await expectDone('Allocate to game');
  await gameTab('Rules');
  await submit('New rule', { 'Event type': game.eventType, 'Reward (credits)': game.reward });
  await expectDone('New rule');
  await gameTab('Keys');
  await submit('New key', { 'Key name': game.keyName, Kind: 'secret' });
  return { key: await page.getByTestId('issued-key').innerText(), gameId: gameIdOf(page.url()) };
}

test("a game's state shows as banners: under 10 % of its budget left, then used up", async () => {
  expect(gameId).not.toBe('');
  const { key, gameId: tinyId } = await newGameWithRuleAndKey({
    name: 'Tiny',
    ceiling: '100',
    dailyCap: '1000',
    allocate: '100',
    eventType: 'bonus',
    reward: '95',
    keyName: 'tiny',
  });
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
  // The gateway holds this game page's subscription before the event, so the decision arrives over the socket (one
  // made while the subscription is being set up shows by the read after the gateway's ping: a test of its own).
  await until(async () => (await liveSubscriptions(system.url)) >= 1, 'the page subscription', WAIT.timeout);
  expect((await event()).body.data.status).toBe('accepted');
  const banner = page.getByTestId('banner-budget');
  await banner.filter({ hasText: 'Less than 10 % of the budget is left' }).waitFor(WAIT);
  expect(await banner.innerText()).toContain('5 credits ($0.005 sandbox test credit) of 100 credits');
  // The headline figure of the budget left turns orange.
  const budgetLeft = page.getByRole('region', { name: 'Headline figures' }).locator('.figure').first();
  expect(await budgetLeft.getAttribute('class')).toBe('figure figure-warn');
  // A new reward through the dry run's Save.
  await gameTab('Rules');
  await page.getByRole('button', { name: 'Edit bonus' }).click();
  await form('Rule dry run').getByLabel('Reward per event (credits)').fill('5');
  await form('Rule dry run').getByRole('button', { name: 'Preview' }).click();
  await page.getByTestId('dry-run-result').getByRole('button', { name: 'Save this change' }).click();
  await page.getByRole('table', { name: 'Reward rules' }).getByRole('cell', { name: /^5 / }).waitFor(WAIT);
  expect((await event()).body.data.status).toBe('accepted');
  await banner.filter({ hasText: 'The budget is used up' }).waitFor(WAIT);
  expect((await event()).body.data.reason).toBe('game_budget_exhausted');
  await gameTab('Overview');
  // The top rejection reason, with its count.
  await page
    .getByRole('list', { name: 'Top rejection reasons' })
    .getByRole('listitem')
    .filter({ hasText: 'game_budget_exhausted: 1' })
    .waitFor(WAIT);
  expect(await budgetLeft.getAttribute('class')).toBe('figure figure-bad');
  // The live list gives the reason in words, as Records does, not its code.
  const liveTable = page.getByRole('table', { name: 'Live decisions' });
  await liveTable.getByRole('cell', { name: 'game budget used up', exact: true }).waitFor(WAIT);
  expect(await liveTable.getByRole('cell', { name: 'game_budget_exhausted' }).count()).toBe(0);
  await checkAccessibility('game-exhausted');
  await screenshot('game-exhausted');
  // The lists say it too.
  await page.getByRole('link', { name: 'Organizations', exact: true }).click();
  await page.getByRole('listitem').filter({ hasText: /^Tiny/ }).getByText('budget used up').waitFor(WAIT);
}, 180_000);

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
  const { key } = await newGameWithRuleAndKey({
    name: 'Fresh',
    ceiling: '20,000',
    dailyCap: '1,000',
    allocate: '500',
    eventType: 'level.up',
    reward: '10',
    keyName: 'fresh',
  });
  // The tab says a new key is shown there while its banner is up.
  expect(await page.getByRole('link', { name: 'Keys (new key)' }).count()).toBe(1);
  await gameTab('Overview');

  // No decision yet: the page says what to do next, with the commands for this game (its key, its address).
  const first = page.getByTestId('first-event');
  await first.waitFor(WAIT);
  expect(await first.innerText()).toContain('No decisions yet: send your first event.');
  const commands = first.locator('pre');
  expect(await commands.count()).toBe(2);
  const createPlayer = await commands.first().innerText();
  expect(createPlayer).toContain(`${system.url}/api/game-sdk/v2/link-intents -H "Authorization: Bearer ${key}"`);
  await checkAccessibility('game-empty');
  await screenshot('game-empty');
  await gameTab('Charts');
  const empty = page.getByTestId('charts-empty');
  await empty.waitFor(WAIT);
  expect(await empty.innerText()).toContain('No decisions in the last hour.');
  await checkAccessibility('game-charts-empty');
  await gameTab('Overview');

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
    .getByRole('cell', { name: 'player not linked', exact: true })
    .waitFor(WAIT);

  await gameTab('Charts');
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
}, 180_000);

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

  // The navigation (organizations → projects → games) hides behind a Menu button (a disclosure) and opens with it.
  const menu = page.getByRole('button', { name: 'Menu' });
  const records = page.getByRole('link', { name: 'Records' });
  const nav = page.getByRole('navigation', { name: 'Console' });
  expect(await menu.getAttribute('aria-expanded')).toBe('false');
  expect(await records.isVisible()).toBe(false);
  expect(await page.locator('header').getByText('Sandbox', { exact: true }).isVisible()).toBe(true);
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
  // Members by e-mail, on a phone too; the identity id on demand.
  const members = page.getByRole('table', { name: 'Members' });
  await members.getByRole('row').filter({ hasText: ownerEmail }).waitFor(WAIT);
  await reveal('Invite a member');
  await checkAccessibility('phone-organization');
  await screenshot('phone-organization');

  // The open menu shows where the page is: the organization's projects and games, the current one marked.
  await menu.click();
  await nav.getByRole('link', { name: 'Launch', exact: true }).click();
  await page.getByRole('heading', { name: 'Project Launch', level: 1 }).waitFor(WAIT);
  expect(await menu.getAttribute('aria-expanded')).toBe('false');
  await reveal('Allocate to project Launch');
  await checkAccessibility('phone-project');
  await screenshot('phone-project');

  await menu.click();
  await nav.getByRole('link', { name: 'Space Race' }).click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  await expectTitle('Game Space Race');
  await page
    .getByRole('region', { name: 'Headline figures' })
    .filter({ hasText: /Accepted, last 24 h\s*\d/ })
    .waitFor(WAIT);
  // The live list: stacked rows, status, reason and reward first, the time on one line.
  const liveLayout = await firstRowLayout(page.getByRole('table', { name: 'Live decisions' }));
  expect(liveLayout).toMatchObject({ leadFirst: true, timeLines: 1 });
  await checkAccessibility('phone-game-overview');
  await expectTabsInView();
  await screenshot('phone-game');
  await gameTab('Charts');
  await page.getByTestId('decisions-summary').waitFor(WAIT);
  await checkAccessibility('phone-game-charts');
  // The dry run on a phone: the form stacks, the result's tables scroll inside their boxes.
  await gameTab('Rules');
  await page.getByRole('button', { name: 'Edit level.up' }).click();
  await form('Rule dry run').getByLabel('Reward per event (credits)').fill('30');
  await form('Rule dry run').getByRole('button', { name: 'Preview' }).click();
  await page.getByTestId('dry-run-result').waitFor(WAIT);
  await checkAccessibility('phone-dry-run');
  await screenshot('phone-dry-run');
  await gameTab('Keys');
  await page.getByRole('table', { name: 'Keys' }).waitFor(WAIT);
  // A wide table scrolls inside its own box, which the keyboard reaches.
  const keys = page.getByRole('region', { name: 'Keys (scrolls sideways)' });
  expect(await keys.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  expect(await keys.getAttribute('tabindex')).toBe('0');
  await checkAccessibility('phone-game-keys');
  await expectTabsInView();
  // Opened by its address, the Players tab too: every tab still whole in view.
  await page.evaluate((id) => {
    (globalThis as any).location.hash = `#/game/${id}/players`;
  }, gameIdOf(page.url()));
  await page.getByTestId('tab-players').waitFor(WAIT);
  await expectTabsInView();
  await checkAccessibility('phone-game-players');
  await gameTab('Keys');
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
  await checkAccessibility('phone-records');
  await screenshot('phone-records');
}, 180_000);

/** What the page keeps in localStorage and sessionStorage, as key=value lines. */
const storageOf = (target: Page) =>
  target.evaluate(() => {
    const dump = (store: Storage) =>
      Array.from({ length: store.length }, (_, i) => store.key(i) ?? '').map((key) => `${key}=${store.getItem(key)}`);
    return { local: dump(localStorage), session: dump(sessionStorage) };
  });

test('a reload keeps a development sign-in (sessionStorage, never localStorage); signing out or expiry forgets it', async () => {
  expect(gameId).not.toBe('');
  for (const viewport of [DESKTOP, PHONE]) {
    page = await newPage(viewport);
    await page.goto(`${system.url}/console/#/game/${gameId}/rules`);
    await page.getByLabel('E-mail').fill(ownerEmail);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
    await page.reload();
    await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
    await page.getByTestId('tab-rules').waitFor(WAIT);
    expect(await page.getByLabel('E-mail').count()).toBe(0);
    expect(await page.getByText(ownerEmail).count()).toBe(1);
    const kept = await storageOf(page);
    expect(kept.local).toEqual([]);
    expect(kept.session).toHaveLength(1);
    expect(kept.session[0]).toMatch(/^console\.devSession=eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    await checkAccessibility(`reload-${viewport.width}`);
    // Signing out forgets it: a reload asks again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor(WAIT);
    expect(await storageOf(page)).toEqual({ local: [], session: [] });
    await page.reload();
    await page.getByLabel('E-mail').waitFor(WAIT);
    expect(await page.getByRole('heading', { name: 'Game Space Race' }).count()).toBe(0);
  }
  // A session past its lifetime is not kept: after it expires, a reload shows the sign-in page, with no alert.
  page = await newPage();
  const token = await developerToken(system, ownerEmail, { expiresIn: '4s' });
  await page.route('**/console/dev-session', (route) =>
    route.fulfill({ json: { data: { token, email: ownerEmail } } }),
  );
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(ownerEmail);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  // Until the page's own clock is past the session's expiry (its `exp`, in seconds).
  const expiresAtMs =
    (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }).exp * 1000;
  await page.waitForFunction((at) => Date.now() > at, expiresAtMs, WAIT);
  await page.reload();
  await page.getByLabel('E-mail').waitFor(WAIT);
  expect(await page.getByRole('alert').count()).toBe(0);
  expect(await storageOf(page)).toEqual({ local: [], session: [] });
}, 180_000);

/** Runs a command to its end (in the repository's folder, with this Node first on PATH). */
/** A command as typed in a terminal here: Node 24 first on PATH (test/support/cli.ts). */
function run(command: string, args: string[], env: Record<string, string> = {}) {
  return runCommand(command, args, {
    PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
    HOME: process.env.HOME ?? '/tmp',
    ...env,
  });
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
  await mainLink('Demo Studio').click();
  await mainLink('Game Demo Quest').click();
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
  // Added by the owner, not joined: marked, until the viewer accepts (the one button a viewer has).
  expect(await page.getByTestId('not-joined').count()).toBe(1);
  await mainLink('Journey Studio').click();
  await page.getByText('Your role:').waitFor(WAIT);
  await page.getByRole('button', { name: 'Accept membership' }).click();
  await until(
    async () => (await page.getByTestId('not-joined').count()) === 0,
    'the membership accepted',
    WAIT.timeout,
  );
  expect(await page.getByText('viewer', { exact: true }).count()).toBeGreaterThan(0);
  expect(await page.locator('main form').count()).toBe(0);
  expect(await page.locator('main button').count()).toBe(0);
  await mainLink('Project Launch').click();
  await page.getByRole('heading', { name: 'Project Launch', level: 1 }).waitFor(WAIT);
  expect(await page.locator('main button').count()).toBe(0);
  await mainLink('Game Space Race').click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
  await page
    .getByRole('table', { name: 'Live decisions' })
    .getByRole('cell', { name: 'level.up', exact: true })
    .waitFor(WAIT);
  expect(await page.locator('main form').count()).toBe(0);
  expect(await page.locator('main button').count()).toBe(0);
  await checkAccessibility('game-viewer');
  await screenshot('game-viewer');
  // Every tab: read-only (no dry run either: it needs the role that may edit rules).
  for (const tab of ['Charts', 'Rules', 'Keys', 'Players'] as const) {
    await gameTab(tab);
    if (tab === 'Players') {
      await page
        .getByRole('table', { name: 'Link intents' })
        .getByRole('row', { name: /link-me pending/ })
        .waitFor(WAIT);
    }
    expect(await page.locator('main form').count()).toBe(0);
    expect(await page.locator('main button').count()).toBe(0);
    await checkAccessibility(`game-viewer-${tab.toLowerCase()}`);
  }
}, 180_000);

/** Signs `email` in on the page (the journey's owner by default) and opens the game Space Race. */
async function openSpaceRace(email = ownerEmail): Promise<void> {
  await page.goto(`${system.url}/console/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
  await mainLink('Journey Studio').click();
  await mainLink('Game Space Race').click();
  await page.getByRole('heading', { name: 'Game Space Race', exact: true }).waitFor(WAIT);
}

/** A new secret key of the open game (through its Keys tab; the journey revoked its own), and a linked player. */
async function newKeyAndPlayer(name: string): Promise<{ key: string; player: { id: string } }> {
  await gameTab('Keys');
  await submit('New key', { 'Key name': name, Kind: 'secret' });
  const issued = page.getByTestId('issued-key');
  await issued.waitFor(WAIT);
  const key = await issued.innerText();
  const [player] = await sql<{ id: string }>(
    system.databaseUrl!,
    'select id from ledger.players where game_id = $1 and credits_user_id is not null limit 1',
    [gameId],
  );
  return { key, player: player! };
}

/** A fresh level.up event of `playerId` posted with `key`. */
function postLevelUp(key: string, playerId: string) {
  return postEvent(system.url, key, {
    eventId: randomUUID(),
    playerId,
    eventType: 'level.up',
    occurredAt: new Date().toISOString(),
  });
}

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
  await openSpaceRace();
  expect(await expectMode('Polling', { ...WAIT, detail: '1013 AUTH_UNAVAILABLE' })).toContain('1013 AUTH_UNAVAILABLE');
  await checkAccessibility('game-polling');

  // A new secret key (the journey revoked its own), then an event: it appears by polling.
  const { key, player } = await newKeyAndPlayer('fallback');
  await gameTab('Overview');
  const since = performance.now();
  expect((await postLevelUp(key, player.id)).status).toBe(200);
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

test("a decision made while the gateway sets up the page's subscription shows at once, not at the safety net", async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  // Between the page and the gateway the page's subscribe messages are held while `hold` is on: the page is live (its
  // socket acknowledged) while the gateway has no subscription for the game yet, the window in which a decision
  // reaches no socket. The page's reads before that window are its only view of such a decision.
  let hold = false;
  const held: Array<{ send(message: string): void; message: string }> = [];
  await page.routeWebSocket(/\/graphql$/, (socket) => {
    const server = socket.connectToServer();
    socket.onMessage((message) => {
      if (hold && typeof message === 'string' && JSON.parse(message).type === 'subscribe') {
        held.push({ send: (m) => server.send(m), message });
      } else server.send(message);
    });
  });
  await openSpaceRace();
  const { key, player } = await newKeyAndPlayer('held');

  // Away and back: the page's new subscription is held; the page goes live (and reads) without it.
  hold = true;
  await page.getByRole('link', { name: 'Organizations', exact: true }).click();
  await mainLink('Journey Studio').click();
  await mainLink('Game Space Race').click();
  await expectMode('Live');
  await until(async () => held.length >= 1, 'the held subscribe message', WAIT.timeout);
  const liveTable = page.getByRole('table', { name: 'Live decisions' });
  const shown = () => liveTable.getByRole('cell', { name: 'level.up', exact: true }).count();
  await until(async () => (await shown()) >= 1, 'the first read of the decisions', WAIT.timeout);
  const before = await shown();
  expect(before).toBeLessThan(20); // the table shows the newest 20: one more must show
  expect((await postLevelUp(key, player.id)).status).toBe(200);
  // The gateway subscribes now; its ping says the subscription is live, and the page reads once more: the decision
  // shows well before the page's next safety-net read (30 s after it went live, longer than WAIT).
  hold = false;
  for (const { send, message } of held.splice(0)) send(message);
  await until(async () => (await shown()) === before + 1, 'the decision made in the window', WAIT.timeout);
}, 120_000);

test('when the service cannot be reached the figures say they are stale, and Records shows the failure alone', async () => {
  expect(gameId).not.toBe('');
  for (const viewport of [DESKTOP, PHONE]) {
    page = await newPage(viewport);
    // The service goes away: its socket refuses (so the figures are polled) and, once `down`, every request fails as a
    // refused connection does.
    let down = false;
    await page.routeWebSocket(/\/graphql$/, (socket) => void socket.close({ code: 1013, reason: 'AUTH_UNAVAILABLE' }));
    await page.route('**/graphql', (route) => (down ? route.abort('connectionrefused') : route.continue()));
    await page.goto(`${system.url}/console/#/game/${gameId}`);
    await page.getByLabel('E-mail').fill(ownerEmail);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const figures = page.getByRole('region', { name: 'Headline figures' });
    await figures.filter({ hasText: /Accepted, last 24 h\s*\d/ }).waitFor(WAIT);
    expect(await page.getByTestId('figures-stale').count()).toBe(0);
    down = true;
    const stale = page.getByTestId('figures-stale');
    await stale.waitFor(WAIT);
    expect(await stale.innerText()).toMatch(/^Stale: the service cannot be reached; these figures are from \S/);
    expect(await figures.innerText()).toContain('could not reach the service');
    await checkAccessibility(`unreachable-game-${viewport.width}`);
    await screenshot(`unreachable-game-${viewport.width}`);
    // Records: the failure, and no "No decisions." beside it.
    await page.evaluate(() => {
      (globalThis as any).location.hash = '#/records';
    });
    await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
    await page.getByRole('alert').filter({ hasText: 'could not reach the service' }).waitFor(WAIT);
    await page.getByText('No records to show: the search did not answer (above).').waitFor(WAIT);
    expect(await page.getByRole('main').innerText()).not.toContain('No decisions');
    await checkAccessibility(`unreachable-records-${viewport.width}`);
    await screenshot(`unreachable-records-${viewport.width}`);
  }
}, 120_000);

test('the session expiring closes the live socket (4401) and the console shows the signed-out state', async () => {
  expect(gameId).not.toBe('');
  page = await newPage();
  // The development sign-in answers a real session of the same provider that expires in 10 s (the route signs 12 h).
  const token = await developerToken(system, viewerEmail, { expiresIn: '10s' });
  await page.route('**/console/dev-session', (route) =>
    route.fulfill({ json: { data: { token, email: viewerEmail } } }),
  );
  await openSpaceRace(viewerEmail);
  await expectMode('Live');
  // The gateway closes the socket at the token's exp; the console forgets the session and asks to sign in again.
  const alert = page.getByRole('alert').filter({ hasText: 'SESSION_EXPIRED' });
  await alert.waitFor(WAIT);
  await page.getByLabel('E-mail').waitFor(WAIT);
  expect(await page.getByRole('heading', { name: 'Game Space Race' }).count()).toBe(0);
  expect(await page.getByText(viewerEmail).count()).toBe(0);
}, 180_000);

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
}, 180_000);
