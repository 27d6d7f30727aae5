// The game's Webhooks tab in a real browser (Debian's Chromium driven by playwright-core) against the whole service on
// real PostgreSQL and NATS, with a real local receiver that verifies every signature with `standardwebhooks`, at
// 1280 px and at 390 px: an owner creates an endpoint (its secret shown once), sends a test message, sees the
// delivery and its attempt, redelivers it (the same webhook-id), disables and enables the endpoint, rotates the secret
// (the next message verifies under the new one) and deletes it; a viewer sees the endpoint and its deliveries but no
// action. Each state: no sideways scroll, its title, axe-core without any violation, a screenshot.
import type { Locator, Page } from 'playwright-core';
import { ConsoleBrowser, checkPage, DESKTOP, goTo, PHONE, WAIT } from '../support/browser.ts';
import { addMember, type Developer, developer, ok, world } from '../support/console.ts';
import { until } from '../support/ingest.ts';
import type { TestSystem } from '../support/system.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

let session: ConsoleBrowser;
let system: TestSystem;
const receivers: WebhookReceiver[] = [];
let owner: Developer;
let viewer: Developer;
const TITLE = 'Game Game: Webhooks';

beforeAll(async () => {
  session = await ConsoleBrowser.start({
    env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' },
  });
  system = session.system;
  owner = await developer(system);
  viewer = await developer(system);
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
  await session?.stop();
});

async function openTab(page: Page, gameId: string) {
  await goTo(page, `#/game/${gameId}/webhooks`);
  await page.getByRole('heading', { name: 'Webhooks' }).first().waitFor(WAIT);
}

/** A compact action form's button (each form is named after its action and endpoint). */
const action = (page: Page, form: string, button: string): Locator =>
  page.getByRole('form', { name: form }).getByRole('button', { name: button });

async function confirm(page: Page, title: string, button: string) {
  const dialog = page.getByRole('dialog', { name: title });
  await dialog.waitFor(WAIT);
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
}

