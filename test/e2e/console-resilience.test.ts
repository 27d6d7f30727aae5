// The console while its server cannot be reached, in a real browser (Debian's Chromium driven by playwright-core)
// against the whole service on real PostgreSQL and NATS, at 1280 px and at 390 px: a page whose code (a lazily
// loaded chunk) fails to load shows a message with "Reload" instead of a white console, and comes back by itself
// once the chunk is served again; "Reload" brings it back too. Requests that do not reach the service put up one
// notice on every page, which goes by itself once the service answers. Each failure state: no sideways scroll,
// axe-core without any violation, a screenshot.
import { ConsoleBrowser, checkPage, DESKTOP, goTo, PHONE, WAIT } from '../support/browser.ts';
import { type Developer, developer, world } from '../support/console.ts';
import type { TestSystem } from '../support/system.ts';

let session: ConsoleBrowser;
let system: TestSystem;
let owner: Developer;

beforeAll(async () => {
  session = await ConsoleBrowser.start();
  system = session.system;
  owner = await developer(system);
});

afterAll(async () => {
  await session?.stop();
});

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('a page whose code cannot load says so, and comes back by itself once it is served', async () => {
    const w = await world(system, owner.token);
    const page = await session.signedIn(owner, viewport);
    // The game page's chunk cannot be fetched (the server restarting), the rest of the console was loaded before.
    const chunk = /\/console\/assets\/Game-[^/]*\.js$/;
    let refused = 0;
    await page.route(chunk, (route) => {
      refused += 1;
      return route.abort('connectionrefused');
    });
    await goTo(page, `#/game/${w.gameId}`);
    const alert = page.getByRole('alert').filter({ hasText: 'This page could not be loaded' });
    await alert.waitFor(WAIT);
    expect(await alert.innerText()).toContain('comes back by itself once the server answers again');
    await alert.getByRole('button', { name: 'Reload' }).waitFor(WAIT);
    // The console around it stays: the search box, sign out.
    await page.getByRole('button', { name: 'Search', exact: true }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
    await checkPage(page, shot('page-load-failed'));
    // The chunk's address is asked again while it fails.
    const before = refused;
    await page.waitForTimeout(3_500);
    expect(refused).toBeGreaterThan(before);

    // Served again: the game page appears without anyone clicking, still signed in.
    await page.unroute(chunk);
    await page.getByRole('heading', { name: 'Game Game', level: 1 }).waitFor(WAIT);
    expect(await alert.count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
  }, 90_000);

  test('"Reload" brings a page back whose code failed to load', async () => {
    await world(system, owner.token);
    const page = await session.signedIn(owner, viewport);
    const chunk = /\/console\/assets\/Records-[^/]*\.js$/;
    await page.route(chunk, (route) => route.abort('connectionrefused'));
    await goTo(page, '#/records');
    const alert = page.getByRole('alert').filter({ hasText: 'This page could not be loaded' });
    await alert.waitFor(WAIT);
    await page.unroute(chunk);
    await alert.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('heading', { name: 'Records', level: 1 }).waitFor(WAIT);
    expect(await alert.count()).toBe(0);
  }, 90_000);

  test('requests that cannot reach the service put up one notice on every page, gone once it answers', async () => {
    const w = await world(system, owner.token);
    const page = await session.signedIn(owner, viewport);
    let down = false;
    await page.route('**/graphql', (route) => (down ? route.abort('connectionrefused') : route.continue()));
    await goTo(page, `#/org/${w.organizationId}`);
    await page.getByRole('heading', { name: 'Organization Org', level: 1 }).waitFor(WAIT);
    const notice = page.getByTestId('service-unreachable');
    expect(await notice.count()).toBe(0);

    // Down: the next request (Records reads a page) fails, and the notice says so with its time.
    down = true;
    await goTo(page, '#/records');
    await notice.waitFor(WAIT);
    expect(await notice.innerText()).toMatch(/^The service cannot be reached \(since \S.*\)\. What this page shows/);
    expect(await notice.getAttribute('role')).toBe('alert');
    // Console-wide: another page, which asks nothing itself, still carries it.
    await goTo(page, `#/org/${w.organizationId}`);
    await page.getByRole('heading', { name: 'Organization Org', level: 1 }).waitFor(WAIT);
    await notice.waitFor(WAIT);
    await checkPage(page, shot('service-unreachable'));

    // Back: the console's own probe finds the service again; the notice goes without a reload.
    down = false;
    await notice.waitFor({ state: 'detached', timeout: 20_000 });
    await page.getByRole('heading', { name: 'Organization Org', level: 1 }).waitFor(WAIT);
  }, 90_000);
});
