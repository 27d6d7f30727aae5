import { useEffect, useRef, useState } from 'react';
import { type ActionResult, client, WEBHOOK_ENDPOINTS, type WebhookEndpoint } from '../../api.ts';
import { ActionForm, CopyButton, FailureAlert, Reveal, Section } from '../../components.tsx';
import { usePoll } from '../../poll.ts';
import { Deliveries } from './WebhookDeliveries.tsx';
import type { DeliveriesFilter } from './webhook-filter.ts';
import { SAMPLE_DATA, SAMPLE_WHEN, samplePayload } from './webhook-samples.ts';

const EVENT_TYPES = [
  'decision.accepted',
  'decision.rejected',
  'game.budget_low',
  'game.budget_exhausted',
  'game.paused',
  'game.resumed',
];

// rotateWebhookSecret's overlapSeconds (CONTRACT section 11.2), as the rotate form offers them; the first is the default.
const OVERLAPS: Record<string, number> = {
  'overlap 1 day': 86_400,
  'overlap 1 hour': 3_600,
  'overlap 7 days': 604_800,
  'no overlap': 0,
};
const OVERLAP_DEFAULT = 'overlap 1 day';

/** What a rotation with this overlap does, for its confirmation. */
export function overlapSentence(seconds: number): string {
  if (seconds === 0) {
    return 'Messages are signed with the new secret only from now on: a receiver still holding the old one refuses them.';
  }
  const until = new Date(Date.now() + seconds * 1000).toLocaleString();
  return (
    `Messages are signed with the new secret from now on, and with the previous one as well until ${until}: ` +
    'update your receiver before then.'
  );
}

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

/**
 * A game's webhook endpoints: create, test, rotate, disable, delete; each endpoint's deliveries, one endpoint's
 * filtered as the address says (`deliveries`, from the address's query).
 */
export function WebhooksSection({
  gameId,
  write,
  deliveries,
}: {
  gameId: string;
  write: boolean;
  deliveries: DeliveriesFilter;
}) {
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
          {endpoint.previousSecretExpiresAt && (
            <p className="banner" data-testid="previous-secret">
              The previous signing secret still signs until {time(endpoint.previousSecretExpiresAt)}: until then every
              delivery carries two signatures, one with each secret, so your receiver verifies with either. Switch it to
              the new secret before then.
            </p>
          )}
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
                fields={[
                  {
                    name: 'overlap',
                    label: 'How long the previous secret keeps signing',
                    kind: 'select',
                    options: Object.keys(OVERLAPS),
                    initial: OVERLAP_DEFAULT,
                  },
                ]}
                transform={async (input) => ({
                  webhookEndpointId: input.webhookEndpointId,
                  overlapSeconds: OVERLAPS[String(input.overlap)] ?? 86_400,
                })}
                danger={(input) => ({
                  title: 'Rotate the signing secret?',
                  body: overlapSentence(OVERLAPS[String(input.overlap)] ?? 86_400),
                  confirmLabel: 'Rotate secret',
                })}
                onDone={(result) => {
                  // The old secret's banner (if still shown) is of no use any more: the new one replaces it.
                  hideSecrets(endpoint.id);
                  showSecret({ result, url: endpoint.url, rotated: true });
                  reload();
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
          <Deliveries
            gameId={gameId}
            endpoint={endpoint}
            write={write}
            filter={deliveries.endpointId === endpoint.id ? deliveries.filter : {}}
          />
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
        <summary>Sample payloads</summary>
        <p>
          What each message type’s body looks like (made-up ids and figures; the fields are the service’s, see
          docs/webhooks.md). Each is POSTed with the headers webhook-id, webhook-timestamp and webhook-signature.
        </p>
        {Object.keys(SAMPLE_DATA).map((type) => (
          <details key={type} className="sample" data-testid={`sample-${type}`}>
            <summary>{type}</summary>
            <p>{SAMPLE_WHEN[type]}</p>
            <pre>{samplePayload(type)}</pre>
            <CopyButton value={samplePayload(type)} label={`Copy the ${type} sample`} />
          </details>
        ))}
      </details>
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
