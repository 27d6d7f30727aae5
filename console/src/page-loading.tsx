// Pages loaded on demand (React.lazy) that survive their code failing to load: while the console's server restarts
// (a deploy) or is down, the import of a page's chunk fails ("Failed to fetch dynamically imported module"). Without
// a boundary React unmounts the whole console (a white page) and lazy() keeps the failure for good, so the page stays
// white after the server is back. Here the failure shows a message with "Reload", and the page comes back by itself:
// the chunk's address is asked every few seconds, and once it answers the import is tried again (a new lazy()); if
// the browser still refuses it (a failed module fetch may stay cached in the document), the console reloads once.
import { Component, type ComponentType, type ErrorInfo, lazy, type ReactNode } from 'react';

/** How often the chunk's address is asked while the page cannot load. */
export const PAGE_RETRY_MS = 3000;

const retries = new Set<() => void>();

/** A lazily loaded page whose import can be tried again after a failure (each retry makes a new lazy()). */
export function lazyPage<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): ComponentType<P> {
  let Current = lazy(load);
  retries.add(() => {
    Current = lazy(load);
  });
  // biome-ignore lint/correctness/noComponentHookFactories: called once per page at module level, as lazy() is
  return function Page(props: P) {
    return <Current {...props} />;
  };
}

const LOAD_FAILURE =
  /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|Unable to preload CSS/i;

/** Whether an error is a page's code failing to load (not a fault of the page itself). */
export const isLoadFailure = (error: unknown) => error instanceof Error && LOAD_FAILURE.test(error.message);

/** The address the failed import asked for (in the browser's message), else the console's own page. */
function addressOf(error: Error): string {
  return /https?:\/\/\S+?\.(?:js|css)\b/.exec(error.message)?.[0] ?? window.location.pathname;
}

// When the console last reloaded itself for a chunk, kept in the tab: at most one automatic reload a minute, so that
// a chunk that stays refused does not reload the console in a loop ("Reload" is always there).
const RELOADED = 'console.page-load-reloaded';
const RELOAD_AGAIN_MS = 60_000;

/** Reloads the console, unless it already did so by itself within the last minute; whether it reloads. */
function reloadOnce(): boolean {
  const last = Number(sessionStorage.getItem(RELOADED) ?? 0);
  if (Date.now() - last < RELOAD_AGAIN_MS) return false;
  sessionStorage.setItem(RELOADED, String(Date.now()));
  window.location.reload();
  return true;
}

interface BoundaryProps {
  /** A change (a new page in the address) clears a failure: the new page is tried. */
  resetKey: string;
  children: ReactNode;
}

interface BoundaryState {
  error: Error | undefined;
  /** The server answered and the import was tried again. */
  retried: boolean;
}

/** Catches a page's failure to load (and any other fault of a page) and shows it instead of a white console. */
export class PageBoundary extends Component<BoundaryProps, BoundaryState> {
  override state: BoundaryState = { error: undefined, retried: false };
  private timer: ReturnType<typeof setInterval> | undefined;

  static getDerivedStateFromError(error: unknown): Partial<BoundaryState> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: unknown, _info: ErrorInfo) {
    if (!isLoadFailure(error)) return;
    // The server answers but the browser still refuses the chunk: a fresh document loads it.
    if (this.state.retried && reloadOnce()) return;
    this.watch();
  }

  override componentDidUpdate(previous: BoundaryProps) {
    if (previous.resetKey !== this.props.resetKey && this.state.error) this.retry(false);
  }

  override componentWillUnmount() {
    this.stopWatching();
  }

  /**
   * Asks the failed chunk's address every PAGE_RETRY_MS. Served: the import is tried again. Any other answer: the
   * server is back with another version of the console (a deploy renamed its chunks), so the console reloads.
   */
  private watch() {
    this.stopWatching();
    const error = this.state.error;
    if (!error) return;
    const address = addressOf(error);
    this.timer = setInterval(() => {
      void fetch(address, { cache: 'no-store' })
        .then((response) => {
          if (this.state.error !== error) return;
          if (response.ok) this.retry(true);
          else if (reloadOnce()) this.stopWatching();
        })
        .catch(() => undefined);
    }, PAGE_RETRY_MS);
  }

  private stopWatching() {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private retry(afterAnswer: boolean) {
    this.stopWatching();
    for (const reset of retries) reset();
    this.setState({ error: undefined, retried: afterAnswer });
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    const loading = isLoadFailure(error);
    return (
      <div className="banner banner-bad page-failure" role="alert">
        {loading ? (
          <>
            <h1>This page could not be loaded</h1>
            <p>
              The console's server did not answer (it may be restarting for a deploy, or be down). The page comes back
              by itself once the server answers again.
            </p>
            <p className="hint">Retrying every {PAGE_RETRY_MS / 1000} s.</p>
          </>
        ) : (
          <>
            <h1>This page stopped with an error</h1>
            <p>{error.message}</p>
          </>
        )}
        <button type="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}
