// The records page's decision search in a real browser (Debian's Chromium driven by playwright-core) against the
// whole service on real PostgreSQL and NATS, at 1280 px and at 390 px: filters in the URL (a link opens the same
// search; back and forward walk through searches and pages), the page-size menu, paging both ways, the player column,
// the detail panel (focus moved to it, the reason in words and its fix, the event's metadata as posted through the
// service, links to the player's other decisions), checks in the browser before anything is sent, no sideways scroll,
// a title, and axe-core with no violation of any impact.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { REASONS } from '../../console/src/pages/decisions/reasons.ts';
import { DECISION_REASONS } from '../../services/runtime/src/contracts/vocabulary.ts';
import { ConsoleBrowser, checkPage, DESKTOP, firstRowLayout, goTo, PHONE, WAIT } from '../support/browser.ts';
import { type Developer, developer, insertPlayer, ok, type World, world } from '../support/console.ts';
import { sql } from '../support/database.ts';
import { expectDecision, postEvent } from '../support/ingest.ts';
import { until } from '../support/live.ts';
import type { TestSystem } from '../support/system.ts';

let session: ConsoleBrowser;
let system: TestSystem;
let owner: Developer;
let w: World;
let hero: string;
let other: string;
/** The game's decisions, newest first: hero's 30 (every reason, and accepted ones), then other's 2. */
const decisions: Array<{ id: string; playerId: string; reason: string | null }> = [];

async function insertDecision(playerId: string, minutesAgo: number, reason: string | null) {
  const keyId = randomUUID();
  const id = randomUUID();
  await sql(
    system.databaseUrl!,
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
     select $1, g.id, g.organization_id, 'secret', 'fixture', 'cr_sk_sandbox_AAAAAA', null, $3
       from ledger.games g where g.id = $2`,
    [keyId, w.gameId, randomBytes(32)],
  );
  const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
  await sql(
    system.databaseUrl!,
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select $1, g.id, g.project_id, g.organization_id, gen_random_uuid(), $2, $3, 'level.up', $4,
            case when $5::text is null then 'accepted' else 'rejected' end, $5, case when $5::text is null then 5 else 0 end,
            $6, $4
       from ledger.games g where g.id = $7`,
    [id, playerId, keyId, at, reason, randomBytes(32), w.gameId],
  );
  decisions.push({ id, playerId, reason });
}

beforeAll(async () => {
  session = await ConsoleBrowser.start();
  system = session.system;
  owner = await developer(system);
  w = await world(system, owner.token);
  hero = await insertPlayer(system, w.gameId, { externalPlayerId: 'hero' });
  other = await insertPlayer(system, w.gameId, { externalPlayerId: 'sidekick', linked: false });
  // Oldest first: 30 of hero's a minute apart (every reason in turn, accepted between), then 2 of sidekick's.
  const cycle: Array<string | null> = [...DECISION_REASONS, null, null];
  for (let n = 0; n < 30; n++) await insertDecision(hero, 60 - n, cycle[n % cycle.length] ?? null);
  await insertDecision(other, 20, 'player_not_linked');
  await insertDecision(other, 19, 'player_not_linked');
  decisions.reverse();
});

afterAll(async () => {
  await session?.stop();
});

/** Follows a link of the console as a person would paste it (goTo), and waits for the Records page. */
async function open(page: Page, hash: string) {
  await goTo(page, hash);
  await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
}

/** The decision ids the table shows, in order (each row's Details button names its decision). */
async function shownIds(page: Page): Promise<string[]> {
  const labels = await page
    .getByRole('button', { name: /^Open record / })
    .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label') ?? ''));
  return labels.map((label) => label.replace('Open record ', ''));
}

/** Waits until the table shows exactly these decisions. */
async function expectShown(page: Page, ids: string[]) {
  await until(async () => JSON.stringify(await shownIds(page)) === JSON.stringify(ids), `${ids.length} rows`, 10_000);
}

const hashOf = (page: Page) => new URL(page.url()).hash;
const query = (page: Page) => new URLSearchParams(hashOf(page).split('?')[1] ?? '');

