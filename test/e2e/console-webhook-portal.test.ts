// The Webhooks tab as a delivery portal, in a real browser (Debian's Chromium driven by playwright-core) against the
// whole service on real PostgreSQL and NATS, with real local receivers that verify every signature with
// `standardwebhooks`, at 1280 px and at 390 px: an endpoint's deliveries filtered by state, event type and time and
// found by the webhook-id a receiver logged (a malformed id refused in the browser, nothing sent); the filters in the
// page's address (a reload and a pasted link show the same filtered deliveries, Back and Forward move between them);
// a sample payload per event type, the test message's as the service sends it; "Recover failed since…" says how many
// failed deliveries it sends again before it sends anything, then sends the failures of the window again with their
// webhook-ids, the older one left; a rotation says until when the previous secret still signs,
// and a receiver still holding it verifies the next message. Each state: no sideways scroll, axe-core without any
// violation, a screenshot.
import type { Locator, Page } from 'playwright-core';
import { ConsoleBrowser, checkPage, DESKTOP, goTo, PHONE, WAIT } from '../support/browser.ts';
import { type Developer, developer, ok, world } from '../support/console.ts';
import { sql } from '../support/database.ts';
import { until } from '../support/ingest.ts';
import type { TestSystem } from '../support/system.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

let browser: ConsoleBrowser;
let system: TestSystem;
const receivers: WebhookReceiver[] = [];
let owner: Developer;

beforeAll(async () => {
  browser = await ConsoleBrowser.start({
    env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' },
  });
  system = browser.system;
  owner = await developer(system);
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
  await browser?.stop();
});

async function openTab(page: Page, gameId: string) {
  await goTo(page, `#/game/${gameId}/webhooks`);
  await page.getByRole('heading', { name: 'Webhooks' }).first().waitFor(WAIT);
}

/** A compact action form's button (each form is named after its action and endpoint). */
const action = (page: Page, form: string, button: string): Locator =>
  page.getByRole('form', { name: form }).getByRole('button', { name: button });

/** An endpoint made through the API, with a receiver that verifies its secret; its messages all delivered. */
async function endpointWithMessages(gameId: string) {
  const receiver = new WebhookReceiver();
  receivers.push(receiver);
  const url = await receiver.start(0);
  const created = await ok(system, owner.token, {
    type: 'createWebhookEndpoint',
    gameId,
    url,
    eventTypes: ['game.paused', 'game.resumed'],
  });
  receiver.secret = created.secret!;
  await ok(system, owner.token, { type: 'sendTestWebhook', webhookEndpointId: created.id });
  await ok(system, owner.token, { type: 'updateGame', gameId, status: 'paused' });
  await ok(system, owner.token, { type: 'updateGame', gameId, status: 'active' });
  await ok(system, owner.token, { type: 'sendTestWebhook', webhookEndpointId: created.id });
  await until('four messages received', async () => receiver.received.length === 4, 20_000);
  await until('four delivered', async () => {
    const [row] = await sql<{ n: number }>(
      system.databaseUrl!,
      `select count(*)::int as n from ledger.webhook_messages where endpoint_id = $1 and state = 'delivered'`,
      [created.id],
    );
    return row!.n === 4;
  });
  return { receiver, url, endpointId: created.id, secret: created.secret! };
}

