// Debian's Chromium driven by playwright-core for the web console's browser tests (test/e2e): where the browser and
// the screenshots are, the launch, axe-core's findings on a page (every impact), and what every such test file does
// alike: one browser against one whole test system, pages signed in at the two widths, and each state's checks.
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { startTestSystem, type TestSystem, type TestSystemOptions } from './system.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// The screenshots of docs/console-ui.md are refreshed with UPDATE_SCREENSHOTS=1; other runs write them to a
// temporary folder, so that a test run leaves the working tree as it was.
export const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/console-ui/', import.meta.url))
    : `${tmpdir()}/console-ui-screenshots/`;
export const WAIT = { timeout: 20_000 };

/** Checks that Chromium and the built console exist (with what to do otherwise) and launches Chromium headless. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: the console's browser tests need Debian's chromium package ` +
        '(apt-get install chromium; .ci/run installs it) or CHROMIUM_PATH pointing at a Chromium binary.',
    );
  }
  if (!existsSync(fileURLToPath(new URL('../../console/dist/index.html', import.meta.url)))) {
    throw new Error('console/dist is missing: run npm run console:build');
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** axe-core on the page as it is now: every violation, of any impact (critical to minor), one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map(
    (v) => `${v.impact}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
  );
}

/** The two widths the console is tested at: a desktop's and a phone's. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export type Viewport = typeof DESKTOP;

/**
 * One Chromium and one whole test system (real PostgreSQL and NATS unless the options say otherwise) for a file of
 * browser tests: pages signed in through the console's sign-in form, each in its own browser context; stop() closes
 * them, the browser and the system.
 */
export class ConsoleBrowser {
  readonly browser: Browser;
  readonly system: TestSystem;
  private readonly contexts: BrowserContext[] = [];

  private constructor(browser: Browser, system: TestSystem) {
    this.browser = browser;
    this.system = system;
  }

  static async start(options?: TestSystemOptions): Promise<ConsoleBrowser> {
    const browser = await launchChromium();
    try {
      return new ConsoleBrowser(browser, await startTestSystem(options));
    } catch (error) {
      await browser.close();
      throw error;
    }
  }

  /** A new browser context (its own storage, as another browser profile) at `viewport`, closed by stop(). */
  async newContext(viewport: Viewport): Promise<BrowserContext> {
    const context = await this.browser.newContext({ viewport });
    this.contexts.push(context);
    return context;
  }

  /** A new page signed in as `who` at `viewport`, on the Organizations page. */
  async signedIn(who: { email: string }, viewport: Viewport): Promise<Page> {
    const page = await (await this.newContext(viewport)).newPage();
    await page.goto(`${this.system.url}/console/`);
    await page.getByLabel('E-mail').fill(who.email);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
    return page;
  }

  async stop(): Promise<void> {
    for (const context of this.contexts) await context.close().catch(() => undefined);
    await this.browser.close();
    await this.system.stop();
  }
}

/** Follows a link of the console as a person would paste it: the hash of the page's URL. */
export async function goTo(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => {
    (globalThis as any).location.hash = h;
  }, hash);
}

/**
 * A state's checks: no sideways scroll, the page's title (`<title> · Sandbox Rewards console`, when given), axe-core
 * without any violation, and a screenshot named `screenshot`.
 */
export async function checkPage(page: Page, screenshot: string, title?: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: (globalThis as any).document.scrollingElement.scrollWidth as number,
    innerWidth: (globalThis as any).innerWidth as number,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  if (title !== undefined) expect(await page.title()).toBe(`${title} · Sandbox Rewards console`);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: `${SCREENSHOTS}${screenshot}.png`, fullPage: true });
}

/**
 * The first body row of a decisions table as laid out: whether status, reason and reward come before the other
 * cells (above them), and how many lines the Received time takes (its height over its line height).
 */
export async function firstRowLayout(table: Locator) {
  return table
    .locator('tbody tr')
    .first()
    .evaluate((row) => {
      const cells = Array.from(row.querySelectorAll('td')) as any[];
      const lead = cells.filter((c) => c.classList.contains('lead') && c.textContent !== '');
      const rest = cells.filter((c) => !c.classList.contains('lead'));
      const time = row.querySelector('td.when') as any;
      const lineHeight = Number.parseFloat((globalThis as any).getComputedStyle(time).lineHeight);
      return {
        leadFirst: lead.every((l) =>
          rest.every((r) => l.getBoundingClientRect().bottom <= r.getBoundingClientRect().top + 1),
        ),
        timeLines: Math.round(time.getBoundingClientRect().height / lineHeight),
        rowWidth: row.getBoundingClientRect().width as number,
      };
    });
}
