// The results of the search box (#/search?q=…): grouped by kind, each object a link to its own page.
import type { Snapshot } from '../../api.ts';
import { FailureAlert, Section, useTitle } from '../../components.tsx';
import { groupsOf } from '../../search.ts';
import { useFound } from './found.ts';

export default function SearchPage({ snapshot, text }: { snapshot: Snapshot; text: string }) {
  useTitle(`Search: ${text}`);
  const { found, failure, loading } = useFound(text);
  const places = {
    project: (id: string) => snapshot.projects.find((p) => p.id === id)?.name,
    organization: (id: string) => snapshot.organizations.find((o) => o.id === id)?.name,
  };
  // A game's name, and where it sits when another game of the developer has the same name.
  const gameName = (gameId: string) => {
    const game = snapshot.games.find((g) => g.id === gameId);
    if (!game) return `game ${gameId}`;
    const twin = snapshot.games.some((g) => g.id !== game.id && g.name === game.name);
    if (!twin) return game.name;
    return `${game.name} (${places.organization(game.organizationId) ?? 'organization'} › ${places.project(game.projectId) ?? 'project'})`;
  };
  const groups = found ? groupsOf(found, gameName, places) : [];
  const count = groups.reduce((sum, g) => sum + g.items.length, 0);
  return (
    <>
      <h1>Search</h1>
      {failure && <FailureAlert failure={failure} />}
      <p role="status" className="search-summary">
        {loading
          ? `Searching for “${text}”…`
          : failure
            ? 'Nothing to show: the search did not answer (above).'
            : count === 0
              ? `Nothing found for “${text}”.`
              : `${count} found for “${text}”.`}
      </p>
      {!loading && !failure && count === 0 && (
        <p>
          The box finds an event id, a decision id, a player id or the game’s own player id (exactly), a key’s prefix or
          id, and any organization, project or game whose name contains the text or each of its words, in your
          organizations.
        </p>
      )}
      {groups.map((group) => (
        <Section key={group.kind} title={`${group.title} (${group.items.length})`} className="found-group">
          <ul className="found-list">
            {group.items.map((item) => (
              <li key={item.id}>
                <a href={item.href}>{item.label}</a> <span className="muted">{item.detail}</span>
              </li>
            ))}
          </ul>
        </Section>
      ))}
    </>
  );
}
