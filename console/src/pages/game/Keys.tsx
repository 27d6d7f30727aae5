import { useEffect, useRef } from 'react';
import type { ActionResult, Key } from '../../api.ts';
import { ActionForm, CopyButton, Reveal, Section, TableBox } from '../../components.tsx';

export interface KeysSectionProps {
  gameId: string;
  keys: Key[];
  write: boolean;
  reload: () => void;
  /** The result of the last key issued on this page, if any. */
  issued: ActionResult | undefined;
  /** The issued key while its one-time banner is shown (until it is hidden or the key revoked). */
  shown: ActionResult | undefined;
  setIssued: (result: ActionResult | undefined) => void;
}

/** The game's keys: the one-time banner of a new key, the list, and (for writers) revoking and issuing keys. */
export function KeysSection({ gameId, keys, write, reload, issued, shown, setIssued }: KeysSectionProps) {
  const issuedRef = useRef<HTMLDivElement>(null);
  // A new key's banner takes the focus: it is what the action opened.
  useEffect(() => {
    if (issued?.issuedKey) issuedRef.current?.focus();
  }, [issued]);
  return (
    <Section title="Keys">
      {shown?.issuedKey && (
        <div className="issued" role="status" tabIndex={-1} ref={issuedRef} aria-label="New key">
          <p>
            New {shown.kind} key, shown this once: <code data-testid="issued-key">{shown.issuedKey}</code>
          </p>
          <CopyButton value={shown.issuedKey} label="Copy key" />{' '}
          <button type="button" className="secondary" onClick={() => setIssued(undefined)}>
            Done, hide it
          </button>
        </div>
      )}
      {keys.length === 0 ? (
        <p className="empty">
          No keys yet.{' '}
          {write
            ? 'Create a secret key for your game server (it posts events) and a public key for your game client.'
            : ''}
        </p>
      ) : (
        <TableBox label="Keys">
          <table aria-label="Keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Revoked</th>
                {write && <th scope="col">Revoke</th>}
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>{key.kind}</td>
                  <td>
                    <code>{key.publicKey ?? key.prefix}</code>
                  </td>
                  <td>{new Date(key.createdAt).toLocaleString()}</td>
                  <td>{key.revokedAt ? new Date(key.revokedAt).toLocaleString() : 'no'}</td>
                  {write && (
                    <td>
                      {!key.revokedAt && (
                        <ActionForm
                          compact
                          action="revokeKey"
                          title={`Revoke key ${key.name}`}
                          submitLabel={`Revoke ${key.name}`}
                          submitClass="danger"
                          fixed={{ keyId: key.id }}
                          fields={[]}
                          danger={() => ({
                            title: `Revoke key ${key.name}?`,
                            body:
                              `Every request with this ${key.kind} key is refused from now on` +
                              `${key.kind === 'secret' ? ' (401 invalid_key)' : ''}. This cannot be undone: ` +
                              'a revoked key stays revoked; create a new key to replace it.',
                            confirmLabel: 'Revoke key',
                          })}
                          onDone={() => {
                            if (issued?.id === key.id) setIssued(undefined);
                            reload();
                          }}
                        />
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {write && (
        <Reveal label="New key">
          <ActionForm
            action="issueKey"
            title="New key"
            submitLabel="Create key"
            fixed={{ gameId }}
            fields={[
              {
                name: 'name',
                label: 'Key name',
                kind: 'text',
                rule: 'Enter a name of 1 to 100 characters, without control characters.',
              },
              { name: 'kind', label: 'Kind', kind: 'select', options: ['secret', 'public'], initial: 'secret' },
            ]}
            onDone={(result) => {
              setIssued(result);
              reload();
            }}
          />
        </Reveal>
      )}
    </Section>
  );
}