const isFocused = (page: Page, selector: string) =>
  page.evaluate(
    (s) => (globalThis as any).document.activeElement === (globalThis as any).document.querySelector(s),
    selector,
  );

test('every rejection reason has words and a fix', () => {
  expect(Object.keys(REASONS).sort()).toEqual([...DECISION_REASONS].sort());
  for (const text of Object.values(REASONS)) {
    expect(text.what).toMatch(/\.$/);
    expect(text.fix).toMatch(/\.$/);
  }
});

test('at 1280 px: a shared search, filters, pages both ways, back and forward, the detail panel', async () => {
  const page = await session.signedIn(owner, DESKTOP);
  // A link with filters opens that search; the form shows them.
  await open(page, `#/records?game=${w.gameId}&status=rejected`);
  const rejected = decisions.filter((d) => d.reason !== null).map((d) => d.id);
  await expectShown(page, rejected.slice(0, 25));
  const filters = page.getByRole('form', { name: 'Record filters' });
  expect(await filters.getByLabel('Status').inputValue()).toBe('rejected');
  expect(await filters.getByLabel('Game', { exact: true }).inputValue()).toBe(w.gameId);
  expect(await filters.getByLabel('Page size').inputValue()).toBe('25');
  // The player column names the player as the game knows it.
  const table = page.getByRole('table', { name: 'Records page' });
  expect(await table.getByRole('link', { name: 'sidekick' }).count()).toBe(2);
  // The count is what is shown, never read as the total: more are on the next page; the total, from the game's
  // statistics, is said to be an estimate.
  await page
    .locator('.search-summary')
    .filter({
      hasText: `25 shown matching 2 filters; more on other pages. In all about ${rejected.length} decisions (an estimate`,
    })
    .waitFor(WAIT);
  await checkPage(page, 'decisions', 'Records: decisions');

  // Older page, then newer: the same decisions; back and forward follow.
  await page.getByRole('button', { name: 'Older page' }).click();
  await expectShown(page, rejected.slice(25));
  expect(query(page).get('after')).toBeTruthy();
  // The new page is read from its top: the summary above the table has the focus and is in view.
  const top = await page.evaluate(() => {
    const active = (globalThis as any).document.activeElement;
    return {
      focused: active?.className as string,
      top: active?.getBoundingClientRect().top as number,
      height: (globalThis as any).innerHeight as number,
    };
  });
  expect(top.focused).toBe('search-summary');
  expect(top.top).toBeGreaterThanOrEqual(0);
  expect(top.top).toBeLessThan(top.height);
  expect(await page.getByRole('button', { name: 'Older page' }).isDisabled()).toBe(true);
  expect(query(page).get('page')).toBe('2');
  await page.getByRole('button', { name: 'Newer page' }).click();
  await expectShown(page, rejected.slice(0, 25));
  // From page 2, the newer page is the newest one.
  expect(query(page).get('before')).toBeNull();
  expect(query(page).get('page')).toBeNull();
  expect(await page.getByRole('button', { name: 'Newer page' }).isDisabled()).toBe(true);
  await page.goBack();
  await expectShown(page, rejected.slice(25));
  await page.goBack();
  await expectShown(page, rejected.slice(0, 25));
  await page.goForward();
  await expectShown(page, rejected.slice(25));

  // A reason from the menu, page size 50: the URL says so.
  await filters.getByLabel('Reason').selectOption({ label: 'game budget used up' });
  await filters.getByRole('button', { name: 'Show records' }).click();
  const exhausted = decisions.filter((d) => d.reason === 'game_budget_exhausted');
  await expectShown(
    page,
    exhausted.map((d) => d.id),
  );
  expect(query(page).get('reason')).toBe('game_budget_exhausted');
  expect(query(page).get('after')).toBeNull();
  await filters.getByLabel('Page size').selectOption('50');
  await until(async () => query(page).get('size') === '50', 'size in the URL', 5000);
  await expectShown(
    page,
    exhausted.map((d) => d.id),
  );

  // Details: the panel takes the focus and explains the reason, its fix and the player's other decisions.
  const first = exhausted[0]!;
  await page.getByRole('button', { name: `Open record ${first.id}` }).click();
  const panel = page.getByRole('region', { name: 'Record', exact: true });
  await panel.waitFor(WAIT);
  expect(await panel.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
  const text = await panel.innerText();
  expect(text).toContain(REASONS.game_budget_exhausted!.what);
  expect(text).toContain('Allocate credits to this game');
  expect(text).toContain('hero');
  // A decision stored without metadata says so.
  expect(text).toContain(
    'No metadata is stored for this event: none was sent, or it was decided before the ledger kept metadata.',
  );
  expect(await panel.getByRole('link', { name: 'Open Game' }).getAttribute('href')).toBe(`#/game/${w.gameId}/overview`);
  await checkPage(page, 'decisions-detail', 'Records: decisions');
  // Escape closes it and gives the focus back to the row's button.
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'detached', ...WAIT });
  expect(await isFocused(page, `button[aria-label="Open record ${first.id}"]`)).toBe(true);

  // The player's other decisions: the same page filtered by the player.
  await page.getByRole('button', { name: `Open record ${first.id}` }).click();
  await panel.getByRole('link', { name: 'All decisions of hero' }).click();
  // The page size chosen stays: all 30 on one page.
  await expectShown(
    page,
    decisions.filter((d) => d.playerId === hero).map((d) => d.id),
  );
  expect(query(page).get('size')).toBe('50');
  expect(query(page).get('player')).toBe(hero);
  expect(query(page).get('reason')).toBeNull();

  // The game's own player id finds the player too (looked up in the game's players).
  const playerField = filters.getByLabel("Player (your game's id, or player id)");
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await filters.getByLabel('Game', { exact: true }).selectOption(w.gameId);
  await playerField.fill('sidekick');
  await filters.getByRole('button', { name: 'Show records' }).click();
  await expectShown(
    page,
    decisions.filter((d) => d.playerId === other).map((d) => d.id),
  );
  expect(query(page).get('player')).toBe('sidekick');
  expect(await page.locator('.search-summary').innerText()).toBe('2 decisions matching 2 filters.');
  // One the game does not have: said in words.
  await playerField.fill('nobody-here');
  await filters.getByRole('button', { name: 'Show records' }).click();
  await page.getByRole('alert').filter({ hasText: 'No player nobody-here in this game.' }).waitFor(WAIT);
  expect(await page.locator('.search-summary').innerText()).toBe(
    'No records to show: the search did not answer (above).',
  );
  // Input checked in the browser: a game's own id needs the game; a sentence at the field, nothing sent.
  let sent = 0;
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.postData()?.includes('ConsoleDecisions')) sent += 1;
  });
  await filters.getByLabel('Game', { exact: true }).selectOption('');
  await playerField.fill('hero');
  await filters.getByRole('button', { name: 'Show records' }).click();
  const alert = filters.getByRole('alert');
  await alert.waitFor(WAIT);
  expect(await alert.innerText()).toContain("A game's own player id (like hero-9) is looked up in one game");
  expect(await playerField.getAttribute('aria-invalid')).toBe('true');
  expect(sent).toBe(0);
  await checkPage(page, 'decisions-input', 'Records: decisions');
}, 180_000);

