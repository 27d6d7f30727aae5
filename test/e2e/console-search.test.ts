// The search box and the objects' own pages in a real browser (Debian's Chromium driven by playwright-core) against
// the whole service on real PostgreSQL and NATS, at 1280 px and at 390 px: `/` focuses the box; the game's own player
// id, an event id, a key prefix and a game's name each find their object, grouped, as links; a player's page (linked
// account, today's rewards against the daily cap, all-time rewards, recent decisions), a decision's page (timeline,
// what fixes it, with a link to the Rules tab for a missing rule, the player's other decisions), a key's page (its
// use today); the players view's id filter; the game page's tabs all in view on a phone. Each page: no sideways
// scroll, its title, axe-core without any violation.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { ConsoleBrowser, checkPage, DESKTOP, goTo, PHONE, WAIT } from '../support/browser.ts';
import { type Developer, developer, insertPlayer, ok, type World, world } from '../support/console.ts';
import { sql } from '../support/database.ts';
import type { TestSystem } from '../support/system.ts';

let session: ConsoleBrowser;
let system: TestSystem;
let owner: Developer;
let w: World;
let hero: string;
let keyId: string;
let keyPrefix: string;
const accepted = { id: randomUUID(), eventId: randomUUID() };
const rejected = { id: randomUUID(), eventId: randomUUID() };

