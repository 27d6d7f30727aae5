// The audit trail as the console shows it (the organization's Activity page and a game's recent changes): each entry
// with when, who, the action in words, its target as a link to the target's page, and each changed field's from and
// to.
import type { AuditEntry, Snapshot } from '../../api.ts';
import { TableBox, when } from '../../components.tsx';

/** Every console action type, in the document's order then the later ones, with what it did in words. */
export const ACTION_LABELS: Record<string, string> = {
  createOrganization: 'Organization created',
  fundOrganization: 'Organization funded',
  createProject: 'Project created',
  updateProject: 'Project updated',
  allocateProject: 'Project allocated',
  createGame: 'Game created',
  updateGame: 'Game updated',
  allocateGame: 'Game allocated',
  createRule: 'Rule created',
  updateRule: 'Rule updated',
  issueKey: 'Key issued',
  revokeKey: 'Key revoked',
  addMember: 'Member added',
  updateMember: 'Member role changed',
  removeMember: 'Member removed',
  acceptMembership: 'Membership accepted',
  createWebhookEndpoint: 'Webhook endpoint created',
  updateWebhookEndpoint: 'Webhook endpoint updated',
  deleteWebhookEndpoint: 'Webhook endpoint deleted',
  rotateWebhookSecret: 'Webhook secret rotated',
  sendTestWebhook: 'Webhook test sent',
  redeliverWebhook: 'Webhook delivery resent',
  recoverWebhookDeliveries: 'Failed webhook deliveries resent',
  advanceGameClock: 'Game clock advanced',
  createTestPlayer: 'Test player linked',
};

/** The page of an entry's target (deleted objects: the page that listed them). */
export function targetAddress(entry: AuditEntry): string | undefined {
  switch (entry.targetKind) {
    case 'organization':
      return `#/org/${entry.targetId}`;
    case 'project':
      return `#/project/${entry.targetId}`;
    case 'game':
      return `#/game/${entry.targetId}`;
    case 'rule':
      return entry.gameId ? `#/game/${entry.gameId}/rules` : undefined;
    case 'key':
      return `#/key/${entry.targetId}`;
    case 'member':
      return `#/org/${entry.organizationId}`;
    case 'webhookEndpoint':
      return entry.gameId ? `#/game/${entry.gameId}/webhooks` : undefined;
    case 'player':
      return `#/player/${entry.targetId}`;
    default:
      return undefined;
  }
}

const KIND_WORDS: Record<string, string> = {
  organization: 'Organization',
  project: 'Project',
  game: 'Game',
  rule: 'Rule',
  key: 'Key',
  member: 'Member',
  webhookEndpoint: 'Webhook endpoint',
  player: 'Player',
};

/** The target's name as the snapshot knows it (an object since deleted, or not in the snapshot: its id's start). */
export function targetName(entry: AuditEntry, snapshot: Snapshot): string {
  const id = entry.targetId;
  const named =
    entry.targetKind === 'organization'
      ? snapshot.organizations.find((o) => o.id === id)?.name
      : entry.targetKind === 'project'
        ? snapshot.projects.find((p) => p.id === id)?.name
        : entry.targetKind === 'game'
          ? snapshot.games.find((g) => g.id === id)?.name
          : entry.targetKind === 'rule'
            ? snapshot.rules.find((r) => r.id === id)?.eventType
            : entry.targetKind === 'key'
              ? snapshot.keys.find((k) => k.id === id)?.name
              : entry.targetKind === 'member'
                ? (() => {
                    const member = snapshot.members.find((m) => m.id === id);
                    return member ? (member.email ?? member.identityUserId) : undefined;
                  })()
                : undefined;
  const kind = KIND_WORDS[entry.targetKind ?? ''] ?? 'Object';
  return `${kind} ${named ?? `${id.slice(0, 8)}…`}`;
}

const valueText = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);

/** Each changed field as "field: from → to" ("field: to" when there was no value before). */
function Changes({ changes }: { changes: AuditEntry['changes'] }) {
  const fields = Object.entries(changes ?? {});
  if (fields.length === 0) return null;
  return (
    <ul className="changes">
      {fields.map(([field, change]) => (
        <li key={field}>
          <span className="change-field">{field}</span>:{' '}
          {change.from !== null && change.from !== undefined && (
            <>
              <span className="change-from">{valueText(change.from)}</span> →{' '}
            </>
          )}
          <span className="change-to">{valueText(change.to)}</span>
        </li>
      ))}
    </ul>
  );
}

/** The entries as a table (one block per entry on a phone). */
export function AuditTable({ label, entries, snapshot }: { label: string; entries: AuditEntry[]; snapshot: Snapshot }) {
  return (
    <TableBox label={label}>
      <table aria-label={label} className="stack audit">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const address = targetAddress(entry);
            const name = targetName(entry, snapshot);
            return (
              <tr key={entry.id}>
                <td className="when" data-label="When">
                  {when(entry.createdAt)}
                </td>
                <td data-label="Who" className="wrap">
                  {entry.actor.email ?? entry.actor.identityUserId}
                </td>
                <td className="lead">
                  {ACTION_LABELS[entry.action] ?? entry.action} <code className="action-type">{entry.action}</code>
                </td>
                <td data-label="Target" className="wrap">
                  {address ? <a href={address}>{name}</a> : name}
                </td>
                <td data-label="Changes" className="wrap">
                  <Changes changes={entry.changes} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}
