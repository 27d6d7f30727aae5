import type { Game, Organization, Project } from '../../api.ts';
import { credits, dollars } from '../../components.tsx';
import { GameBanners } from '../state.tsx';

export interface GameHeadlineProps {
  game: Game;
  org: Organization | undefined;
  project: Project | undefined;
  write: boolean;
  reload: () => void;
}

/** The game's name, where it belongs, its settings and the caller's role, then its state banners. */
export function GameHeadline({ game, org, project, write, reload }: GameHeadlineProps) {
  return (
    <>
      <h1>Game {game.name}</h1>
      <p>
        {org && <a href={`#/org/${org.id}`}>Organization {org.name}</a>}, project {project?.name}. Platform{' '}
        {game.platform}, status <strong>{game.status}</strong>, daily cap per player{' '}
        {credits(game.dailyPlayerCapCredits)} credits ({dollars(game.dailyPlayerCapCredits)}). Your role: {org?.role}.
      </p>
      <GameBanners game={game} write={write} reload={reload} />
    </>
  );
}