test('at 390 px: no sideways scroll, the panel over the list, focus and axe', async () => {
  const page = await session.signedIn(owner, PHONE);
  await open(page, `#/records/events/${w.gameId}`);
  await expectShown(
    page,
    decisions.slice(0, 25).map((d) => d.id),
  );
  // Stacked rows: status, reason and reward first; the time on one line; no sideways scroll (checkPage).
  const layout = await firstRowLayout(page.getByRole('table', { name: 'Records page' }));
  expect(layout.leadFirst).toBe(true);
  expect(layout.timeLines).toBe(1);
  expect(layout.rowWidth).toBeLessThanOrEqual(PHONE.width);
  // The filters fold behind "Filters (n)" (here the game), and open with it.
  const filters = page.getByRole('form', { name: 'Record filters' });
  const toggle = page.getByRole('button', { name: 'Filters (1)' });
  expect(await toggle.getAttribute('aria-expanded')).toBe('false');
  expect(await filters.isVisible()).toBe(false);
  await checkPage(page, 'phone-decisions', 'Records: decisions');
  await toggle.click();
  expect(await toggle.getAttribute('aria-expanded')).toBe('true');
  await filters.waitFor({ state: 'visible', ...WAIT });
  await checkPage(page, 'phone-decisions-filters', 'Records: decisions');
  await toggle.click();
  await filters.waitFor({ state: 'hidden', ...WAIT });
  const target = decisions.find((d) => d.reason === 'daily_player_cap')!;
  const details = page.getByRole('button', { name: `Open record ${target.id}` });
  if (!(await details.count())) throw new Error('the daily_player_cap decision is not on the first page');
  await details.click();
  const panel = page.getByRole('region', { name: 'Record', exact: true });
  await panel.waitFor(WAIT);
  expect(await panel.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
  expect(await panel.innerText()).toContain('Raise the game’s daily player cap');
  // Over the list, inside the screen.
  const box = await panel.boundingBox();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
  await checkPage(page, 'phone-decisions-detail', 'Records: decisions');
  await panel.getByRole('button', { name: 'Close' }).click();
  await panel.waitFor({ state: 'detached', ...WAIT });
  expect(await details.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
}, 180_000);

test("the search's export: the game's matching decisions in its window, oldest first, as CSV and NDJSON", async () => {
  const page = await session.signedIn(owner, DESKTOP);
  // Without a game the export says why it cannot run.
  await open(page, '#/records?status=rejected');
  await page.getByText('Choose a game in the filters: an export holds the decisions of one game.').waitFor(WAIT);
  expect(await page.getByRole('button', { name: 'Export CSV' }).isDisabled()).toBe(true);

  // The game's own player id, looked up as the search does; the window: the 31 days before now.
  await open(page, `#/records?game=${w.gameId}&player=hero&status=rejected`);
  const expected = decisions
    .filter((d) => d.playerId === hero && d.reason !== null)
    .map((d) => d.id)
    .reverse();
  const save = async (name: string) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
    return { name: download.suggestedFilename(), text: readFileSync(await download.path(), 'utf8') };
  };
  const csv = await save('Export CSV');
  expect(csv.name).toMatch(
    new RegExp(`^decisions-${w.gameId.slice(0, 8)}-\\d{4}-\\d{2}-\\d{2}T\\d{4}-to-\\d{4}-\\d{2}-\\d{2}T\\d{4}\\.csv$`),
  );
  const rows = csv.text.split('\r\n');
  expect(rows[0]).toBe(
    'id,eventId,gameId,organizationId,playerId,eventType,occurredAt,status,reason,rewardCredits,createdAt,gameTime,externalPlayerId',
  );
  expect(rows.at(-1)).toBe('');
  expect(rows.slice(1, -1).map((row) => row.split(',')[0])).toEqual(expected);
  await page.getByText(`Saved ${csv.name}: ${expected.length} decisions`).waitFor(WAIT);

  const ndjson = await save('Export NDJSON');
  const lines = ndjson.text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: string; status: string; externalPlayerId: string });
  expect(lines.map((line) => line.id)).toEqual(expected);
  expect(new Set(lines.map((line) => `${line.status} ${line.externalPlayerId}`))).toEqual(new Set(['rejected hero']));
  await page.getByText(`Saved ${ndjson.name}: ${expected.length} decisions`).waitFor(WAIT);

  // The same request with curl, the token left to the reader.
  await page.getByText('Export with curl (for a large export)').click();
  const command = await page.locator('.decision-export pre').innerText();
  expect(command).toContain(
    `curl -fsS -H "Authorization: Bearer $TOKEN" '${system.url}/api/developer/v1/decisions/export?`,
  );
  expect(command).toContain(`playerId=`);
  expect(command).not.toContain(owner.token);
  await checkPage(page, 'decisions-export-1280', 'Records: decisions');

  // On a phone: the section and its long curl command stay inside the screen; axe finds nothing.
  const phone = await session.signedIn(owner, PHONE);
  await open(phone, `#/records?game=${w.gameId}&player=hero&status=rejected`);
  await phone.getByText('Export with curl (for a large export)').click();
  await phone.locator('.decision-export pre').waitFor(WAIT);
  await checkPage(phone, 'decisions-export-390', 'Records: decisions');
}, 120_000);

