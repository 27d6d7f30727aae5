import { cloneElement, type FormEvent, type ReactElement, useId, useState } from 'react';
import { instantOf, localInputValue } from '../../action-form.tsx';
import {
  client,
  failureOf,
  type ServerFailure,
  WEBHOOK_DELIVERIES,
  type WebhookDelivery,
  type WebhookDeliveryFilter,
  type WebhookEndpoint,
} from '../../api.ts';
import { ActionForm, FailureAlert, Reveal, TableBox } from '../../components.tsx';
import { usePoll } from '../../poll.ts';
import { SAMPLE_DATA } from './webhook-samples.ts';

const time = (value: string | null | undefined) => (value ? new Date(value).toLocaleString() : '');

const DELIVERIES_PAGE = 20;
const STATES = ['pending', 'delivered', 'failed'] as const;
const TYPES = Object.keys(SAMPLE_DATA);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
const EMPTY: Draft = { state: '', eventType: '', from: '', to: '', webhookId: '' };

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

/** The filter form of one endpoint's deliveries: state, type, a window and a webhook-id. */
function DeliveryFilters({
  endpoint,
  active,
  apply,
}: {
  endpoint: WebhookEndpoint;
  active: boolean;
  apply: (filter: WebhookDeliveryFilter) => void;
}) {
  const id = useId();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [problem, setProblem] = useState<{ field: keyof Draft; sentence: string } | undefined>();
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
    setDraft(EMPTY);
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
            {STATES.map((s) => (
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
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>,
        )}
        {field('from', 'Since', <input type="datetime-local" />)}
        {field('to', 'Before', <input type="datetime-local" />)}
        <button type="submit">Show deliveries</button>
        {active && (
          <button type="button" className="secondary" onClick={clear}>
            Clear the filters
          </button>
        )}
      </form>
    </search>
  );
}

/**
 * An endpoint's deliveries with their attempts, the payload as the receiver got it, and redeliver; filtered by state,
 * type, time and webhook-id, and "Recover failed since…" for owners and admins.
 */
export function Deliveries({ endpoint, write }: { endpoint: WebhookEndpoint; write: boolean }) {
  const [nudge, setNudge] = useState(0);
  const [filter, setFilter] = useState<WebhookDeliveryFilter>({});
  // "Recover failed since…" offers a day ago, fixed when the tab opens (the form keeps what is typed).
  const [dayAgo] = useState(() => localInputValue(new Date(Date.now() - 86_400_000)));
  const filterKey = JSON.stringify(filter);
  const filtered = filterKey !== '{}';
  const page = usePoll(() => deliveriesOf(endpoint.id, filter), `${endpoint.id}/${nudge}/${filterKey}`, 3000);
  // Older pages loaded with "Older deliveries" (the newest page keeps being read every 3 s above them).
  const [older, setOlder] = useState<{ deliveries: WebhookDelivery[]; nextCursor: string | null } | undefined>();
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderFailure, setOlderFailure] = useState<ServerFailure | undefined>();
  // A page read for other filters (the poll's last value until the new read answers) is not shown.
  const current = page.value && JSON.stringify(page.value.filter) === filterKey ? page.value : undefined;
  const newest = current?.deliveries ?? [];
  const seen = new Set(newest.map((d) => d.id));
  const shown = [...newest, ...(older?.deliveries ?? []).filter((d) => !seen.has(d.id))];
  const nextCursor = older ? older.nextCursor : (current?.nextCursor ?? null);
  const apply = (next: WebhookDeliveryFilter) => {
    setOlder(undefined);
    setOlderFailure(undefined);
    setFilter(next);
  };
  const loadOlder = async () => {
    if (!nextCursor) return;
    setLoadingOlder(true);
    try {
      const next = await deliveriesOf(endpoint.id, filter, nextCursor);
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
      <DeliveryFilters endpoint={endpoint} active={filtered} apply={apply} />
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
      {olderFailure && <FailureAlert failure={olderFailure} />}
      {nextCursor && (
        <button type="button" className="secondary" disabled={loadingOlder} onClick={() => void loadOlder()}>
          Older deliveries
        </button>
      )}
    </>
  );
}
