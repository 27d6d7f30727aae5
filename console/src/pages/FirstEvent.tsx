// The empty state of a game without decisions: what to run to send its first event, as commands that work when
// pasted into a shell (bash or zsh), for this game, at this console's own address.
import type { ActionResult, Key, Rule } from '../api.ts';
import { ActionForm, CopyButton } from '../components.tsx';

/** `"..."` with the characters a double-quoted shell word treats specially escaped (none occur in ids). */
const json = (pairs: Array<[string, string]>) =>
  `"{${pairs.map(([key, value]) => `\\"${key}\\":\\"${value}\\"`).join(',')}}"`;

export function eventCommand(origin: string, key: string, playerId: string, eventType: string): string {
  return (
    `curl -sS -X POST ${origin}/api/game-sdk/v2/events -H "Authorization: Bearer ${key}" ` +
    `-H "Content-Type: application/json" -d ${json([
      ['eventId', "$(node -p 'crypto.randomUUID()')"],
      ['playerId', playerId],
      ['eventType', eventType],
      ['occurredAt', '$(date -u +%Y-%m-%dT%H:%M:%SZ)'],
    ])}`
  );
}

export function linkIntentCommand(origin: string, key: string): string {
  return (
    `curl -sS -X POST ${origin}/api/game-sdk/v2/link-intents -H "Authorization: Bearer ${key}" ` +
    `-H "Content-Type: application/json" -d ${json([['externalPlayerId', 'player-1']])}`
  );
}

export function Command({ label, command }: { label: string; command: string }) {
  return (
    <div className="command">
      <pre>
        <code>{command}</code>
      </pre>
      <CopyButton value={command} label={`Copy: ${label}`} />
    </div>
  );
}

/** "Send your first event": the curl line for this game, with what is known filled in. */
export function FirstEvent({
  gameId,
  keys,
  rules,
  shownKey,
  playerId,
  playerLinked,
  write,
  onTestPlayer,
}: {
  gameId: string;
  keys: Key[];
  rules: Rule[];
  /** A secret key of this game shown on the page right now (just created). */
  shownKey: string | undefined;
  /** A player of this game, when it has one (a linked one if there is any). */
  playerId: string | undefined;
  /** Whether that player is linked to an account (its events can be accepted). */
  playerLinked: boolean;
  /** The caller may run actions (link a test player). */
  write: boolean;
  /** A test player was linked (createTestPlayer): its id. */
  onTestPlayer: (result: ActionResult) => void;
}) {
  const origin = window.location.origin;
  const hasSecret = keys.some((k) => k.kind === 'secret' && !k.revokedAt);
  const rule = rules.find((r) => r.active);
  const key = shownKey ?? '$SECRET_KEY';
  return (
    <div className="empty" data-testid="first-event">
      <p>
        <strong>No decisions yet: send your first event.</strong> Your game server posts each event with a secret key;
        the decision appears here at once.
      </p>
      <ol>
        {!hasSecret && <li>Create a secret key on the Keys tab (it is shown once).</li>}
        {!shownKey && (
          <li>
            In a terminal, set <code>SECRET_KEY</code> to that secret key: <code>SECRET_KEY=cr_sk_sandbox_…</code>
          </li>
        )}
        {!rule && (
          <li>
            Create a reward rule on the Rules tab for the event type (this command uses <code>level.up</code>); without
            one the event is rejected with <code>unknown_or_inactive_rule</code>.
          </li>
        )}
        {write && !playerLinked && (
          <li>
            Link a test player: a player of this game linked to a test account of the sandbox, so that its events can be
            accepted without your app (the command below then uses it).
            <ActionForm
              compact
              action="createTestPlayer"
              title="Link a test player"
              submitLabel="Link a test player"
              fixed={{ gameId }}
              fields={[
                {
                  name: 'externalPlayerId',
                  label: 'Player id in your game',
                  kind: 'text',
                  initial: 'test-player-1',
                  rule: 'Enter an id of 1 to 200 characters, without control characters, not used in this game yet.',
                },
              ]}
              onDone={onTestPlayer}
            />
          </li>
        )}
        {!playerId && (
          <li>
            {write ? 'Or create a player your game’s way' : 'Create a player'}: ask for a link intent for its in-game
            id. The answer's <code>playerId</code> is the player; set <code>PLAYER_ID</code> to it. It stays unlinked
            (its events are rejected with <code>player_not_linked</code>) until the player approves the link in the app.
            <Command label="Create a player" command={linkIntentCommand(origin, key)} />
          </li>
        )}
        <li>
          Send the event:
          <Command
            label="Send your first event"
            command={eventCommand(origin, key, playerId ?? '$PLAYER_ID', rule?.eventType ?? 'level.up')}
          />
        </li>
      </ol>
    </div>
  );
}
