// One sign-in for every tab of the console, in a real browser (Debian's Chromium driven by playwright-core) against
// the whole service, at 1280 px and at 390 px: a console link opened in a new tab of the same browser shows its page
// signed in, without the sign-in form (the session handed over a BroadcastChannel by the open tab, never through
// localStorage); signing out in one tab signs the other out; a new tab with no signed-in tab open asks to sign in.
// Each state: no sideways scroll, axe-core without any violation, a screenshot.
import type { Page } from 'playwright-core';
import { ConsoleBrowser, checkPage, DESKTOP, PHONE, WAIT } from '../support/browser.ts';
import { type Developer, developer, world } from '../support/console.ts';
import { until } from '../support/ingest.ts';
import type { TestSystem } from '../support/system.ts';

let browser: ConsoleBrowser;
let system: TestSystem;
let owner: Developer;

beforeAll(async () => {
  browser = await ConsoleBrowser.start();
  system = browser.system;
  owner = await developer(system);
});

afterAll(async () => {
  await browser?.stop();
});

/** What the page keeps in localStorage and sessionStorage, as key=value lines. */
async function stored(page: Page) {
  return page.evaluate(() => {
    const dump = (storage: any) =>
      Object.keys(storage).map((key: string) => `${key}=${storage.getItem(key) as string}`) as string[];
    return { local: dump((globalThis as any).localStorage), session: dump((globalThis as any).sessionStorage) };
  });
}

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('a console link opened in a new tab is signed in; signing out there signs the first tab out', async () => {
    const w = await world(system, owner.token);
    const context = await browser.newContext(viewport);
    const first = await context.newPage();
    await first.goto(`${system.url}/console/`);
    await first.getByLabel('E-mail').fill(owner.email);
    await first.getByRole('button', { name: 'Sign in' }).click();
    await first.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);

    // A link to the game's Rules tab, opened in a new tab of the same browser: the page itself, no sign-in form.
    const second = await context.newPage();
    await second.goto(`${system.url}/console/#/game/${w.gameId}/rules`);
    await second.getByRole('heading', { name: 'Game Game', level: 1 }).waitFor(WAIT);
    await until('the Rules tab', async () => (await second.title()) === 'Game Game: Rules · Sandbox Rewards console');
    expect(await second.getByLabel('E-mail').count()).toBe(0);
    expect(await second.getByText(owner.email).count()).toBeGreaterThan(0);
    // Nothing in localStorage; the new tab keeps the session in its own sessionStorage, as a sign-in there would.
    const kept = await stored(second);
    expect(kept.local).toEqual([]);
    expect(kept.session).toHaveLength(1);
    expect(kept.session[0]).toMatch(/^console\.devSession=eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    await checkPage(second, shot('new-tab-signed-in'));

    // Signing out in the new tab signs the first tab out too.
    await second.getByRole('button', { name: 'Sign out' }).click();
    await second.getByLabel('E-mail').waitFor(WAIT);
    await first.getByLabel('E-mail').waitFor(WAIT);
    expect(await first.getByRole('alert').count()).toBe(0);
    expect((await stored(first)).session).toEqual([]);

    // No signed-in tab left: a new tab asks to sign in.
    const third = await context.newPage();
    await third.goto(`${system.url}/console/#/game/${w.gameId}/rules`);
    await third.getByLabel('E-mail').waitFor(WAIT);
    expect(await third.getByRole('alert').count()).toBe(0);
    await checkPage(third, shot('new-tab-sign-in'));
  }, 120_000);

  test('another browser (a context of its own) is not handed the session', async () => {
    const signedIn = await browser.newContext(viewport);
    const other = await browser.newContext(viewport);
    const page = await signedIn.newPage();
    await page.goto(`${system.url}/console/`);
    await page.getByLabel('E-mail').fill(owner.email);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
    const stranger = await other.newPage();
    await stranger.goto(`${system.url}/console/`);
    await stranger.getByLabel('E-mail').waitFor(WAIT);
    expect((await stored(stranger)).session).toEqual([]);
  }, 60_000);
});
