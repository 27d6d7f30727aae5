import { useQuery } from '@apollo/client/react';
import { type FormEvent, Suspense, useEffect, useId, useRef, useState, useSyncExternalStore } from 'react';
import {
  ACCESS,
  client,
  failureOf,
  onConnectivity,
  onSessionEnded,
  type ServerFailure,
  SNAPSHOT,
  type Snapshot,
  serviceUnreachableSince,
  setSessionToken,
} from './api.ts';
import {
  announceSignOut,
  devSignIn,
  forgetDevSession,
  holdSession,
  keepDevSession,
  keptDevSession,
  oidcSignIn,
  oidcSignOut,
  onSignedOutElsewhere,
  type SignInConfig,
  sessionFromOtherTabs,
} from './auth.ts';
import { FailureAlert, FailureText, useTitle } from './components.tsx';
import { lazyPage, PageBoundary } from './page-loading.tsx';
import { activityFilterOf } from './pages/activity/filter.ts';
import { deliveriesFilterOf } from './pages/game/webhook-filter.ts';
import { OrganizationPage, ProjectPage } from './pages/Organization.tsx';
import { Overview } from './pages/Overview.tsx';
import { SearchBox } from './SearchBox.tsx';
import { searchTextOf } from './search.ts';

const GamePage = lazyPage(() => import('./pages/Game.tsx'));
const RecordsPage = lazyPage(() => import('./pages/Records.tsx'));
const SearchPage = lazyPage(() => import('./pages/objects/SearchPage.tsx'));
const DecisionPage = lazyPage(() => import('./pages/objects/DecisionPage.tsx'));
const PlayerPage = lazyPage(() => import('./pages/objects/PlayerPage.tsx'));
const KeyPage = lazyPage(() => import('./pages/objects/KeyPage.tsx'));
const ActivityPage = lazyPage(() => import('./pages/activity/ActivityPage.tsx'));

