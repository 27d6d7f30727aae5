import { useEffect, useId, useRef, useState } from 'react';
import {
  type ActionResult,
  client,
  failureOf,
  type ServerFailure,
  WEBHOOK_DELIVERIES,
  WEBHOOK_ENDPOINTS,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../api.ts';
import { ActionForm, CopyButton, FailureAlert, Reveal, Section, TableBox } from '../../components.tsx';
import { usePoll } from '../../poll.ts';

const EVENT_TYPES = [
  'decision.accepted',
  'decision.rejected',
  'game.budget_low',
  'game.budget_exhausted',
  'game.paused',
  'game.resumed',
];

// What a refused URL needs, whatever the refusal (no scheme, http:// or a private address where not allowed).
const URL_RULE =
  'Enter the receiver’s whole URL, scheme included: https://… to a public address (http:// and private ' +
  'addresses only where this service allows them, as on the development default).';

const time = (value: string | null) => (value ? new Date(value).toLocaleString() : '');

const VERIFY_SNIPPETS: Array<[string, string]> = [
  [
    'TypeScript (npm i standardwebhooks)',
    `import { Webhook } from 'standardwebhooks';
// rawBody: the request body as received (a string or Buffer), before any JSON parsing.
const message = new Webhook(process.env.WEBHOOK_SECRET!).verify(rawBody, {
  'webhook-id': req.headers['webhook-id'],
  'webhook-timestamp': req.headers['webhook-timestamp'],
  'webhook-signature': req.headers['webhook-signature'],
});`,
  ],
  [
    'Python (pip install standardwebhooks)',
    `from standardwebhooks.webhooks import Webhook
# raw_body: the request body as received, before any JSON parsing.
message = Webhook(os.environ["WEBHOOK_SECRET"]).verify(raw_body, request.headers)`,
  ],
  [
    'Go (github.com/standard-webhooks/standard-webhooks/libraries/go)',
    `wh, err := standardwebhooks.NewWebhook(os.Getenv("WEBHOOK_SECRET"))
// rawBody: the request body as received, before any JSON parsing.
err = wh.Verify(rawBody, r.Header)`,
  ],
];

async function endpointsOf(gameId: string) {
  const result = await client.query<{ webhookEndpoints: WebhookEndpoint[] | null }>({
    query: WEBHOOK_ENDPOINTS,
    variables: { gameId },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  return result.data?.webhookEndpoints ?? [];
}

const DELIVERIES_PAGE = 20;

/** One page of an endpoint's deliveries, newest first, and the cursor of the next (older) one. */
async function deliveriesOf(id: string, after?: string) {
  const result = await client.query<{
    webhookDeliveries: { deliveries: WebhookDelivery[]; nextCursor: string | null } | null;
  }>({ query: WEBHOOK_DELIVERIES, variables: { id, first: DELIVERIES_PAGE, after }, fetchPolicy: 'network-only' });
  if (result.error) throw result.error;
  return {
    deliveries: result.data?.webhookDeliveries?.deliveries ?? [],
    nextCursor: result.data?.webhookDeliveries?.nextCursor ?? null,
  };
}

/** A signing secret shown once: the endpoint's id and URL, and whether it is a new endpoint's or a rotated one. */
interface ShownSecret {
  result: ActionResult;
  url: string;
  rotated: boolean;
}

/** The one-time banner of a new or rotated secret, naming its endpoint. */
function SecretBanner({
  shown,
  hide,
  focusRef,
}: {
  shown: ShownSecret;
  hide: () => void;
  focusRef?: React.Ref<HTMLDivElement> | undefined;
}) {
  const what = shown.rotated ? 'New signing secret' : 'Signing secret';
  return (
    <div
      className="issued"
      role="status"
      tabIndex={-1}
      ref={focusRef}
      aria-label={`New webhook secret of ${shown.url}`}
    >
      <p>
        {what} of <code className="name">{shown.url}</code>, shown this once:{' '}
        <code data-testid="webhook-secret">{shown.result.secret}</code>
      </p>
      <CopyButton value={shown.result.secret ?? ''} label="Copy secret" />{' '}
      <button type="button" className="secondary" onClick={hide}>
        Done, hide it
      </button>
    </div>
  );
}

/** A payload as indented JSON, for reading (the raw bytes above stay what the signature covers). */
function formatted(payload: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return undefined;
  }
}

/** "Payload formatted": the payload indented, shown on demand (a button, as the delivery is itself a disclosure). */
function FormattedPayload({ payload }: { payload: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const text = formatted(payload);
  if (!text) return null;
  return (
    <>
      <button
        type="button"
        className="link-button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen(!open)}
      >
        Payload formatted
      </button>
      <pre id={id} hidden={!open} data-testid="payload-formatted">
        {text}
      </pre>
    </>
  );
}

/**
 * How far a delivery got: its attempts, or, before the first one, why it waits (the endpoint disabled: until it is
 * enabled; else its turn, with when it is due).
 */
export function attemptsText(delivery: WebhookDelivery, endpoint: WebhookEndpoint): string {
  const count = delivery.attempts.length;
  if (count > 0) return `${count} ${count === 1 ? 'attempt' : 'attempts'}`;
  if (delivery.state !== 'pending') return 'no attempt';
  if (!endpoint.enabled) return 'not sent yet: the endpoint is disabled, it is sent once enabled';
  return `not sent yet: waiting for its turn${delivery.nextAttemptAt ? `, due ${time(delivery.nextAttemptAt)}` : ''}`;
}

/** An endpoint's recent deliveries with their attempts, the payload as the receiver got it, and redeliver. */
function Deliveries({ endpoint, write }: { endpoint: WebhookEndpoint; write: boolean }) {
  const [nudge, setNudge] = useState(0);
  const page = usePoll(() => deliveriesOf(endpoint.id), `${endpoint.id}/${nudge}`, 3000);
  // Older pages loaded with "Older deliveries" (the newest page keeps being read every 3 s above them).
  const [older, setOlder] = useState<{ deliveries: WebhookDelivery[]; nextCursor: string | null } | undefined>();
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderFailure, setOlderFailure] = useState<ServerFailure | undefined>();
  const newest = page.value?.deliveries ?? [];
  const seen = new Set(newest.map((d) => d.id));
  const shown = [...newest, ...(older?.deliveries ?? []).filter((d) => !seen.has(d.id))];
  const nextCursor = older ? older.nextCursor : (page.value?.nextCursor ?? null);
  const loadOlder = async () => {
    if (!nextCursor) return;
    setLoadingOlder(true);
    try {
      const next = await deliveriesOf(endpoint.id, nextCursor);
      setOlder((before) => ({
        deliveries: [...(before?.deliveries ?? []), ...next.deliveries],
        nextCursor: next.nextCursor,
      }));
      setOlderFailure(undefined);
    } catch (failure) {
      setOlderFailure(failureOf(failure));
    } finally {
      setLoadingOlder(false);
    }
  };
  return (
    <>
      {page.error && <FailureAlert failure={page.error} />}
      {page.value && shown.length === 0 && <p className="empty">No deliveries yet: send a test message.</p>}
      {shown.length > 0 && (
        <p className="hint" data-testid="deliveries-shown">
          {shown.length} {shown.length === 1 ? 'delivery' : 'deliveries'} shown, newest first
          {nextCursor ? '; older ones follow' : ''}.
        </p>
      )}
      {shown.map((delivery) => {
        const last = delivery.attempts.at(-1);
        return (
          <details key={delivery.id} className="delivery">
            <summary>
              <span className={`state state-${delivery.state}`}>{delivery.state}</span> {delivery.eventType} ·{' '}
              {time(delivery.createdAt)} · {attemptsText(delivery, endpoint)}
              {last ? ` · last: ${last.statusCode ?? last.error} in ${last.latencyMs} ms` : ''}
            </summary>
            <p>
              webhook-id <code>{delivery.id}</code>
              {delivery.nextAttemptAt ? ` · next attempt ${time(delivery.nextAttemptAt)}` : ''}
            </p>
            <p>Payload as the receiver got it:</p>
            <pre className="payload">{delivery.payload}</pre>
            <FormattedPayload payload={delivery.payload} />
            {delivery.attempts.length > 0 && (
              <TableBox label="Attempts">
                <table className="stack" aria-label={`Attempts of ${delivery.id}`}>
                  <thead>
                    <tr>
                      <th scope="col">Status</th>
                      <th scope="col">Attempt</th>
                      <th scope="col">Started</th>
                      <th scope="col">Latency</th>
                      <th scope="col">Response</th>
                    </tr>
                  </thead>
                  <tbody>
                    {delivery.attempts.map((a) => (
                      <tr key={a.attempt}>
                        <td className="lead">{a.statusCode ?? a.error}</td>
                        <td data-label="Attempt">{a.attempt}</td>
                        <td data-label="Started">{time(a.startedAt)}</td>
                        <td data-label="Latency">{a.latencyMs} ms</td>
                        <td data-label="Response">
                          <code>{a.responseExcerpt}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
            )}
            {write && (
              <ActionForm
                compact
                action="redeliverWebhook"
                title={`Redeliver ${delivery.id}`}
                submitLabel="Redeliver"
                fixed={{ webhookDeliveryId: delivery.id }}
                fields={[]}
                onDone={() => setNudge((n) => n + 1)}
              />
            )}
          </details>
        );
      })}
      {olderFailure && <FailureAlert failure={olderFailure} />}
      {nextCursor && (
        <button type="button" className="secondary" disabled={loadingOlder} onClick={() => void loadOlder()}>
          Older deliveries
        </button>
      )}
    </>
  );
}

/** A game's webhook endpoints: create, test, rotate, disable, delete; each endpoint's deliveries. */
export function WebhooksSection({ gameId, write }: { gameId: string; write: boolean }) {
  const [nudge, setNudge] = useState(0);
  // Every secret shown and not hidden yet, newest first: a second endpoint (or a rotation) never replaces the banner
  // of a first secret nobody has copied yet.
  const [secrets, setSecrets] = useState<ShownSecret[]>([]);
  const endpoints = usePoll(() => endpointsOf(gameId), `${gameId}/${nudge}`, 5000);
  const reload = () => setNudge((n) => n + 1);
  const showSecret = (shown: ShownSecret) =>
    setSecrets((all) => [shown, ...all.filter((s) => s.result.secret !== shown.result.secret)]);
  const hideSecrets = (endpointId: string) => setSecrets((all) => all.filter((s) => s.result.id !== endpointId));
  const bannerRef = useRef<HTMLDivElement>(null);
  const newest = secrets[0]?.result.secret;
  // A new secret's banner takes the focus: it is what the action opened.
  useEffect(() => {
    if (newest) bannerRef.current?.focus();
  }, [newest]);
  return (
    <Section title="Webhooks">
      <p className="hint">
        Your backend hears about decisions and budget changes: each message is POSTed to the endpoint, signed per the
        Standard Webhooks specification, and retried for 24 hours until it answers 2xx within 15 s (the same webhook-id
        every time).
      </p>
      {secrets.length > 1 && (
        <p className="banner banner-warn" data-testid="webhook-secrets-unhidden">
          {secrets.length} signing secrets are shown below and not hidden yet: copy each one before you hide it, it is
          not shown again.
        </p>
      )}
      {secrets.map((shown, index) => (
        <SecretBanner
          key={shown.result.secret}
          shown={shown}
          focusRef={index === 0 ? bannerRef : undefined}
          hide={() => setSecrets((all) => all.filter((s) => s !== shown))}
        />
      ))}
      {endpoints.error && <FailureAlert failure={endpoints.error} />}
      {endpoints.value && endpoints.value.length === 0 && <p className="empty">No webhook endpoints yet.</p>}
      {(endpoints.value ?? []).map((endpoint) => (
        <div key={endpoint.id} className="webhook-endpoint">
          <h3>
            <code>{endpoint.url}</code>
          </h3>
          <p>
            {endpoint.eventTypes.join(', ')} · {endpoint.enabled ? 'enabled' : `disabled (${endpoint.disabledReason})`}
          </p>
          {endpoint.disabledReason === 'failing' && (
            <p className="banner banner-warn" role="alert">
              Disabled because every delivery failed since {time(endpoint.failingSince)}. Fix the receiver, then enable
              it: its pending deliveries resume.
            </p>
          )}
          {endpoint.enabled && endpoint.failingSince && (
            <p className="banner banner-warn">Every delivery has failed since {time(endpoint.failingSince)}.</p>
          )}
          {write && (
            <div className="webhook-actions">
              <ActionForm
                compact
                action="sendTestWebhook"
                title={`Send a test message to ${endpoint.url}`}
                submitLabel="Send test"
                fixed={{ webhookEndpointId: endpoint.id }}
                fields={[]}
                onDone={reload}
              />{' '}
              <ActionForm
                compact
                action="updateWebhookEndpoint"
                title={`${endpoint.enabled ? 'Disable' : 'Enable'} ${endpoint.url}`}
                submitLabel={endpoint.enabled ? 'Disable' : 'Enable'}
                fixed={{ webhookEndpointId: endpoint.id, enabled: !endpoint.enabled }}
                fields={[]}
                onDone={reload}
              />{' '}
              <Reveal label="Edit URL and event types">
                <ActionForm
                  action="updateWebhookEndpoint"
                  title={`Edit ${endpoint.url}`}
                  submitLabel="Save endpoint"
                  fixed={{ webhookEndpointId: endpoint.id }}
                  fields={[
                    {
                      name: 'url',
                      label: 'URL',
                      kind: 'text',
                      initial: endpoint.url,
                      rule: URL_RULE,
                    },
                    ...EVENT_TYPES.map((type) => ({
                      name: type,
                      label: type,
                      kind: 'checkbox' as const,
                      initial: endpoint.eventTypes.includes(type),
                    })),
                  ]}
                  transform={async (input) => ({
                    webhookEndpointId: input.webhookEndpointId,
                    url: input.url,
                    eventTypes: EVENT_TYPES.filter((type) => input[type] === true),
                  })}
                  onDone={reload}
                />
              </Reveal>{' '}
              <ActionForm
                compact
                action="rotateWebhookSecret"
                title={`Rotate the secret of ${endpoint.url}`}
                submitLabel="Rotate secret"
                fixed={{ webhookEndpointId: endpoint.id }}
                fields={[]}
                danger={() => ({
                  title: 'Rotate the signing secret?',
                  body: 'Messages are signed with the new secret from now on; the old one stops verifying.',
                  confirmLabel: 'Rotate secret',
                })}
                onDone={(result) => {
                  // The old secret's banner (if still shown) is of no use any more: the new one replaces it.
                  hideSecrets(endpoint.id);
                  showSecret({ result, url: endpoint.url, rotated: true });
                }}
              />{' '}
              <ActionForm
                compact
                action="deleteWebhookEndpoint"
                title={`Delete ${endpoint.url}`}
                submitLabel="Delete"
                submitClass="danger"
                fixed={{ webhookEndpointId: endpoint.id }}
                fields={[]}
                danger={() => ({
                  title: `Delete the endpoint ${endpoint.url}?`,
                  body: 'No more messages are sent to it, and its deliveries are deleted with it.',
                  confirmLabel: 'Delete endpoint',
                })}
                onDone={() => {
                  hideSecrets(endpoint.id);
                  reload();
                }}
              />
            </div>
          )}
          <Deliveries endpoint={endpoint} write={write} />
        </div>
      ))}
      {write && (
        <Reveal label="New webhook endpoint">
          <ActionForm
            action="createWebhookEndpoint"
            title="New webhook endpoint"
            submitLabel="Create endpoint"
            fixed={{ gameId }}
            fields={[
              {
                name: 'url',
                label: 'URL',
                kind: 'text',
                rule: URL_RULE,
              },
              ...EVENT_TYPES.map((type) => ({ name: type, label: type, kind: 'checkbox' as const, initial: true })),
            ]}
            transform={async (input) => ({
              gameId: input.gameId,
              url: input.url,
              eventTypes: EVENT_TYPES.filter((type) => input[type] === true),
            })}
            onDone={(result, input) => {
              showSecret({ result, url: String(input.url), rotated: false });
              reload();
            }}
          />
        </Reveal>
      )}
      <details className="verify">
        <summary>Verify a signature</summary>
        {VERIFY_SNIPPETS.map(([title, code]) => (
          <div key={title}>
            <p>{title}</p>
            <pre>{code}</pre>
            <CopyButton value={code} label={`Copy ${title.split(' ')[0]}`} />
          </div>
        ))}
      </details>
    </Section>
  );
}
