// The audit trail, game clocks and test players in the web console, in a real browser (Debian's Chromium driven by
// playwright-core) against the whole service on real PostgreSQL and NATS, at 1280 px and at 390 px: an
// organization's Activity page (entries of the owner and an admin, filtered by action, game and actor, each target a
// link to its page; a viewer told the trail is the owners' and admins'), the game page's clock (advanced a day after a
// confirmation naming the consequence) and its recent changes, and an empty game's guide that links a test player so
// that the curl it shows, run in bash, gets a first accepted decision. Each state: no sideways scroll, axe-core
// without any violation, a screenshot.
import { dirname } from 'node:path';
import type { Page } from 'playwright-core';
import { ConsoleBrowser, checkPage, DESKTOP, goTo, PHONE, WAIT } from '../support/browser.ts';
import { runCommand } from '../support/cli.ts';
import { addMember, type Developer, developer, ok, world } from '../support/console.ts';
import { until } from '../support/ingest.ts';
import type { TestSystem } from '../support/system.ts';

let session: ConsoleBrowser;
let system: TestSystem;
let owner: Developer;
let adminDev: Developer;
let viewer: Developer;

beforeAll(async () => {
  session = await ConsoleBrowser.start();
  system = session.system;
  owner = await developer(system);
  adminDev = await developer(system);
  viewer = await developer(system);
});

afterAll(async () => {
  await session?.stop();
});