/** The POST /graphql bodies the page sends from now on. */
function recordRequests(page: Page): string[] {
  const bodies: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/graphql') && request.method() === 'POST') bodies.push(request.postData() ?? '');
  });
  return bodies;
}

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('at %s px', (width, viewport) => {
  const shot = (name: string) => (width === '390' ? `phone-${name}` : name);

  test('deliveries filtered by state, type and time, found by webhook-id; a sample payload per type', async () => {
    const w = await world(system, owner.token);
    const { receiver, url, endpointId } = await endpointWithMessages(w.gameId);
    // The first test message failed, as if its retries had run out.
    const firstTest = receiver.received.find((r) => (r.verified as { type: string }).type === 'webhook.test')!;
    await sql(system.databaseUrl!, `update ledger.webhook_messages set state = 'failed' where id = $1`, [firstTest.id]);
    const page = await browser.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    await page.getByRole('heading', { name: url }).waitFor(WAIT);
    const summaries = page.locator('details.delivery summary');
    await until('every delivery', async () => (await summaries.count()) === 4, 20_000);
    const filters = page.getByRole('search', { name: `Deliveries of ${url}` });
    const shown = page.getByTestId('deliveries-shown');

    const hash = () => new URL(page.url()).hash;
    const tab = `#/game/${w.gameId}/webhooks`;

    await filters.getByLabel('State').selectOption('failed');
    await filters.getByRole('button', { name: 'Show deliveries' }).click();
    await shown.filter({ hasText: '1 delivery matching failed shown, newest first.' }).waitFor(WAIT);
    await until('the failed one only', async () => (await summaries.count()) === 1, 20_000);
    expect(await summaries.first().innerText()).toMatch(/^failed webhook\.test /);
    // The filters are in the page's address; the focus stays on the form's button (the page neither moves nor scrolls).
    expect(hash()).toBe(`${tab}?endpoint=${endpointId}&state=failed`);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Show deliveries');

    await filters.getByLabel('State').selectOption('');
    await filters.getByLabel('Event type').selectOption('game.paused');
    await filters.getByRole('button', { name: 'Show deliveries' }).click();
    await shown.filter({ hasText: '1 delivery matching game.paused shown' }).waitFor(WAIT);
    expect(await summaries.first().innerText()).toMatch(/^delivered game\.paused /);
    expect(hash()).toBe(`${tab}?endpoint=${endpointId}&type=game.paused`);
    // A reload shows the same filters and the same delivery.
    const pausedRow = await summaries.first().innerText();
    await page.reload();
    await shown.filter({ hasText: '1 delivery matching game.paused shown' }).waitFor(WAIT);
    expect(await summaries.count()).toBe(1);
    expect(await summaries.first().innerText()).toBe(pausedRow);
    expect(await filters.getByLabel('Event type').inputValue()).toBe('game.paused');
    expect(await filters.getByLabel('State').inputValue()).toBe('');
    expect(await filters.getByRole('button', { name: 'Clear the filters' }).count()).toBe(1);
    await checkPage(page, shot('webhooks-filtered'));

    // A window that starts in an hour: nothing, and the page says which filters matched nothing.
    const inAnHour = new Date(Date.now() + 3_600_000);
    const local = (d: Date) =>
      `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}T${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    await filters.getByLabel('Event type').selectOption('');
    await filters.getByLabel('Since').fill(local(inAnHour));
    await filters.getByRole('button', { name: 'Show deliveries' }).click();
    await page
      .getByTestId('deliveries-none')
      .filter({ hasText: 'No delivery matches the filters (since' })
      .waitFor(WAIT);
    await filters.getByRole('button', { name: 'Clear the filters' }).click();
    await until('every delivery again', async () => (await summaries.count()) === 4, 20_000);
    expect(hash()).toBe(tab);

    // Back and Forward move between the filters, the form showing each.
    await page.goBack();
    await page
      .getByTestId('deliveries-none')
      .filter({ hasText: 'No delivery matches the filters (since' })
      .waitFor(WAIT);
    expect(await filters.getByLabel('Since').inputValue()).toBe(local(inAnHour));
    expect(await filters.getByLabel('Event type').inputValue()).toBe('');
    await page.goBack();
    await shown.filter({ hasText: '1 delivery matching game.paused shown' }).waitFor(WAIT);
    expect(await filters.getByLabel('Event type').inputValue()).toBe('game.paused');
    expect(await filters.getByLabel('Since').inputValue()).toBe('');
    await page.goForward();
    await page.getByTestId('deliveries-none').waitFor(WAIT);
    await page.goForward();
    await until('every delivery again', async () => (await summaries.count()) === 4, 20_000);
    expect(await filters.getByLabel('Since').inputValue()).toBe('');
    expect(await filters.getByRole('button', { name: 'Clear the filters' }).count()).toBe(0);

    // A malformed webhook-id is refused in the browser; nothing is sent.
    const requests = recordRequests(page);
    await filters.getByLabel('webhook-id').fill('3f2c9a1b');
    await filters.getByRole('button', { name: 'Show deliveries' }).click();
    await filters.getByRole('alert').filter({ hasText: 'the whole id your receiver logged' }).waitFor(WAIT);
    expect(await filters.getByLabel('webhook-id').getAttribute('aria-invalid')).toBe('true');
    expect(requests.filter((body) => body.includes('"webhookId"'))).toEqual([]);

    // The webhook-id a receiver logged (upper case, with spaces around) finds its delivery, opened.
    const paused = receiver.received.find((r) => (r.verified as { type: string }).type === 'game.paused')!;
    await filters.getByLabel('webhook-id').fill(`  ${paused.id.toUpperCase()} `);
    await filters.getByRole('button', { name: 'Show deliveries' }).click();
    await shown.filter({ hasText: `1 delivery matching webhook-id ${paused.id} shown` }).waitFor(WAIT);
    const found = page.locator('details.delivery');
    expect(await found.count()).toBe(1);
    expect(await found.first().getAttribute('open')).not.toBeNull();
    expect(await found.first().locator('pre.payload').innerText()).toBe(paused.body);
    await found
      .first()
      .getByRole('table', { name: `Attempts of ${paused.id}` })
      .getByRole('cell', { name: 'answered 200' })
      .waitFor(WAIT);
    await checkPage(page, shot('webhooks-found-by-id'));
    expect(hash()).toBe(`${tab}?endpoint=${endpointId}&webhook-id=${paused.id}`);

    // A pasted address with filters, opened from another page, shows them: the failed test message of the last hour.
    const hourAgo = new Date(Date.now() - 3_600_000);
    await goTo(page, '#/');
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor(WAIT);
    await goTo(
      page,
      `${tab}?endpoint=${endpointId}&state=failed&type=webhook.test&from=${encodeURIComponent(hourAgo.toISOString())}`,
    );
    await shown.filter({ hasText: '1 delivery matching failed · webhook.test · since' }).waitFor(WAIT);
    expect(await summaries.count()).toBe(1);
    expect(await summaries.first().innerText()).toMatch(/^failed webhook\.test /);
    expect(await filters.getByLabel('State').inputValue()).toBe('failed');
    expect(await filters.getByLabel('Event type').inputValue()).toBe('webhook.test');
    expect(await filters.getByLabel('Since').inputValue()).toBe(local(hourAgo));
    expect(await filters.getByLabel('webhook-id').inputValue()).toBe('');
    await checkPage(page, shot('webhooks-filtered-link'));

    // The samples: one per type; the test message's is shaped as the one the receiver got.
    await page.getByText('Sample payloads').click();
    for (const type of [
      'decision.accepted',
      'decision.rejected',
      'game.budget_low',
      'game.budget_exhausted',
      'game.paused',
      'game.resumed',
      'webhook.test',
    ]) {
      await page.getByTestId(`sample-${type}`).waitFor(WAIT);
    }
    const sample = page.getByTestId('sample-webhook.test');
    await sample.locator('summary').click();
    const body = JSON.parse(await sample.locator('pre').innerText()) as { type: string; data: object };
    const real = JSON.parse(firstTest.body) as { type: string; timestamp: string; data: object };
    expect(body.type).toBe('webhook.test');
    expect(Object.keys(body)).toEqual(Object.keys(real));
    expect(Object.keys(body.data)).toEqual(Object.keys(real.data));
    const decision = page.getByTestId('sample-decision.rejected');
    await decision.locator('summary').click();
    expect(JSON.parse(await decision.locator('pre').innerText()).data.reason).toBe('daily_player_cap');
    await checkPage(page, shot('webhooks-samples'));
    expect(endpointId).toBeTruthy();
  }, 120_000);

  test('"Recover failed since…" sends the failures of the window again, each with its webhook-id', async () => {
    const w = await world(system, owner.token);
    const { receiver, url, endpointId } = await endpointWithMessages(w.gameId);
    // Every message failed; the oldest one three days ago, before the window.
    const failed = await sql<{ id: string }>(
      system.databaseUrl!,
      `update ledger.webhook_messages set state = 'failed' where endpoint_id = $1 returning id::text`,
      [endpointId],
    );
    const oldest = receiver.received[0]!.id;
    await sql(
      system.databaseUrl!,
      `update ledger.webhook_messages set created_at = now() - interval '3 days' where id = $1`,
      [oldest],
    );
    const page = await browser.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    await page.getByRole('heading', { name: url }).waitFor(WAIT);
    await until(
      'four failed deliveries',
      async () =>
        (await page
          .locator('details.delivery summary')
          .filter({ hasText: /^failed / })
          .count()) === 4,
      20_000,
    );
    receiver.received = [];
    await page.getByRole('button', { name: 'Recover failed since…' }).click();
    const form = page.getByRole('form', { name: `Recover the failed deliveries of ${url}` });
    // Offered: a day ago.
    const offered = new Date(await form.getByLabel('Failed deliveries written since').inputValue()).getTime();
    expect(Math.abs(offered - (Date.now() - 86_400_000))).toBeLessThan(5 * 60_000);
    await checkPage(page, shot('webhooks-recover'));
    // Before anything is sent, the confirmation says how many failed deliveries go again (read as one page of ids).
    const requests = recordRequests(page);
    await form.getByRole('button', { name: 'Send the failed deliveries again' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send 3 failed deliveries again?' });
    await dialog.waitFor(WAIT);
    expect(await dialog.innerText()).toContain(`The 3 failed deliveries of ${url} written since `);
    expect(requests.some((body) => body.includes('ConsoleWebhookDeliveryIds'))).toBe(true);
    expect(requests.some((body) => body.includes('recoverWebhookDeliveries'))).toBe(false);
    await checkPage(page, shot('webhooks-recover-confirm'));
    await dialog.getByRole('button', { name: 'Send them again' }).click();
    await form.getByRole('status').filter({ hasText: 'done' }).waitFor(WAIT);
    const expected = failed.map((f) => f.id).filter((id) => id !== oldest);
    await until(
      'the three recent failures received again',
      async () => expected.every((id) => receiver.received.some((r) => r.id === id)),
      20_000,
    );
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set(expected));
    expect(receiver.rejectedSignatures).toBe(0);
    // The list shows the window recovered: its three deliveries, each with a second attempt.
    await page.getByTestId('deliveries-shown').filter({ hasText: '3 deliveries matching since' }).waitFor(WAIT);
    await until(
      'delivered again',
      async () =>
        (await page
          .locator('details.delivery summary')
          .filter({ hasText: /^delivered .* 2 attempts/ })
          .count()) === 3,
      20_000,
    );
    expect(new URL(page.url()).hash).toMatch(new RegExp(`^#/game/${w.gameId}/webhooks\\?endpoint=${endpointId}&from=`));
    // Nothing failed is left in the window: the form says so, and nothing is sent.
    requests.length = 0;
    await form.getByRole('button', { name: 'Send the failed deliveries again' }).click();
    await form
      .getByRole('alert')
      .filter({ hasText: 'No failed delivery of this endpoint was written since' })
      .waitFor(WAIT);
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(requests.some((body) => body.includes('recoverWebhookDeliveries'))).toBe(false);
    const [left] = await sql<{ state: string }>(
      system.databaseUrl!,
      `select state from ledger.webhook_messages where id = $1`,
      [oldest],
    );
    expect(left!.state).toBe('failed');
  }, 120_000);

  test('a rotation says until when the previous secret signs; a receiver still holding it verifies', async () => {
    const w = await world(system, owner.token);
    const { receiver, url, secret } = await endpointWithMessages(w.gameId);
    const page = await browser.signedIn(owner, viewport);
    await openTab(page, w.gameId);
    await page.getByRole('heading', { name: url }).waitFor(WAIT);
    await action(page, `Rotate the secret of ${url}`, 'Rotate secret').click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await dialog.waitFor(WAIT);
    expect(await dialog.innerText()).toContain('and with the previous one as well until');
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await dialog.waitFor({ state: 'hidden', ...WAIT });
    const rotated = await page
      .getByRole('status', { name: `New webhook secret of ${url}` })
      .getByTestId('webhook-secret')
      .innerText();
    expect(rotated).not.toBe(secret);
    const note = page.getByTestId('previous-secret');
    await note.waitFor(WAIT);
    expect(await note.innerText()).toMatch(
      /^The previous signing secret still signs until .+: until then every delivery carries two signatures/,
    );
    await checkPage(page, shot('webhooks-rotation-overlap'));
    // The receiver still holds the previous secret: the next message verifies all the same, signed twice.
    receiver.secret = secret;
    receiver.received = [];
    await action(page, `Send a test message to ${url}`, 'Send test').click();
    await until('the test received', async () => receiver.received.length === 1, 20_000);
    expect(receiver.received[0]!.signature.split(' ')).toHaveLength(2);
    expect(receiver.rejectedSignatures).toBe(0);

    // Rotated again with no overlap: one secret signs, and the page no longer speaks of a previous one.
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page
      .getByRole('form', { name: `Rotate the secret of ${url}` })
      .getByLabel('How long the previous secret keeps signing')
      .selectOption('no overlap');
    await action(page, `Rotate the secret of ${url}`, 'Rotate secret').click();
    await dialog.waitFor(WAIT);
    expect(await dialog.innerText()).toContain('signed with the new secret only from now on');
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await note.waitFor({ state: 'detached', ...WAIT });
  }, 120_000);
});
