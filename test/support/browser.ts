// Debian's Chromium driven by playwright-core for the web console's browser tests (test/e2e): where the browser and
// the screenshots are, the launch, and axe-core's findings on a page (every impact).
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

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
