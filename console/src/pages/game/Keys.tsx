import { useEffect, useRef } from 'react';
import type { ActionResult, Key } from '../../api.ts';
import { ActionForm, CopyButton, Reveal, Section, TableBox } from '../../components.tsx';
import { objectAddress } from '../../search.ts';

/** A key issued on this page: the action's answer and the name it was given (the banner names its key). */
export type IssuedKey = ActionResult & { name?: string };

export interface KeysSectionProps {
  gameId: string;
  keys: Key[];
  write: boolean;
  reload: () => void;
  /**
   * The keys issued on this page whose banner is still shown (until hidden or the key revoked), newest first: a second
   * key never replaces the banner of a first secret nobody has hidden yet.
   */
  shown: IssuedKey[];
  addIssued: (result: IssuedKey) => void;
  hideIssued: (id: string) => void;
}

/** The game's keys: the one-time banner of a new key, the list, and (for writers) revoking and issuing keys. */
export function KeysSection({ gameId, keys, write, reload, shown, addIssued, hideIssued }: KeysSectionProps) {
  const issuedRef = useRef<HTMLDivElement>(null);
  const newest = shown[0]?.id;
  // A new key's banner takes the focus: it is what the action opened.
  useEffect(() => {
    if (newest) issuedRef.current?.focus();
  }, [newest]);
  const secretsShown = shown.filter((result) => result.kind === 'secret').length;
  return (
    <Section title="Keys">
      {secretsShown > 1 && (
        <p className="banner banner-warn" data-testid="secrets-unhidden">
          {secretsShown} new secret keys are shown below and not hidden yet: copy each one before you hide it, it is not
          shown again.
        </p>
      )}
      {shown.map((result, index) => (
        // Keyed by the key: each banner has its own copy button, which says "Copied" only for its own key.
        <div
          key={result.id}
          className="issued"
          role="status"
          tabIndex={-1}
          ref={index === 0 ? issuedRef : undefined}
          aria-label={`New ${result.kind} key${result.name ? ` ${result.name}` : ''}`}
        >
          <p>
            New {result.kind} key
            {result.name ? (
              <>
                {' '}
                “<span className="name">{result.name}</span>”
              </>
            ) : (
              ''
            )}
            {result.kind === 'secret' ? ', shown this once: ' : ' (the table shows it too): '}
            <code data-testid="issued-key">{result.issuedKey}</code>
          </p>
          <CopyButton
            value={result.issuedKey ?? ''}
            label={result.kind === 'secret' ? 'Copy secret key' : 'Copy public key'}
          />{' '}
          <button type="button" className="secondary" onClick={() => hideIssued(result.id)}>
            {result.kind === 'secret' ? 'Done, hide it' : 'Hide'}
          </button>
        </div>
      ))}
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
                  <td>
                    <a href={objectAddress.key(key.id)}>{key.name}</a>
                  </td>
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
                            hideIssued(key.id);
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
            onDone={(result, input) => {
              addIssued({ ...result, name: String(input.name) });
              reload();
            }}
          />
        </Reveal>
      )}
    </Section>
  );
}