/** The texts of a column's cells (the action's words) of the table's body rows. */
async function actions(page: Page, table: string): Promise<string[]> {
  return page
    .getByRole('table', { name: table })
    .locator('tbody tr td.lead')
    .allInnerTexts()
    .then((texts) => texts.map((t) => t.trim()));
}

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('the Activity page: who changed what, filtered, each target a link; a viewer is told it is not theirs', async () => {
    const w = await world(system, owner.token);
    await addMember(system, owner.token, w.organizationId, adminDev, 'admin');
    await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
    for (const who of [adminDev, viewer]) {
      await ok(system, who.token, { type: 'acceptMembership', organizationId: w.organizationId });
    }
    // A long unbroken game name must wrap, never push the page sideways.
    const longName = `Game${'x'.repeat(90)}`;
    const other = await ok(system, owner.token, {
      type: 'createGame',
      projectId: w.projectId,
      name: longName,
      platform: 'web',
      maxPayoutCredits: 1000,
      dailyPlayerCapCredits: 100,
    });
    const rule = await ok(system, adminDev.token, {
      type: 'createRule',
      gameId: w.gameId,
      eventType: 'level.up',
      rewardCredits: 10,
    });
    await ok(system, adminDev.token, { type: 'updateGame', gameId: w.gameId, dailyPlayerCapCredits: 250 });

    const page = await session.signedIn(owner, viewport);
    await goTo(page, `#/org/${w.organizationId}`);
    await page.getByRole('link', { name: 'Activity: who changed what' }).click();
    await page.getByRole('heading', { name: 'Activity of Org', level: 1 }).waitFor(WAIT);
    const table = page.getByRole('table', { name: 'Activity' });
    await table.waitFor(WAIT);
    const all = await actions(page, 'Activity');
    // Newest first: the admin's two actions, the second game, the memberships, then the owner's setup.
    expect(all.slice(0, 3)).toEqual(['Game updated updateGame', 'Rule created createRule', 'Game created createGame']);
    expect(all).toContain('Organization created createOrganization');
    expect(all).toContain('Member added addMember');
    // Who and what changed, from and to.
    const updated = table.locator('tbody tr').first();
    expect(await updated.innerText()).toContain(adminDev.email);
    expect(await updated.innerText()).toMatch(/dailyPlayerCapCredits: 100 → 250/);
    await checkPage(page, shot('activity'), 'Activity of Org');

    // Filtered by action: one entry, whose target links to the game's rules.
    const filters = page.getByRole('form', { name: 'Filter the activity' });
    await filters.getByLabel('Action').selectOption('createRule');
    await filters.getByRole('button', { name: 'Show' }).click();
    await until('one entry', async () => (await actions(page, 'Activity')).length === 1, WAIT.timeout);
    expect(page.url()).toContain('action=createRule');
    expect(await page.getByTestId('activity-count').innerText()).toContain('1 entry shown');

    // Filtered by game too (the other game has no rule): nothing matches; cleared: all again.
    await filters.getByLabel('Game').selectOption(other.id);
    await filters.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No entry matches these filters.').waitFor(WAIT);
    await page.getByRole('link', { name: 'Clear the filters' }).click();
    await until('every entry', async () => (await actions(page, 'Activity')).length === all.length, WAIT.timeout);

    // Filtered by actor: the admin's three entries (accepting the membership is one).
    await filters.getByLabel('Who').selectOption(adminDev.sub);
    await filters.getByRole('button', { name: 'Show' }).click();
    await until(
      "the admin's entries",
      async () =>
        JSON.stringify(await actions(page, 'Activity')) ===
        JSON.stringify(['Game updated updateGame', 'Rule created createRule', 'Membership accepted acceptMembership']),
      WAIT.timeout,
    );
    await checkPage(page, shot('activity-filtered'), 'Activity of Org');
    // Each target is a link to its page: the rule's leads to the game's Rules tab.
    await table.getByRole('link', { name: 'Rule level.up' }).click();
    await page.waitForURL(new RegExp(`#/game/${w.gameId}/rules$`), WAIT);
    await page.getByRole('heading', { name: 'Game Game', level: 1 }).waitFor(WAIT);
    expect(rule.id).toBeTruthy();

    // The game filter from the game page: the long-named game's entries only.
    await goTo(page, `#/game/${other.id}`);
    await page.getByRole('link', { name: 'All activity of this game' }).click();
    await until(
      "the other game's entry",
      async () => JSON.stringify(await actions(page, 'Activity')) === JSON.stringify(['Game created createGame']),
      WAIT.timeout,
    );
    await table.getByRole('link', { name: `Game ${longName}` }).waitFor(WAIT);
    await checkPage(page, shot('activity-game'), 'Activity of Org');

    // A viewer: the page says the trail is for owners and admins, without an error.
    const viewerPage = await session.signedIn(viewer, viewport);
    await goTo(viewerPage, `#/org/${w.organizationId}/activity`);
    const note = viewerPage.getByTestId('activity-forbidden');
    await note.waitFor(WAIT);
    expect(await note.innerText()).toContain('shown to its owner and admins only. Your role here is viewer');
    expect(await viewerPage.getByRole('table', { name: 'Activity' }).count()).toBe(0);
    await checkPage(viewerPage, shot('activity-viewer'), 'Activity of Org');
  }, 120_000);

  test("the game page's clock moves forward after a confirmation; its recent changes say so", async () => {
    const w = await world(system, owner.token);
    const page = await session.signedIn(owner, viewport);
    await goTo(page, `#/game/${w.gameId}`);
    const clock = page.getByTestId('game-clock');
    await clock.waitFor(WAIT);
    expect(await clock.innerText()).toContain('(real time: never advanced).');
    const changes = page.getByRole('table', { name: 'Recent changes' });
    await changes.waitFor(WAIT);
    expect(await actions(page, 'Recent changes')).toEqual(['Game allocated allocateGame', 'Game created createGame']);

    const form = page.getByRole('form', { name: 'Advance the clock of Game' });
    await form.getByLabel('Move forward by').selectOption('1 day');
    await form.getByRole('button', { name: 'Advance the clock' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move the clock of Game forward by 1 day?' });
    await dialog.waitFor(WAIT);
    const said = await dialog.innerText();
    expect(said).toContain('for good: a clock never moves back');
    expect(said).toContain("The daily cap's day and the occurredAt window follow the clock");
    await checkPage(page, shot('game-clock-confirm'), 'Game Game');
    await dialog.getByRole('button', { name: 'Advance the clock' }).click();
    await dialog.waitFor({ state: 'hidden', ...WAIT });

    await until(
      'the clock a day ahead',
      async () => (await clock.innerText()).includes('(1 day ahead of real time).'),
      WAIT.timeout,
    );
    expect(await page.locator('p.where').innerText()).toContain('Game clock 1 day ahead of real time.');
    await until(
      'the change listed',
      async () => (await actions(page, 'Recent changes'))[0] === 'Game clock advanced advanceGameClock',
      WAIT.timeout,
    );
    expect(await changes.locator('tbody tr').first().innerText()).toContain('seconds: 86400');
    await checkPage(page, shot('game-clock-advanced'), 'Game Game');
  }, 120_000);

  test("an empty game's guide links a test player: its curl, run in bash, gets a first accepted decision", async () => {
    const w = await world(system, owner.token);
    await ok(system, owner.token, { type: 'createRule', gameId: w.gameId, eventType: 'level.up', rewardCredits: 10 });
    const page = await session.signedIn(owner, viewport);
    // A secret key made on the page: the guide's command uses it.
    await goTo(page, `#/game/${w.gameId}/keys`);
    await page.getByRole('button', { name: 'New key', exact: true }).click();
    const keyForm = page.getByRole('form', { name: 'New key' });
    await keyForm.getByLabel('Key name').fill('server');
    await keyForm.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('issued-key').innerText();
    await goTo(page, `#/game/${w.gameId}/overview`);
    const first = page.getByTestId('first-event');
    await first.waitFor(WAIT);
    const link = first.getByRole('form', { name: 'Link a test player' });
    expect(await link.getByLabel('Player id in your game').inputValue()).toBe('test-player-1');
    await checkPage(page, shot('game-first-event-test-player'), 'Game Game');
    await link.getByRole('button', { name: 'Link a test player' }).click();

    // The guide now shows one command, the event, with the key and the linked test player.
    const commands = first.locator('pre');
    await until(
      'the event command for the test player',
      async () => (await commands.count()) === 1 && !(await commands.first().innerText()).includes('$PLAYER_ID'),
      WAIT.timeout,
    );
    const sendEvent = await commands.first().innerText();
    expect(sendEvent).toContain(`-H "Authorization: Bearer ${key}"`);
    expect(await link.count()).toBe(0);
    const decided = await runCommand('bash', ['-c', sendEvent], {
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME ?? '/tmp',
    });
    expect(decided.code).toBe(0);
    expect(JSON.parse(decided.stdout).data).toMatchObject({ status: 'accepted', rewardCredits: 10 });
    await page.getByRole('table', { name: 'Live decisions' }).getByText('accepted').first().waitFor(WAIT);

    // The Players tab lists it as a test player.
    await goTo(page, `#/game/${w.gameId}/players`);
    const players = page.getByRole('table', { name: 'Players' });
    await players.getByRole('row', { name: /test-player-1 test account/ }).waitFor(WAIT);
    await checkPage(page, shot('game-test-player'), 'Game Game: Players');
  }, 120_000);

  test('long names never scroll the page sideways; members fit a phone; adding one says what happens next', async () => {
    const longName = `Long${'w'.repeat(96)}`;
    const organizationId = (await ok(system, owner.token, { type: 'createOrganization', name: longName })).id;
    await ok(system, owner.token, { type: 'fundOrganization', organizationId, amountCredits: 1000 });
    const projectId = (
      await ok(system, owner.token, { type: 'createProject', organizationId, name: longName, maxPayoutCredits: 1000 })
    ).id;
    const gameId = (
      await ok(system, owner.token, {
        type: 'createGame',
        projectId,
        name: longName,
        platform: 'web',
        maxPayoutCredits: 1000,
        dailyPlayerCapCredits: 100,
      })
    ).id;
    await ok(system, owner.token, { type: 'createRule', gameId, eventType: `e.${'r'.repeat(40)}`, rewardCredits: 5 });
    await ok(system, owner.token, { type: 'issueKey', gameId, kind: 'secret', name: longName });
    await addMember(system, owner.token, organizationId, adminDev, 'admin');
    const page = await session.signedIn(owner, viewport);
    for (const [hash, title, name] of [
      [`#/org/${organizationId}`, `Organization ${longName}`, 'organization'],
      [`#/project/${projectId}`, `Project ${longName}`, 'project'],
      [`#/game/${gameId}`, `Game ${longName}`, 'game'],
      [`#/game/${gameId}/rules`, `Game ${longName}: Rules`, 'rules'],
      [`#/game/${gameId}/keys`, `Game ${longName}: Keys`, 'keys'],
      [`#/org/${organizationId}/activity`, `Activity of ${longName}`, 'activity'],
    ] as const) {
      await goTo(page, hash);
      await page.getByRole('heading', { level: 1 }).first().waitFor(WAIT);
      await until('the page titled', async () => (await page.title()).startsWith(title), WAIT.timeout);
      await checkPage(page, shot(`long-name-${name}`), title);
    }

    // Members: every member's actions within the screen's width, and what happens next after adding one.
    await goTo(page, `#/org/${organizationId}`);
    const members = page.getByRole('table', { name: 'Members' });
    await members.waitFor(WAIT);
    const innerWidth = await page.evaluate(() => (globalThis as any).innerWidth as number);
    for (const name of ['Change role', 'Remove']) {
      const box = await members.getByRole('button', { name, exact: true }).first().boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x + box!.width).toBeLessThanOrEqual(innerWidth);
    }
    await page.getByRole('button', { name: 'Invite a member', exact: true }).click();
    const invite = page.getByRole('form', { name: 'Invite a member' });
    await invite.getByLabel('E-mail (development sign-in) or identity user id').fill(viewer.email);
    await invite.getByRole('button', { name: 'Add member' }).click();
    const added = page.getByTestId('member-added');
    await added.waitFor(WAIT);
    expect(await added.innerText()).toContain(`${viewer.email} is added as viewer.`);
    expect(await added.innerText()).toContain('until they sign in and accept the membership');
    await checkPage(page, shot('member-added'), `Organization ${longName}`);
  }, 120_000);
});