async function bannerSecret(page: Page): Promise<string> {
  const banner = page.getByRole('status', { name: 'New webhook secret' });
  await banner.waitFor(WAIT);
  return banner.getByTestId('webhook-secret').innerText();
}

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('an owner creates, tests, redelivers, disables, enables, rotates and deletes an endpoint', async () => {
    const w = await world(system, owner.token);
    const receiver = new WebhookReceiver();
    receivers.push(receiver);
    const url = await receiver.start(0);
    const page = await session.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    await page.getByText('No webhook endpoints yet.').waitFor(WAIT);

    // Create: the secret is shown once, in a banner, and never again.
    await page.getByRole('button', { name: 'New webhook endpoint' }).click();
    const form = page.getByRole('form', { name: 'New webhook endpoint' });
    await form.getByLabel('URL').fill(url);
    await form.getByLabel('game.paused').uncheck();
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = await bannerSecret(page);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver.secret = secret;
    const heading = page.getByRole('heading', { name: url });
    await heading.waitFor(WAIT);
    await page
      .getByText('decision.accepted, decision.rejected, game.budget_low, game.budget_exhausted, game.resumed · enabled')
      .waitFor(WAIT);
    await checkPage(page, shot('webhooks-created'), TITLE);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page.getByRole('status', { name: 'New webhook secret' }).waitFor({ state: 'detached', ...WAIT });
    await page.reload();
    await heading.waitFor(WAIT);
    expect(await page.getByText(secret).count()).toBe(0);

    // Send a test: the receiver verifies it; the delivery and its attempt are shown with the same webhook-id.
    await action(page, `Send a test message to ${url}`, 'Send test').click();
    await until('the test message received', async () => receiver.received.length === 1, 20_000);
    const [first] = receiver.received;
    expect((first!.verified as { type: string }).type).toBe('webhook.test');
    const delivery = page.locator('details.delivery').filter({ hasText: 'webhook.test' });
    await delivery
      .locator('summary')
      .filter({ hasText: /^delivered webhook\.test .* 1 attempt · last: 200 in/ })
      .waitFor(WAIT);
    await delivery.locator('summary').click();
    await delivery.getByText(first!.id).waitFor(WAIT);
    const attempts = delivery.getByRole('table', { name: `Attempts of ${first!.id}` });
    await attempts.getByRole('cell', { name: 'answered 200' }).waitFor(WAIT);
    expect(await delivery.locator('pre.payload').innerText()).toBe(first!.body);
    // The same payload indented for reading, behind its own disclosure.
    await delivery.getByRole('button', { name: 'Payload formatted' }).click();
    expect(await delivery.getByTestId('payload-formatted').innerText()).toBe(
      JSON.stringify(JSON.parse(first!.body), null, 2),
    );
    await checkPage(page, shot('webhooks-delivery'), TITLE);

    // Redeliver: the same webhook-id again, a second attempt in the table.
    await action(page, `Redeliver ${first!.id}`, 'Redeliver').click();
    await until('the redelivery received', async () => receiver.received.length === 2, 20_000);
    expect(receiver.received[1]!.id).toBe(first!.id);
    await attempts.locator('tbody tr').nth(1).waitFor(WAIT);
    expect(await attempts.locator('tbody tr').count()).toBe(2);

    // Disable, then enable.
    await action(page, `Disable ${url}`, 'Disable').click();
    await page.getByText(/· disabled \(/).waitFor(WAIT);
    await action(page, `Enable ${url}`, 'Enable').click();
    await page.getByText(/· enabled$/).waitFor(WAIT);

    // Rotate: confirmed in a dialog; the new secret shown once; the next message verifies under it only.
    await action(page, `Rotate the secret of ${url}`, 'Rotate secret').click();
    await confirm(page, 'Rotate the signing secret?', 'Rotate secret');
    const rotated = await bannerSecret(page);
    expect(rotated).not.toBe(secret);
    receiver.secret = rotated;
    await checkPage(page, shot('webhooks-rotated'), TITLE);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await action(page, `Send a test message to ${url}`, 'Send test').click();
    await until('the test under the new secret received', async () => receiver.received.length === 3, 20_000);
    expect(receiver.rejectedSignatures).toBe(0);

    // Delete: confirmed; the endpoint and its deliveries are gone.
    await action(page, `Delete ${url}`, 'Delete').click();
    await confirm(page, `Delete the endpoint ${url}?`, 'Delete endpoint');
    await page.getByText('No webhook endpoints yet.').waitFor(WAIT);
    expect(await heading.count()).toBe(0);
  }, 120_000);

  test('two endpoints created in a row: both secrets stay until hidden, each banner names its endpoint', async () => {
    const w = await world(system, owner.token);
    const first = new WebhookReceiver();
    const second = new WebhookReceiver();
    receivers.push(first, second);
    const urls = [await first.start(0), await second.start(0)];
    const page = await session.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    await page.getByText('No webhook endpoints yet.').waitFor(WAIT);
    for (const url of urls) {
      const reveal = page.getByRole('button', { name: 'New webhook endpoint', exact: true });
      if ((await reveal.getAttribute('aria-expanded')) !== 'true') await reveal.click();
      const form = page.getByRole('form', { name: 'New webhook endpoint' });
      await form.getByLabel('URL').fill(url);
      await form.getByRole('button', { name: 'Create endpoint' }).click();
      await page.getByRole('status', { name: `New webhook secret of ${url}`, exact: true }).waitFor(WAIT);
    }
    // Both banners, the newest first (with the focus), each naming its endpoint's URL and holding its own secret.
    const banners = page.getByRole('status', { name: /^New webhook secret of / });
    expect(await banners.count()).toBe(2);
    const secretOf = (url: string) =>
      page
        .getByRole('status', { name: `New webhook secret of ${url}`, exact: true })
        .getByTestId('webhook-secret')
        .innerText();
    const secrets = [await secretOf(urls[0]!), await secretOf(urls[1]!)];
    expect(secrets[0]).not.toBe(secrets[1]);
    expect(await banners.first().innerText()).toContain(`Signing secret of ${urls[1]}, shown this once`);
    expect(await banners.nth(1).innerText()).toContain(`Signing secret of ${urls[0]}, shown this once`);
    expect(
      await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label') as string),
    ).toBe(`New webhook secret of ${urls[1]}`);
    expect(await page.getByTestId('webhook-secrets-unhidden').innerText()).toContain('2 signing secrets are shown');
    await page.getByRole('heading', { name: urls[1]! }).waitFor(WAIT);
    await checkPage(page, shot('webhooks-two-secrets'), TITLE);

    // Each secret is the one its endpoint signs with: a test message to each verifies under its banner's secret.
    first.secret = secrets[0]!;
    second.secret = secrets[1]!;
    await action(page, `Send a test message to ${urls[0]}`, 'Send test').click();
    await action(page, `Send a test message to ${urls[1]}`, 'Send test').click();
    await until(
      'both test messages received',
      async () => first.received.length + second.received.length === 2,
      20_000,
    );
    expect(first.rejectedSignatures + second.rejectedSignatures).toBe(0);

    // Hiding the first endpoint's banner leaves the second one's.
    await page
      .getByRole('status', { name: `New webhook secret of ${urls[0]}`, exact: true })
      .getByRole('button', { name: 'Done, hide it' })
      .click();
    await until('one banner left', async () => (await banners.count()) === 1, 20_000);
    expect(await secretOf(urls[1]!)).toBe(secrets[1]);
    expect(await page.getByTestId('webhook-secrets-unhidden').count()).toBe(0);
  }, 120_000);

  test('a test message not sent yet says why: the endpoint is disabled', async () => {
    const w = await world(system, owner.token);
    const receiver = new WebhookReceiver();
    receivers.push(receiver);
    const url = await receiver.start(0);
    const created = await ok(system, owner.token, {
      type: 'createWebhookEndpoint',
      gameId: w.gameId,
      url,
      eventTypes: ['decision.accepted'],
    });
    await ok(system, owner.token, { type: 'updateWebhookEndpoint', webhookEndpointId: created.id, enabled: false });
    await ok(system, owner.token, { type: 'sendTestWebhook', webhookEndpointId: created.id });
    const page = await session.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    const summary = page.locator('details.delivery summary').filter({ hasText: 'webhook.test' });
    await summary.waitFor(WAIT);
    expect(await summary.innerText()).toMatch(
      /^pending webhook\.test · .* · not sent yet: the endpoint is disabled, it is sent once enabled$/,
    );
    expect(await summary.innerText()).not.toContain('0 attempt');
    await checkPage(page, shot('webhooks-not-sent'), TITLE);
    // Enabled: it goes, and says so.
    receiver.secret = created.secret!;
    await action(page, `Enable ${url}`, 'Enable').click();
    await until('the test message received', async () => receiver.received.length === 1, 20_000);
    await summary.filter({ hasText: /^delivered webhook\.test .* 1 attempt · last: 200 in/ }).waitFor(WAIT);
  }, 90_000);

  test("an endpoint's URL and event types are edited; its deliveries are paged", async () => {
    const w = await world(system, owner.token);
    const first = new WebhookReceiver();
    const second = new WebhookReceiver();
    receivers.push(first, second);
    const [url, moved] = [await first.start(0), await second.start(0)];
    const created = await ok(system, owner.token, {
      type: 'createWebhookEndpoint',
      gameId: w.gameId,
      url,
      eventTypes: ['decision.accepted'],
    });
    // 25 test messages held back by a disabled endpoint: more than a page of 20.
    await ok(system, owner.token, { type: 'updateWebhookEndpoint', webhookEndpointId: created.id, enabled: false });
    for (let i = 0; i < 25; i++)
      await ok(system, owner.token, { type: 'sendTestWebhook', webhookEndpointId: created.id });
    const page = await session.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    const summaries = page.locator('details.delivery');
    await until('a page of deliveries', async () => (await summaries.count()) === 20, 20_000);
    expect(await page.getByTestId('deliveries-shown').innerText()).toBe(
      '20 deliveries shown, newest first; older ones follow.',
    );
    await page.getByRole('button', { name: 'Older deliveries' }).click();
    await until('every delivery', async () => (await summaries.count()) === 25, 20_000);
    expect(await page.getByTestId('deliveries-shown').innerText()).toBe('25 deliveries shown, newest first.');
    expect(await page.getByRole('button', { name: 'Older deliveries' }).count()).toBe(0);
    const ids = await summaries.evaluateAll((all) => all.map((d: any) => d.textContent as string));
    expect(new Set(ids).size).toBe(25);

    // Edit: another URL and other event types; the list says so.
    await page.getByRole('button', { name: 'Edit URL and event types' }).click();
    const edit = page.getByRole('form', { name: `Edit ${url}` });
    expect(await edit.getByLabel('URL').inputValue()).toBe(url);
    expect(await edit.getByLabel('decision.accepted').isChecked()).toBe(true);
    expect(await edit.getByLabel('game.paused').isChecked()).toBe(false);
    // A URL without its scheme: the sentence says what is needed, nothing changes.
    await edit.getByLabel('URL').fill('example.com/hooks');
    await edit.getByRole('button', { name: 'Save endpoint' }).click();
    await edit.getByRole('alert').filter({ hasText: 'whole URL, scheme included: https://' }).waitFor(WAIT);
    await edit.getByLabel('URL').fill(moved);
    await edit.getByLabel('game.paused').check();
    await checkPage(page, shot('webhooks-edit'), TITLE);
    await edit.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByRole('heading', { name: moved, exact: true }).waitFor(WAIT);
    await page.getByText('decision.accepted, game.paused · disabled (').waitFor(WAIT);
    expect(await page.getByRole('heading', { name: url, exact: true }).count()).toBe(0);
  }, 120_000);

  test('a viewer sees the endpoints and their deliveries, and no action', async () => {
    const w = await world(system, owner.token);
    await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
    const receiver = new WebhookReceiver();
    receivers.push(receiver);
    const url = await receiver.start(0);
    const created = await ok(system, owner.token, {
      type: 'createWebhookEndpoint',
      gameId: w.gameId,
      url,
      eventTypes: ['decision.accepted'],
    });
    receiver.secret = created.secret!;
    await ok(system, owner.token, { type: 'sendTestWebhook', webhookEndpointId: created.id });
    await until('the test message received', async () => receiver.received.length === 1, 20_000);

    const page = await session.signedIn(viewer, viewport);
    await openTab(page, w.gameId);
    await page.getByRole('heading', { name: url }).waitFor(WAIT);
    const delivery = page.locator('details.delivery').filter({ hasText: 'webhook.test' });
    await delivery
      .locator('summary')
      .filter({ hasText: /^delivered/ })
      .waitFor(WAIT);
    await delivery.locator('summary').click();
    await delivery.getByRole('table', { name: `Attempts of ${receiver.received[0]!.id}` }).waitFor(WAIT);
    for (const name of ['New webhook endpoint', 'Send test', 'Disable', 'Rotate secret', 'Delete', 'Redeliver']) {
      expect(await page.getByRole('button', { name }).count()).toBe(0);
    }
    // The delivery filters are a search, a read every member has: no other form.
    expect(await page.locator('main form:not(.delivery-filters)').count()).toBe(0);
    await checkPage(page, shot('webhooks-viewer'), TITLE);
  }, 90_000);
});