const readRoute = () => window.location.hash.replace(/^#\/?/, '').replace(/\?.*$/, '').split('/').filter(Boolean);

function useHashRoute(): string[] {
  const [route, setRoute] = useState(readRoute);
  const shown = useRef(route.join('/'));
  useEffect(() => {
    const onChange = () => {
      const next = readRoute();
      const same = next.join('/') === shown.current;
      shown.current = next.join('/');
      setRoute(next);
      // A game page stays as it is when only its address's query changes (a Webhooks tab's delivery filters, Back and
      // Forward between them): the focus stays where it was (the filter form's button) and nothing scrolls.
      if (same && next[0] === 'game') return;
      // The new page's main region takes the focus without scrolling the top bar (and its Sandbox badge) away.
      document.getElementById('main')?.focus({ preventScroll: true });
      window.scrollTo(0, 0);
    };
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function SignIn({
  config,
  onSignedIn,
  failure,
}: {
  config: SignInConfig;
  onSignedIn: (token: string) => void;
  failure: ServerFailure | undefined;
}) {
  const id = useId();
  useTitle('Sign in');
  const [email, setEmail] = useState('');
  const [error, setError] = useState<ServerFailure | undefined>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      onSignedIn(await devSignIn(email));
    } catch (failure) {
      setError(failure as ServerFailure);
    }
  };
  return (
    <main id="main" className="signin" tabIndex={-1}>
      <h1>Sandbox Rewards console</h1>
      {config.kind === 'dev' && (
        <form onSubmit={submit} noValidate aria-label="Sign in">
          <p>Development sign-in: the local identity provider signs a session for the e-mail you type.</p>
          <label htmlFor={`${id}-email`}>E-mail</label>
          <input
            id={`${id}-email`}
            type="email"
            autoComplete="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
          />
          {error && (
            <p className="error" id={`${id}-error`} role="alert">
              <FailureText failure={error} />
            </p>
          )}
          <button type="submit">Sign in</button>
        </form>
      )}
      {config.kind === 'oidc' && (
        <button type="button" onClick={() => void oidcSignIn(config)}>
          Sign in with {new URL(config.authority).host}
        </button>
      )}
      {config.kind === 'none' && (
        <p role="alert">
          No sign-in is configured: set DEVELOPER_JWT_ISSUER and CONSOLE_OIDC_CLIENT_ID on the gateway, or run npm start
          without DEVELOPER_JWKS for the development sign-in.
        </p>
      )}
      {failure && <FailureAlert failure={failure} />}
    </main>
  );
}

/** How often the console asks the service again while it does not answer. */
const PROBE_MS = 5000;

/**
 * The console-wide notice while the service does not answer (any page's request failed to reach it): since when, and
 * that what the page shows was read before. The service is asked again every few seconds (the access query, the
 * cheapest); once it answers the notice goes and `onBack` reads the snapshot again.
 */
function ConnectionNotice({ onBack }: { onBack: () => void }) {
  const since = useSyncExternalStore(onConnectivity, serviceUnreachableSince);
  const wasDown = useRef(false);
  const back = useRef(onBack);
  back.current = onBack;
  useEffect(() => {
    if (since === undefined) {
      if (wasDown.current) back.current();
      wasDown.current = false;
      return;
    }
    wasDown.current = true;
    const timer = setInterval(() => {
      void client.query({ query: ACCESS, fetchPolicy: 'network-only' }).catch(() => undefined);
    }, PROBE_MS);
    return () => clearInterval(timer);
  }, [since]);
  if (since === undefined) return null;
  return (
    <div className="banner banner-bad connection-notice" role="alert" data-testid="service-unreachable">
      <p>
        <strong>The service cannot be reached</strong> (since {new Date(since).toLocaleTimeString()}). What this page
        shows was read before and may be out of date; actions cannot be sent. The console keeps trying and reads
        everything again once the service answers.
      </p>
    </div>
  );
}

/** Where the route points: the page's kind and id, and the objects above it (for the navigation). */
function located(snapshot: Snapshot, route: string[]) {
  const [kind, id] = route;
  const game = kind === 'game' ? snapshot.games.find((g) => g.id === id) : undefined;
  const project =
    kind === 'project'
      ? snapshot.projects.find((p) => p.id === id)
      : game
        ? snapshot.projects.find((p) => p.id === game.projectId)
        : undefined;
  const orgId = kind === 'org' ? id : (project?.organizationId ?? game?.organizationId);
  return { orgId, projectId: project?.id, gameId: game?.id };
}

/** The persistent navigation: organizations → projects → games, the current one marked (aria-current). */
function Navigation({ snapshot, route }: { snapshot: Snapshot | undefined; route: string[] }) {
  const here = snapshot ? located(snapshot, route) : { orgId: undefined, projectId: undefined, gameId: undefined };
  const current = (kind: string, id: string) => (route[0] === kind && route[1] === id ? 'page' : undefined);
  return (
    <nav aria-label="Console" className="sidenav">
      <ul className="nav-top">
        <li>
          <a href="#/" aria-current={route.length === 0 ? 'page' : undefined}>
            Organizations
          </a>
        </li>
        <li>
          <a href="#/records" aria-current={route[0] === 'records' ? 'page' : undefined}>
            Records
          </a>
        </li>
      </ul>
      {snapshot && snapshot.organizations.length > 0 && (
        <ul className="nav-tree" aria-label="Organizations, projects and games">
          {snapshot.organizations.map((org) => (
            <li key={org.id}>
              <a href={`#/org/${org.id}`} aria-current={current('org', org.id)} className="nav-org">
                {org.name}
              </a>
              {here.orgId === org.id && (
                <ul>
                  {snapshot.projects
                    .filter((p) => p.organizationId === org.id)
                    .map((project) => (
                      <li key={project.id}>
                        <a
                          href={`#/project/${project.id}`}
                          aria-current={current('project', project.id)}
                          className="nav-project"
                        >
                          {project.name}
                        </a>
                        <ul>
                          {snapshot.games
                            .filter((g) => g.projectId === project.id)
                            .map((game) => (
                              <li key={game.id}>
                                <a
                                  href={`#/game/${game.id}`}
                                  aria-current={current('game', game.id)}
                                  className="nav-game"
                                >
                                  {game.name}
                                  {game.status === 'paused' && <span className="nav-note"> (paused)</span>}
                                </a>
                              </li>
                            ))}
                        </ul>
                      </li>
                    ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}

function Console({ email, onSignOut }: { email: string; onSignOut: () => void }) {
  const route = useHashRoute();
  const { data, error, refetch } = useQuery<{ snapshot: Snapshot | null }>(SNAPSHOT, {
    fetchPolicy: 'network-only',
    notifyOnNetworkStatusChange: false,
  });
  const snapshot = data?.snapshot ?? undefined;
  const reload = () => void refetch();
  let page: React.ReactNode = <p>Loading…</p>;
  if (snapshot) {
    const [kind, id] = route;
    if (kind === 'org' && id && route[2] === 'activity')
      page = (
        <ActivityPage
          key={window.location.hash}
          snapshot={snapshot}
          organizationId={id}
          filter={activityFilterOf(window.location.hash)}
        />
      );
    else if (kind === 'org' && id) page = <OrganizationPage snapshot={snapshot} organizationId={id} reload={reload} />;
    else if (kind === 'project' && id) page = <ProjectPage snapshot={snapshot} projectId={id} reload={reload} />;
    else if (kind === 'game' && id)
      page = (
        <GamePage
          key={id}
          snapshot={snapshot}
          gameId={id}
          tab={route[2]}
          deliveries={route[2] === 'webhooks' ? deliveriesFilterOf(window.location.hash) : undefined}
          reload={reload}
        />
      );
    else if (kind === 'records')
      page = <RecordsPage key={route.join('/')} snapshot={snapshot} kind={route[1]} gameId={route[2]} />;
    else if (kind === 'search') {
      const text = searchTextOf(window.location.hash);
      page = <SearchPage key={text} snapshot={snapshot} text={text} />;
    } else if (kind === 'decision' && id) page = <DecisionPage key={id} snapshot={snapshot} id={id} />;
    else if (kind === 'player' && id) page = <PlayerPage key={id} snapshot={snapshot} id={id} />;
    else if (kind === 'key' && id) page = <KeyPage key={id} snapshot={snapshot} id={id} />;
    else page = <Overview snapshot={snapshot} reload={reload} />;
  }
  const failure = error ? failureOf(error) : undefined;
  const [menuOpen, setMenuOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page closes the menu
  useEffect(() => setMenuOpen(false), [route.join('/')]);
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span className="brand">Sandbox Rewards</span>{' '}
        <span className="sandbox-badge" title="Test credit only: no real money moves">
          Sandbox
        </span>
        <button
          type="button"
          className="menu-button secondary"
          aria-expanded={menuOpen}
          aria-controls="console-menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <SearchBox />
        <span className="who">
          <span className="email">{email}</span>{' '}
          <button type="button" className="secondary" onClick={onSignOut}>
            Sign out
          </button>
        </span>
      </header>
      <div className="shell">
        <div className={menuOpen ? 'menu menu-open' : 'menu'} id="console-menu">
          <Navigation snapshot={snapshot} route={route} />
        </div>
        <div className="content">
          <main id="main" tabIndex={-1}>
            <ConnectionNotice onBack={reload} />
            {failure && <FailureAlert failure={failure} />}
            <PageBoundary resetKey={`${route[0] ?? ''}/${route[1] ?? ''}`}>
              <Suspense fallback={<p>Loading…</p>}>{page}</Suspense>
            </PageBoundary>
          </main>
          <footer>
            Sandbox test credit only: 1,000 credits = $1 of test value, and no real money moves. Amounts in dollars are
            that equivalent.
          </footer>
        </div>
      </div>
    </>
  );
}

export function App({ config, initialToken }: { config: SignInConfig; initialToken?: string | undefined }) {
  const [session, setSession] = useState<{ email: string } | undefined>();
  const [failure, setFailure] = useState<ServerFailure | undefined>();
  // The session token, in memory only (for the provider's sign-out).
  const token = useRef<string | undefined>(undefined);
  // A development session kept in this tab (a reload), or the session of another open tab (a link opened in a new
  // tab): signed in again without asking (auth.ts). Until the other tabs answer, the page says it is signing in.
  const [restoring, setRestoring] = useState(
    () => !initialToken && config.kind !== 'none' && typeof BroadcastChannel !== 'undefined',
  );
  const signedIn = async (value: string, restored = false) => {
    token.current = value;
    setSessionToken(value);
    try {
      const result = await client.query<{ access: { email: string } | null }>({ query: ACCESS });
      if (result.error || !result.data?.access) throw result.error ?? new Error('No access.');
      setFailure(undefined);
      if (config.kind === 'dev') keepDevSession(value);
      holdSession(value);
      setSession({ email: result.data.access.email });
    } catch (error) {
      token.current = undefined;
      setSessionToken(undefined);
      forgetDevSession();
      holdSession(undefined);
      // A kept session the server no longer takes (expired, invitation revoked) just asks for a sign-in again.
      if (!restored) setFailure(failureOf(error));
    } finally {
      setRestoring(false);
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, for the OIDC redirect's token or the kept session
  useEffect(() => {
    if (initialToken) {
      void signedIn(initialToken);
      return;
    }
    const kept = config.kind === 'dev' ? keptDevSession() : undefined;
    if (kept) {
      void signedIn(kept, true);
      return;
    }
    if (config.kind === 'none') return;
    let asking = true;
    void sessionFromOtherTabs().then((handed) => {
      if (!asking) return;
      if (handed) void signedIn(handed, true);
      else setRestoring(false);
    });
    return () => {
      asking = false;
    };
  }, []);
  // The server ended the session (the live socket closed with 4401, e.g. SESSION_EXPIRED): back to the sign-in page
  // with the reason; the token and the cached data are forgotten (the provider's session is left as it is).
  useEffect(
    () =>
      onSessionEnded((ended) => {
        forgetDevSession();
        holdSession(undefined);
        token.current = undefined;
        setSessionToken(undefined);
        void client.clearStore();
        setSession(undefined);
        setFailure(ended);
      }),
    [],
  );
  // Another tab signed this session out: this one forgets it too (that tab ends the provider's session).
  useEffect(
    () =>
      onSignedOutElsewhere(() => {
        forgetDevSession();
        holdSession(undefined);
        token.current = undefined;
        setSessionToken(undefined);
        void client.clearStore();
        setSession(undefined);
        setFailure(undefined);
      }),
    [],
  );
  if (session) {
    return (
      <Console
        email={session.email}
        onSignOut={() => {
          const idToken = token.current;
          if (idToken) announceSignOut(idToken);
          holdSession(undefined);
          forgetDevSession();
          token.current = undefined;
          setSessionToken(undefined);
          void client.clearStore();
          setSession(undefined);
          if (config.kind === 'oidc' && idToken) {
            oidcSignOut(config, idToken).catch((error: unknown) => setFailure(failureOf(error)));
          }
        }}
      />
    );
  }
  if (restoring) {
    return (
      <main id="main" className="signin" tabIndex={-1}>
        <p role="status">Signing in again…</p>
      </main>
    );
  }
  return <SignIn config={config} onSignedIn={(token) => void signedIn(token)} failure={failure} />;
}
