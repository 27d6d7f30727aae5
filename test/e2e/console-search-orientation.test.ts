// Finding and staying oriented, in a real browser (Debian's Chromium driven by playwright-core) against the whole
// service on real PostgreSQL, at 1280 px and at 390 px: the search box finds a name by its words in any order, and two
// games of the same name read apart (where each sits, and the start of its id when that is the same too); a long
// decision search says about how many decisions it holds (an estimate, said so) and which page of about how many is
// shown, Older page and Newer page counting, the page number kept in the address across a reload. Each state: no
// sideways scroll, axe-core without any violation, a screenshot.
import { randomUUID } from 'node:crypto';
import { ConsoleBrowser, checkPage, DESKTOP, PHONE, WAIT } from '../support/browser.ts';
import { type Developer, developer, insertPlayer, ok, world } from '../support/console.ts';
import { sql } from '../support/database.ts';
import { until } from '../support/ingest.ts';
import type { TestSystem } from '../support/system.ts';

let browser: ConsoleBrowser;
let system: TestSystem;
let owner: Developer;
/** Decisions of the long search's game: 130, 40 of them rejected. */
const DECISIONS = 130;
const REJECTED = 40;

beforeAll(async () => {
  browser = await ConsoleBrowser.start();
  system = browser.system;
  owner = await developer(system);
});

afterAll(async () => {
  await browser?.stop();
});

/** `count` decisions of one player in the game over the last hours, the first `rejected` of them rejected. */
async function decisions(gameId: string, count: number, rejected: number) {
  const player = await insertPlayer(system, gameId, { externalPlayerId: `p-${randomUUID().slice(0, 8)}` });
  const keyId = (await ok(system, owner.token, { type: 'issueKey', gameId, kind: 'secret', name: 'server' })).id;
  await sql(
    system.databaseUrl!,
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select gen_random_uuid(), g.id, g.project_id, g.organization_id, gen_random_uuid(), $1, $2, 'level.up',
            now() - make_interval(mins => i), case when i < $3 then 'rejected' else 'accepted' end,
            case when i < $3 then 'daily_player_cap' end, case when i < $3 then 0 else 1 end,
            sha256(i::text::bytea), now() - make_interval(mins => i)
       from ledger.games g cross join generate_series(0, $4::int - 1) i where g.id = $5`,
    [player, keyId, rejected, count, gameId],
  );
}

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('a name is found by its words in any order; two games of the same name read apart', async () => {
    const name = `Moon Quest ${width}`;
    const first = await world(system, owner.token);
    const second = await world(system, owner.token);
    for (const w of [first, second]) await ok(system, owner.token, { type: 'updateGame', gameId: w.gameId, name });
    const page = await browser.signedIn(owner, viewport);
    const box = page.getByRole('searchbox', { name: 'Search ids and names' });
    await box.fill(`quest ${width} MOON`);
    await box.press('Enter');
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor(WAIT);
    const games = page.getByRole('region', { name: 'Games (2)' });
    await games.waitFor(WAIT);
    const items = await games.getByRole('listitem').allInnerTexts();
    expect(items).toHaveLength(2);
    // Same name, same organization and project names: where each sits, then the start of its id.
    for (const w of [first, second]) {
      expect(items).toContainEqual(`${name} game in Org › Project, id ${w.gameId.slice(0, 8)}`);
    }
    await games.getByRole('link', { name }).first().waitFor(WAIT);
    await checkPage(page, shot('search-same-names'));
  }, 90_000);

  test('a long decision search says about how many and which page; the page number follows the pager', async () => {
    const w = await world(system, owner.token);
    await decisions(w.gameId, DECISIONS, REJECTED);
    const page = await browser.signedIn(owner, viewport);
    await page.evaluate((h) => {
      (globalThis as any).location.hash = h;
    }, `#/records?game=${w.gameId}`);
    const summary = page.locator('.search-summary');
    const pageNumber = page.getByTestId('page-number');
    await summary.filter({ hasText: `In all about ${DECISIONS} decisions (an estimate` }).waitFor(WAIT);
    await pageNumber.filter({ hasText: 'Page 1 of about 6' }).waitFor(WAIT);

    const older = page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Older page' });
    await older.click();
    await pageNumber.filter({ hasText: 'Page 2 of about 6' }).waitFor(WAIT);
    await summary
      .filter({ hasText: /^Page 2: 25 shown matching 1 filter; more on other pages\. In all about 130 decisions/ })
      .waitFor(WAIT);
    await older.click();
    await pageNumber.filter({ hasText: 'Page 3 of about 6' }).waitFor(WAIT);
    expect(await page.evaluate(() => (globalThis as any).location.hash as string)).toContain('page=3');
    await checkPage(page, shot('records-page-of-about'));
    // A reload (or the link) keeps the place.
    await page.reload();
    await pageNumber.filter({ hasText: 'Page 3 of about 6' }).waitFor(WAIT);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Newer page' }).click();
    await pageNumber.filter({ hasText: 'Page 2 of about 6' }).waitFor(WAIT);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Newest' }).click();
    await pageNumber.filter({ hasText: 'Page 1 of about 6' }).waitFor(WAIT);

    // Filtered by status: the total counts only those.
    await page.evaluate((h) => {
      (globalThis as any).location.hash = h;
    }, `#/records?game=${w.gameId}&status=rejected`);
    await summary.filter({ hasText: `In all about ${REJECTED} decisions` }).waitFor(WAIT);
    await pageNumber.filter({ hasText: 'Page 1 of about 2' }).waitFor(WAIT);
    // A filter the statistics do not count (the event type): no total, the page number alone.
    await page.evaluate((h) => {
      (globalThis as any).location.hash = h;
    }, `#/records?game=${w.gameId}&type=level.up`);
    await until('the search by type shown', async () => (await summary.innerText()).includes('shown'), 20_000);
    expect(await summary.innerText()).not.toContain('In all');
    expect(await pageNumber.innerText()).toBe('Page 1');
  }, 120_000);
});
