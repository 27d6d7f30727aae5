import { cloneElement, type FormEvent, type ReactElement, useEffect, useId, useState } from 'react';
import { type DangerSpec, instantOf, localInputValue, type Problem } from '../../action-form.tsx';
import {
  client,
  failureOf,
  type ServerFailure,
  WEBHOOK_DELIVERIES,
  WEBHOOK_DELIVERY_IDS,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../api.ts';
import { ActionForm, FailureAlert, Reveal, TableBox } from '../../components.tsx';
import { sentenceOf } from '../../errors.ts';
import { usePoll } from '../../poll.ts';
import {
  DELIVERY_STATES,
  DELIVERY_TYPES,
  deliveriesAddress,
  UUID,
  type WebhookDeliveryFilter,
} from './webhook-filter.ts';

const time = (value: string | null | undefined) => (value ? new Date(value).toLocaleString() : '');

const DELIVERIES_PAGE = 20;
/** The most deliveries one page holds (webhookDeliveries' `first`): how far "Recover failed since…" counts. */
const COUNT_PAGE = 100;

/** One page of an endpoint's deliveries, newest first, and the cursor of the next (older) one. */
async function deliveriesOf(id: string, filter: WebhookDeliveryFilter, after?: string) {
  const result = await client.query<{
    webhookDeliveries: { deliveries: WebhookDelivery[]; nextCursor: string | null } | null;
  }>({
    query: WEBHOOK_DELIVERIES,
    variables: { id, first: DELIVERIES_PAGE, after, filter },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  return {
    filter,
    deliveries: result.data?.webhookDeliveries?.deliveries ?? [],
    nextCursor: result.data?.webhookDeliveries?.nextCursor ?? null,
  };
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

/** The filters in words, for the line above the list ("failed · decision.rejected · since …"). */
export function filterWords(filter: WebhookDeliveryFilter): string {
  return [
    filter.webhookId ? `webhook-id ${filter.webhookId}` : '',
    filter.state ?? '',
    filter.eventType ?? '',
    filter.from ? `since ${time(filter.from)}` : '',
    filter.to ? `before ${time(filter.to)}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

type Draft = { state: string; eventType: string; from: string; to: string; webhookId: string };

/** The filter form as a filter fills it (the instants in the browser's time zone, to the minute). */
const draftOf = (filter: WebhookDeliveryFilter): Draft => ({
  state: filter.state ?? '',
  eventType: filter.eventType ?? '',
  from: filter.from ? localInputValue(new Date(filter.from)) : '',
  to: filter.to ? localInputValue(new Date(filter.to)) : '',
  webhookId: filter.webhookId ?? '',
});

/** The draft of the filter form as a filter, or the field the browser refuses (nothing is sent then). */
function filterOf(draft: Draft): { filter: WebhookDeliveryFilter } | { field: keyof Draft; sentence: string } {
  const filter: WebhookDeliveryFilter = {};
  const webhookId = draft.webhookId.trim();
  if (webhookId) {
    if (!UUID.test(webhookId)) {
      return {
        field: 'webhookId',
        sentence: 'A webhook-id is the whole id your receiver logged, like 3f2c9a1b-7e6d-4c5b-a4f3-e2d1c0b9a8f7.',
      };
    }
    filter.webhookId = webhookId.toLowerCase();
  }
  if (draft.state) filter.state = draft.state as WebhookDeliveryFilter['state'];
  if (draft.eventType) filter.eventType = draft.eventType;
  for (const name of ['from', 'to'] as const) {
    if (!draft[name]) continue;
    const instant = instantOf(draft[name]);
    if (!instant) return { field: name, sentence: 'Enter a date and a time.' };
    filter[name] = instant;
  }
  if (filter.from && filter.to && filter.to <= filter.from) {
    return { field: 'to', sentence: '“Before” must come after “Since”.' };
  }
  return { filter };
}

/**
 * The filter form of one endpoint's deliveries: state, type, a window and a webhook-id. It shows the filters in force
 * (the address's), again whenever they change (Back, Forward, a link, "Clear the filters").
 */
function DeliveryFilters({
  endpoint,
  filter,
  apply,
}: {
  endpoint: WebhookEndpoint;
  filter: WebhookDeliveryFilter;
  apply: (filter: WebhookDeliveryFilter) => void;
}) {
  const id = useId();
  const [draft, setDraft] = useState<Draft>(() => draftOf(filter));
  const [problem, setProblem] = useState<{ field: keyof Draft; sentence: string } | undefined>();
  const filterKey = JSON.stringify(filter);
  // biome-ignore lint/correctness/useExhaustiveDependencies: filterKey stands for the filter in force
  useEffect(() => {
    setDraft(draftOf(filter));
    setProblem(undefined);
  }, [filterKey]);
  const set = (name: keyof Draft) => (event: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [name]: event.target.value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const built = filterOf(draft);
    if ('field' in built) {
      setProblem(built);
      return;
    }
    setProblem(undefined);
    apply(built.filter);
  };
  const clear = () => {
    setDraft(draftOf({}));
    setProblem(undefined);
    apply({});
  };
  const field = (name: keyof Draft, label: string, control: ReactElement<Record<string, unknown>>) => {
    const invalid = problem?.field === name;
    return (
      <div className="field delivery-filter">
        <label htmlFor={`${id}-${name}`}>{label}</label>
        {cloneElement(control, {
          id: `${id}-${name}`,
          value: draft[name],
          onChange: set(name),
          'aria-invalid': invalid || undefined,
          'aria-describedby': invalid ? `${id}-problem` : undefined,
        })}
        {invalid && (
          <p className="error" id={`${id}-problem`} role="alert">
            {problem.sentence}
          </p>
        )}
      </div>
    );
  };
  return (
    <search aria-label={`Deliveries of ${endpoint.url}`}>
      <form className="filters delivery-filters" onSubmit={submit}>
        {field(
          'webhookId',
          'webhook-id',
          <input type="search" autoComplete="off" spellCheck={false} placeholder="the id your receiver logged" />,
        )}
        {field(
          'state',
          'State',
          <select>
            <option value="">any state</option>
            {DELIVERY_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>,
        )}
        {field(
          'eventType',
          'Event type',
          <select>
            <option value="">any type</option>
            {DELIVERY_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>,
        )}
        {field('from', 'Since', <input type="datetime-local" />)}
        {field('to', 'Before', <input type="datetime-local" />)}
        <button type="submit">Show deliveries</button>
        {filterKey !== '{}' && (
          <button type="button" className="secondary" onClick={clear}>
            Clear the filters
          </button>
        )}
      </form>
    </search>
  );
}

/**
 * How many failed deliveries of an endpoint were written since an instant: one page of their ids (the API has no
 * count), so `more` says that page was full and more follow.
 */
async function failedSince(endpointId: string, since: string): Promise<{ count: number; more: boolean }> {
  const result = await client.query<{
    webhookDeliveries: { deliveries: Array<{ id: string }>; nextCursor: string | null } | null;
  }>({
    query: WEBHOOK_DELIVERY_IDS,
    variables: { id: endpointId, first: COUNT_PAGE, filter: { state: 'failed', from: since } },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  const page = result.data?.webhookDeliveries;
  return { count: page?.deliveries.length ?? 0, more: Boolean(page?.nextCursor) };
}

/**
 * What "Recover failed since…" asks before it sends anything: how many failed deliveries it sends again (exactly, or
 * "at least" a full page of them), or, when there is none, a sentence at the field and nothing sent.
 */
export function recoverQuestion(
  url: string,
  since: string,
  found: { count: number; more: boolean },
): DangerSpec | Problem {
  const { count, more } = found;
  if (count === 0) {
    return {
      field: 'since',
      sentence: `No failed delivery of this endpoint was written since ${time(since)}: there is nothing to send again.`,
    };
  }
  const what = `${more ? 'at least ' : ''}${count} failed ${count === 1 ? 'delivery' : 'deliveries'}`;
  return {
    title: `Send ${what} again?`,
    body:
      `${more ? `At least ${count} failed deliveries` : count === 1 ? 'The one failed delivery' : `The ${count} failed deliveries`} ` +
      `of ${url} written since ${time(since)} ${count === 1 ? 'is' : 'are'} sent again, each with its own webhook-id ` +
      '(your receiver deduplicates on it), and retried for 24 hours.' +
      (more
        ? ` The console counts one page of ${COUNT_PAGE}; more than 10,000 are refused and nothing is sent: then choose a later time.`
        : ''),
    confirmLabel: `Send ${count === 1 ? 'it' : 'them'} again`,
    destructive: false,
  };
}

/**
 * An endpoint's deliveries with their attempts, the payload as the receiver got it, and redeliver; filtered by state,
 * type, time and webhook-id (the filters in force are the address's: `filter`; applying others changes the address),
 * and "Recover failed since…" for owners and admins.
 */
export function Deliveries({
  gameId,
  endpoint,
  write,
  filter,
}: {
  gameId: string;
  endpoint: WebhookEndpoint;
  write: boolean;
  filter: WebhookDeliveryFilter;
}) {
  const [nudge, setNudge] = useState(0);
  // "Recover failed since…" offers a day ago, fixed when the tab opens (the form keeps what is typed).
  const [dayAgo] = useState(() => localInputValue(new Date(Date.now() - 86_400_000)));
  const filterKey = JSON.stringify(filter);
  const filtered = filterKey !== '{}';
  const page = usePoll(() => deliveriesOf(endpoint.id, filter), `${endpoint.id}/${nudge}/${filterKey}`, 3000);
  // Older pages loaded with "Older deliveries" (the newest page keeps being read every 3 s above them), for the
  // filters they were read with: other filters start from their newest page again.
  const [older, setOlder] = useState<
    { key: string; deliveries: WebhookDelivery[]; nextCursor: string | null } | undefined
  >();
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderFailure, setOlderFailure] = useState<{ key: string; failure: ServerFailure } | undefined>();
  const olderShown = older?.key === filterKey ? older : undefined;
  // A page read for other filters (the poll's last value until the new read answers) is not shown.
  const current = page.value && JSON.stringify(page.value.filter) === filterKey ? page.value : undefined;
  const newest = current?.deliveries ?? [];
  const seen = new Set(newest.map((d) => d.id));
  const shown = [...newest, ...(olderShown?.deliveries ?? []).filter((d) => !seen.has(d.id))];
  const nextCursor = olderShown ? olderShown.nextCursor : (current?.nextCursor ?? null);
  // Filters are applied through the address (#/game/<id>/webhooks?endpoint=…&state=…): a new history entry, which
  // the router hands back as `filter`.
  const apply = (next: WebhookDeliveryFilter) => {
    window.location.hash = deliveriesAddress(gameId, endpoint.id, next);
  };
  const loadOlder = async () => {
    if (!nextCursor) return;
    const key = filterKey;
    setLoadingOlder(true);
    try {
      const next = await deliveriesOf(endpoint.id, filter, nextCursor);
      setOlder((before) => ({
        key,
        deliveries: [...(before?.key === key ? before.deliveries : []), ...next.deliveries],
        nextCursor: next.nextCursor,
      }));
      setOlderFailure(undefined);
    } catch (failure) {
      setOlderFailure({ key, failure: failureOf(failure) });
    } finally {
      setLoadingOlder(false);
    }
  };
  return (
    <>
      <DeliveryFilters endpoint={endpoint} filter={filter} apply={apply} />
      {write && (
        <Reveal label="Recover failed since…">
          <p className="hint">
            Every failed delivery of this endpoint written since then is sent again, each with its own webhook-id (your
            receiver deduplicates on it), and retried for 24 hours; at most 10,000 at once.
          </p>
          <ActionForm
            action="recoverWebhookDeliveries"
            title={`Recover the failed deliveries of ${endpoint.url}`}
            submitLabel="Send the failed deliveries again"
            fixed={{ webhookEndpointId: endpoint.id }}
            fields={[
              {
                name: 'since',
                label: 'Failed deliveries written since',
                kind: 'datetime',
                initial: dayAgo,
              },
            ]}
            danger={async (input) => {
              const since = String(input.since);
              try {
                return recoverQuestion(endpoint.url, since, await failedSince(endpoint.id, since));
              } catch (thrown) {
                const failure = failureOf(thrown);
                return {
                  field: 'since',
                  sentence: sentenceOf(failure, { action: 'recoverWebhookDeliveries' }),
                  code: failure.code,
                };
              }
            }}
            onDone={(_result, input) => apply({ from: String(input.since) })}
          />
        </Reveal>
      )}
      {page.error && <FailureAlert failure={page.error} />}
      {current && shown.length === 0 && (
        <p className="empty" data-testid="deliveries-none">
          {filtered
            ? `No delivery matches the filters (${filterWords(filter)}).`
            : 'No deliveries yet: send a test message.'}
        </p>
      )}
      {shown.length > 0 && (
        <p className="hint" data-testid="deliveries-shown" role="status">
          {shown.length} {shown.length === 1 ? 'delivery' : 'deliveries'}
          {filtered ? ` matching ${filterWords(filter)}` : ''} shown, newest first
          {nextCursor ? '; older ones follow' : ''}.
        </p>
      )}
      {shown.map((delivery) => {
        const last = delivery.attempts.at(-1);
        return (
          <details key={delivery.id} className="delivery" open={filter.webhookId === delivery.id || undefined}>
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
      {olderFailure?.key === filterKey && <FailureAlert failure={olderFailure.failure} />}
      {nextCursor && (
        <button type="button" className="secondary" disabled={loadingOlder} onClick={() => void loadOlder()}>
          Older deliveries
        </button>
      )}
    </>
  );
}