test("the event's metadata in the detail panel, posted through the service, at 1280 and 390 px", async () => {
  // A game of its own (the other tests count the first game's decisions), with a secret key and a player; which
  // decision its events get does not matter here.
  const gameId = (
    await ok(system, owner.token, {
      type: 'createGame',
      projectId: w.projectId,
      name: 'Metadata Game',
      platform: 'web',
      maxPayoutCredits: 100_000,
      dailyPlayerCapCredits: 100,
    })
  ).id;
  const key = (await ok(system, owner.token, { type: 'issueKey', gameId, kind: 'secret', name: 'server' })).issuedKey!;
  const playerId = await insertPlayer(system, gameId, { externalPlayerId: 'mapper' });
  // Sent with its members out of order, and a long string without spaces (it must wrap inside its box on a phone).
  const build = `sha256:${'0123456789abcdef'.repeat(4)}`;
  const metadata = { tags: ['a', 'b'], level: 3, map: 'north', build };
  const post = async (extra: Record<string, unknown>) =>
    expectDecision(
      await postEvent(system.url, key, {
        eventId: randomUUID(),
        playerId,
        eventType: 'level.up',
        occurredAt: new Date().toISOString(),
        ...extra,
      }),
    );
  const withMetadata = await post({ metadata });
  const without = await post({});
  // Shown as the server keeps it (RFC 8785: members sorted), pretty-printed.
  const shown = JSON.stringify({ build, level: 3, map: 'north', tags: ['a', 'b'] }, null, 2);

  for (const [viewport, prefix] of [
    [DESKTOP, ''],
    [PHONE, 'phone-'],
  ] as const) {
    const page = await session.signedIn(owner, viewport);
    await open(page, `#/records?game=${gameId}`);
    await expectShown(page, [without.id, withMetadata.id]);
    const panel = page.getByRole('region', { name: 'Record', exact: true });

    // With metadata: the JSON in a labelled box the keyboard reaches, inside the screen, wrapping its long string.
    await page.getByRole('button', { name: `Open record ${withMetadata.id}` }).click();
    await panel.waitFor(WAIT);
    const box = panel.getByRole('region', { name: 'Event metadata' });
    await box.waitFor(WAIT);
    expect(await box.locator('pre').innerText()).toBe(shown);
    expect(await box.getAttribute('tabindex')).toBe('0');
    expect(await panel.innerText()).not.toContain(
      'No metadata is stored for this event: none was sent, or it was decided before the ledger kept metadata.',
    );
    await box.scrollIntoViewIfNeeded();
    const size = await box.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
    expect(size.scrollWidth).toBeLessThanOrEqual(size.clientWidth);
    const bounds = (await box.boundingBox())!;
    expect(bounds.x).toBeGreaterThanOrEqual(0);
    expect(bounds.x + bounds.width).toBeLessThanOrEqual(viewport.width);
    await box.focus();
    expect(await box.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
    await checkPage(page, `${prefix}decisions-metadata`, 'Records: decisions');
    // Escape from inside the box still closes the panel.
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached', ...WAIT });

    // Without metadata: the sentence, and no box.
    await page.getByRole('button', { name: `Open record ${without.id}` }).click();
    await panel.waitFor(WAIT);
    const sentence = panel.getByText(
      'No metadata is stored for this event: none was sent, or it was decided before the ledger kept metadata.',
      { exact: true },
    );
    await sentence.waitFor(WAIT);
    await sentence.scrollIntoViewIfNeeded();
    expect(await panel.getByRole('region', { name: 'Event metadata' }).count()).toBe(0);
    await checkPage(page, `${prefix}decisions-no-metadata`, 'Records: decisions');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached', ...WAIT });
  }
}, 180_000);