beforeAll(async () => {
  session = await ConsoleBrowser.start();
  system = session.system;
  owner = await developer(system);
  w = await world(system, owner.token);
  await ok(system, owner.token, { type: 'updateGame', gameId: w.gameId, name: 'Moon Quest' });
  hero = await insertPlayer(system, w.gameId, { externalPlayerId: 'hero-9' });
  keyId = (await ok(system, owner.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' })).id;
  const url = system.databaseUrl!;
  keyPrefix = (await sql(url, 'select prefix from ledger.keys where id = $1', [keyId]))[0]!.prefix;
  // hero's decisions by that key: accepted (30 credits) a minute ago, rejected for a missing rule just now.
  for (const [decision, reason, reward, secondsAgo] of [
    [accepted, null, 30, 60],
    [rejected, 'unknown_or_inactive_rule', 0, 1],
  ] as const) {
    await sql(
      url,
      `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                  occurred_at, status, reason, reward_credits, payload_hash, created_at)
       select $1, g.id, g.project_id, g.organization_id, $2, $3, $4, 'level.up', now() - make_interval(secs => $5),
              case when $6::text is null then 'accepted' else 'rejected' end, $6, $7, $8,
              now() - make_interval(secs => $5)
         from ledger.games g where g.id = $9`,
      [decision.id, decision.eventId, hero, keyId, secondsAgo, reason, reward, randomBytes(32), w.gameId],
    );
  }
  await sql(
    url,
    `insert into ledger.player_daily_totals (game_id, player_id, day, credits)
     values ($1, $2, (now() at time zone 'UTC')::date, 30)`,
    [w.gameId, hero],
  );
});

afterAll(async () => {
  await session?.stop();
});

/** Types into the search box and presses Enter: the results page of that text. */
async function search(page: Page, text: string) {
  const box = page.getByRole('searchbox', { name: 'Search ids and names' });
  await box.fill(text);
  await box.press('Enter');
  await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor(WAIT);
  // The summary of this search, not the one before it (which still shows until this one's "Searching for" does).
  await page
    .locator('.search-summary')
    .filter({ hasText: `“${text}”` })
    .filter({ hasNotText: 'Searching' })
    .waitFor(WAIT);
}

const group = (page: Page, name: string) => page.getByRole('region', { name });

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('`/` focuses the box; ids and names are found, grouped, each a link to its page', async () => {
    const page = await session.signedIn(owner, viewport);
    // `/` outside a field focuses the box (and types nothing into it).
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('/');
    const box = page.getByRole('searchbox', { name: 'Search ids and names' });
    expect(await box.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
    expect(await box.inputValue()).toBe('');
    // An empty text is refused at the box: nothing is sent, the page stays.
    await box.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Type an id' }).waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe('');

    await search(page, 'hero-9');
    expect(new URL(page.url()).hash).toBe('#/search?q=hero-9');
    expect(await page.locator('.search-summary').innerText()).toBe('1 found for “hero-9”.');
    await group(page, 'Players (1)').getByRole('link', { name: 'hero-9' }).waitFor(WAIT);
    await checkPage(page, shot('search'), 'Search: hero-9');

    await search(page, rejected.eventId);
    await group(page, 'Decisions (1)')
      .getByRole('link', { name: /level\.up: rejected/ })
      .waitFor(WAIT);
    await search(page, keyPrefix.slice(0, 20));
    await group(page, 'Keys (1)')
      .getByRole('link', { name: /^server/ })
      .waitFor(WAIT);
    await search(page, 'moon');
    const games = group(page, 'Games (1)').getByRole('link', { name: 'Moon Quest' });
    expect(await games.getAttribute('href')).toBe(`#/game/${w.gameId}`);
    await search(page, 'nothing-like-this');
    expect(await page.locator('.search-summary').innerText()).toBe('Nothing found for “nothing-like-this”.');
  }, 90_000);

  test("a player's page, a decision's page and a key's page, each at its own address", async () => {
    const page = await session.signedIn(owner, viewport);
    await search(page, 'hero-9');
    await group(page, 'Players (1)').getByRole('link', { name: 'hero-9' }).click();
    await page.getByRole('heading', { name: 'Player hero-9', level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe(`#/player/${hero}`);
    const main = page.locator('main');
    await main.getByText('Linked').first().waitFor(WAIT);
    expect(await main.getByRole('meter', { name: 'Paid today (UTC)' }).getAttribute('value')).toBe('30');
    await main.getByText('of the game’s daily cap of 100 ($0.03)').waitFor(WAIT);
    await main.getByText('In all: 30 credits').waitFor(WAIT);
    const recent = page.getByRole('region', { name: 'Recent decisions' }).getByRole('link', { name: /^level\.up/ });
    await recent.first().waitFor(WAIT);
    expect(await recent.count()).toBe(2);
    await checkPage(page, shot('player'), 'Player hero-9');

    // The newest decision: rejected for a missing rule; its fix is on the game's Rules tab.
    await recent.first().click();
    await page.getByRole('heading', { name: 'Decision: level.up, rejected', level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe(`#/decision/${rejected.id}`);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    expect(await timeline.innerText()).toMatch(/Occurred[\s\S]*Received and decided[\s\S]*Replays seen: not stored/);
    expect(await page.getByRole('link', { name: 'Open Moon Quest' }).getAttribute('href')).toBe(
      `#/game/${w.gameId}/rules`,
    );
    const others = page.getByRole('region', { name: 'Other decisions of hero-9' });
    await others.getByRole('link', { name: 'level.up: accepted' }).waitFor(WAIT);
    await checkPage(page, shot('decision'), 'Decision level.up: rejected');
    // Its address opens it again, as a shared link would.
    await page.reload();
    await page.getByRole('heading', { name: 'Decision: level.up, rejected', level: 1 }).waitFor(WAIT);

    await goTo(page, `#/key/${keyId}`);
    await page.getByRole('heading', { name: 'Key server', level: 1 }).waitFor(WAIT);
    await page.getByText('2 events posted today; last used').waitFor(WAIT);
    await page.getByText('When the key was last used before today is not stored').waitFor(WAIT);
    await checkPage(page, shot('key'), 'Key server');
  }, 90_000);

  test("the players view finds a player by the game's own id or the player id", async () => {
    const page = await session.signedIn(owner, viewport);
    await page.evaluate(() => {
      (globalThis as any).location.hash = '#/records/players';
    });
    const filters = page.getByRole('form', { name: 'Record filters' });
    const table = page.getByRole('table', { name: 'Records page' });
    for (const text of ['hero-9', hero]) {
      await filters.getByLabel('Player (the game’s own id or player id)').fill(text);
      await filters.getByRole('button', { name: 'Show records' }).click();
      const link = table.getByRole('link', { name: 'hero-9', exact: true });
      await link.waitFor(WAIT);
      expect(await link.getAttribute('href')).toBe(`#/player/${hero}`);
      expect(await table.locator('tbody tr').count()).toBe(1);
    }
    await filters.getByLabel('Player (the game’s own id or player id)').fill('nobody-here');
    await filters.getByRole('button', { name: 'Show records' }).click();
    await page.getByText('No player nobody-here matches these filters.').waitFor(WAIT);
    await checkPage(page, shot('records-players'), 'Records: players');
  }, 90_000);

  test('short pages fit the screen, a new page keeps the top bar in view, an open decision cuts no column', async () => {
    const page = await session.signedIn(owner, viewport);
    const metrics = () =>
      page.evaluate(() => ({
        scrollY: (globalThis as any).scrollY as number,
        scrollHeight: (globalThis as any).document.scrollingElement.scrollHeight as number,
        innerHeight: (globalThis as any).innerHeight as number,
      }));
    // A short page is no taller than the screen (it was 2 px taller: nothing to scroll but the top bar away).
    await search(page, 'nothing-like-this');
    const short = await metrics();
    expect(short.scrollHeight).toBeLessThanOrEqual(short.innerHeight);
    // Following a link focuses the new page's main region without scrolling the top bar (and its badge) away.
    await search(page, 'hero-9');
    await group(page, 'Players (1)').getByRole('link', { name: 'hero-9' }).click();
    await page.getByRole('heading', { name: 'Player hero-9', level: 1 }).waitFor(WAIT);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toBe('main');
    expect((await metrics()).scrollY).toBe(0);
    // A form sent with Enter keeps the focus in the form.
    await goTo(page, `#/org/${w.organizationId}`);
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Project name').fill(`Second ${width}`);
    await page.getByLabel('Project ceiling (credits)').fill('1,000');
    await page.getByLabel('Project ceiling (credits)').press('Enter');
    await page.getByRole('status').filter({ hasText: 'done' }).first().waitFor(WAIT);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.tagName)).not.toBe('BODY');
    // An open decision leaves every column of its row in view: beside the panel the rows stack as on a phone.
    await goTo(page, `#/records?game=${w.gameId}`);
    await page.getByRole('button', { name: `Open record ${rejected.id}` }).click();
    await page.getByRole('region', { name: 'Record', exact: true }).waitFor(WAIT);
    const cut = await page.getByRole('table', { name: 'Records page' }).evaluate((table) => {
      const box = table.parentElement!.getBoundingClientRect();
      const cells = Array.from(table.querySelectorAll('tbody tr:first-child td')) as Array<{
        getBoundingClientRect(): { left: number; right: number };
      }>;
      return cells.filter((c) => c.getBoundingClientRect().right > box.right + 0.5).length;
    });
    expect(cut).toBe(0);
  }, 90_000);

  test("the game page's tabs are all in view", async () => {
    const page = await session.signedIn(owner, viewport);
    await goTo(page, `#/game/${w.gameId}/players`);
    const tabs = page.getByRole('navigation', { name: 'Game sections' }).getByRole('link');
    await tabs.first().waitFor(WAIT);
    const innerWidth = await page.evaluate(() => (globalThis as any).innerWidth as number);
    for (const tab of await tabs.all()) {
      const box = (await tab.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(innerWidth);
    }
  }, 90_000);
});
