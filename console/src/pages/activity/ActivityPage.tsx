// An organization's Activity page (#/org/<id>/activity): its audit trail, newest first, filtered by actor, action,
// game and time (the filters live in the address, so a filtered view can be linked to), paged with "Older entries".
// The trail is its owner's and admins' only: a viewer is told so, and nothing is asked of the server.
import { type FormEvent, useEffect, useId, useState } from 'react';
import {
  type AuditEntry,
  type AuditFilter,
  auditPage,
  canWrite,
  type ServerFailure,
  type Snapshot,
} from '../../api.ts';
import { FailureAlert, useTitle } from '../../components.tsx';
import { ACTION_LABELS, AuditTable } from './entries.tsx';
import { activityAddress } from './filter.ts';

const PAGE_SIZE = 50;

/** An instant as a datetime-local input's value (the browser's time zone), and back. */
const localInput = (iso: string | undefined) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : undefined);

export default function ActivityPage({
  snapshot,
  organizationId,
  filter,
}: {
  snapshot: Snapshot;
  organizationId: string;
  filter: AuditFilter;
}) {
  const id = useId();
  const org = snapshot.organizations.find((o) => o.id === organizationId);
  useTitle(org ? `Activity of ${org.name}` : 'Organization not found');
  const allowed = canWrite(org?.role);
  const [entries, setEntries] = useState<AuditEntry[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [failure, setFailure] = useState<ServerFailure | undefined>();
  const [busy, setBusy] = useState(false);
  const [form, setForm] = useState({
    actor: filter.actor ?? '',
    action: filter.action ?? '',
    game: filter.gameId ?? '',
    from: localInput(filter.from),
    to: localInput(filter.to),
  });
  const load = async (after?: string) => {
    setBusy(true);
    try {
      const page = await auditPage(organizationId, filter, PAGE_SIZE, after);
      setEntries((shown) => (after ? [...(shown ?? []), ...page.entries] : page.entries));
      setNext(page.hasNextPage ? page.endCursor : null);
      setFailure(undefined);
    } catch (thrown) {
      setFailure(thrown as ServerFailure);
    } finally {
      setBusy(false);
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: the page is keyed by its address (filters included)
  useEffect(() => {
    if (org && allowed) void load();
  }, []);
  if (!org) return <p role="alert">This organization does not exist or you are not a member.</p>;
  const members = snapshot.members.filter((m) => m.organizationId === org.id);
  const games = snapshot.games.filter((g) => g.organizationId === org.id);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    window.location.hash = activityAddress(org.id, {
      actor: form.actor || undefined,
      action: form.action || undefined,
      gameId: form.game || undefined,
      from: fromLocalInput(form.from),
      to: fromLocalInput(form.to),
    } as AuditFilter);
  };
  const filtered = Object.keys(filter).length > 0;
  return (
    <>
      <h1>Activity of {org.name}</h1>
      <p className="where">
        <a href={`#/org/${org.id}`}>Organization {org.name}</a>. Every change made in the console or through the API:
        who made it, when, and each field's value before and after. Entries are never changed or deleted.
      </p>
      {!allowed ? (
        <p className="banner banner-warn" role="status" data-testid="activity-forbidden">
          The activity of an organization is shown to its owner and admins only. Your role here is {org.role}: ask an
          owner to make you an admin if you need it.
        </p>
      ) : (
        <>
          <form className="activity-filters" aria-label="Filter the activity" onSubmit={apply}>
            <div className="activity-field">
              <label htmlFor={`${id}-actor`}>Who</label>
              <select
                id={`${id}-actor`}
                value={form.actor}
                onChange={(e) => setForm({ ...form, actor: e.target.value })}
              >
                <option value="">Anyone</option>
                {members.map((m) => (
                  <option key={m.id} value={m.identityUserId}>
                    {m.email ?? m.identityUserId}
                  </option>
                ))}
              </select>
            </div>
            <div className="activity-field">
              <label htmlFor={`${id}-action`}>Action</label>
              <select
                id={`${id}-action`}
                value={form.action}
                onChange={(e) => setForm({ ...form, action: e.target.value })}
              >
                <option value="">Any action</option>
                {Object.entries(ACTION_LABELS).map(([action, label]) => (
                  <option key={action} value={action}>
                    {label}
                  </option>
                ))}
              </select>
            </div>
            <div className="activity-field">
              <label htmlFor={`${id}-game`}>Game</label>
              <select id={`${id}-game`} value={form.game} onChange={(e) => setForm({ ...form, game: e.target.value })}>
                <option value="">Any game (and the organization)</option>
                {games.map((g) => (
                  <option key={g.id} value={g.id}>
                    {g.name}
                  </option>
                ))}
              </select>
            </div>
            <div className="activity-field">
              <label htmlFor={`${id}-from`}>From</label>
              <input
                id={`${id}-from`}
                type="datetime-local"
                value={form.from}
                onChange={(e) => setForm({ ...form, from: e.target.value })}
              />
            </div>
            <div className="activity-field">
              <label htmlFor={`${id}-to`}>Before</label>
              <input
                id={`${id}-to`}
                type="datetime-local"
                value={form.to}
                onChange={(e) => setForm({ ...form, to: e.target.value })}
              />
            </div>
            <div className="activity-field">
              <button type="submit">Show</button>
            </div>
          </form>
          {filtered && (
            <p>
              <a href={activityAddress(org.id, {})}>Clear the filters</a>
            </p>
          )}
          {failure && <FailureAlert failure={failure} />}
          {entries === undefined && !failure && <p role="status">Loading…</p>}
          {entries && entries.length === 0 && (
            <p className="empty">{filtered ? 'No entry matches these filters.' : 'No activity yet.'}</p>
          )}
          {entries && entries.length > 0 && (
            <>
              <p role="status" data-testid="activity-count">
                {entries.length} {entries.length === 1 ? 'entry' : 'entries'} shown, newest first
                {next ? '; older ones follow' : ''}.
              </p>
              <AuditTable label="Activity" entries={entries} snapshot={snapshot} />
            </>
          )}
          {next && (
            <button type="button" className="secondary" disabled={busy} onClick={() => void load(next)}>
              Older entries
            </button>
          )}
        </>
      )}
    </>
  );
}
