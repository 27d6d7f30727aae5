import { useQuery } from '@apollo/client/react';
import { type FormEvent, lazy, Suspense, useEffect, useId, useRef, useState } from 'react';
import {
  ACCESS,
  client,
  failureOf,
  onSessionEnded,
  type ServerFailure,
  SNAPSHOT,
  type Snapshot,
  setSessionToken,
} from './api.ts';
import { devSignIn, oidcSignIn, oidcSignOut, type SignInConfig } from './auth.ts';
import { FailureAlert, FailureText, useTitle } from './components.tsx';
import { OrganizationPage } from './pages/Organization.tsx';
import { Overview } from './pages/Overview.tsx';

const GamePage = lazy(() => import('./pages/Game.tsx'));
const RecordsPage = lazy(() => import('./pages/Records.tsx'));

const readRoute = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);

function useHashRoute(): string[] {
  const [route, setRoute] = useState(readRoute);
  useEffect(() => {
    const onChange = () => {
      setRoute(readRoute());
      document.getElementById('main')?.focus();
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
    if (kind === 'org' && id) page = <OrganizationPage snapshot={snapshot} organizationId={id} reload={reload} />;
    else if (kind === 'game' && id) page = <GamePage snapshot={snapshot} gameId={id} reload={reload} />;
    else if (kind === 'records')
      page = <RecordsPage key={route.join('/')} snapshot={snapshot} kind={route[1]} gameId={route[2]} />;
    else page = <Overview snapshot={snapshot} reload={reload} />;
  }
  const failure = error ? failureOf(error) : undefined;
  const [menuOpen, setMenuOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page closes the menu
  useEffect(() => setMenuOpen(false), [route.join('/')]);
  const current = route[0] === 'records' ? 'records' : route.length === 0 ? 'home' : '';
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className={menuOpen ? 'menu-open' : undefined}>
        <span className="brand">Sandbox Rewards</span>
        <button
          type="button"
          className="menu-button secondary"
          aria-expanded={menuOpen}
          aria-controls="console-menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <div className="menu" id="console-menu">
          <nav aria-label="Console">
            <a href="#/" aria-current={current === 'home' ? 'page' : undefined}>
              Organizations
            </a>{' '}
            <a href="#/records" aria-current={current === 'records' ? 'page' : undefined}>
              Records
            </a>
          </nav>
          <span className="who">
            <span className="email">{email}</span>{' '}
            <button type="button" className="secondary" onClick={onSignOut}>
              Sign out
            </button>
          </span>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {failure && <FailureAlert failure={failure} />}
        <Suspense fallback={<p>Loading…</p>}>{page}</Suspense>
      </main>
      <footer>
        Sandbox test credit only: 1,000 credits = $1 of test value, and no real money moves. Amounts in dollars are that
        equivalent.
      </footer>
    </>
  );
}

export function App({ config, initialToken }: { config: SignInConfig; initialToken?: string | undefined }) {
  const [session, setSession] = useState<{ email: string } | undefined>();
  const [failure, setFailure] = useState<ServerFailure | undefined>();
  // The session token, in memory only (for the provider's sign-out).
  const token = useRef<string | undefined>(undefined);
  const signedIn = async (value: string) => {
    token.current = value;
    setSessionToken(value);
    try {
      const result = await client.query<{ access: { email: string } | null }>({ query: ACCESS });
      if (result.error || !result.data?.access) throw result.error ?? new Error('No access.');
      setFailure(undefined);
      setSession({ email: result.data.access.email });
    } catch (error) {
      token.current = undefined;
      setSessionToken(undefined);
      setFailure(failureOf(error));
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, for the OIDC redirect's token
  useEffect(() => {
    if (initialToken) void signedIn(initialToken);
  }, []);
  // The server ended the session (the live socket closed with 4401, e.g. SESSION_EXPIRED): back to the sign-in page
  // with the reason; the token and the cached data are forgotten (the provider's session is left as it is).
  useEffect(
    () =>
      onSessionEnded((ended) => {
        token.current = undefined;
        setSessionToken(undefined);
        void client.clearStore();
        setSession(undefined);
        setFailure(ended);
      }),
    [],
  );
  if (session) {
    return (
      <Console
        email={session.email}
        onSignOut={() => {
          const idToken = token.current;
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
  return <SignIn config={config} onSignedIn={(token) => void signedIn(token)} failure={failure} />;
}
