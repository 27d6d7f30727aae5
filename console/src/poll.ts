import { useEffect, useRef, useState } from 'react';
import { failureOf, type ServerFailure } from './api.ts';

export interface PollOptions {
  /**
   * The live subscription carries the news: read at once (catching up on what happened before it started), then only
   * every `maxMs` as a safety net. Turning it off (the socket failed) reads at once and polls every `intervalMs` again.
   */
  live?: boolean;
  /** Each change asks for a read now, at most one per `intervalMs` (a decision arrived over the subscription). */
  nudge?: number;
}

/**
 * Polls `load` every `intervalMs` while the page is shown; after a failure the delay doubles up to `maxMs`, and
 * returns to `intervalMs` after the next success. A hidden tab polls at `maxMs`, and so does a live page (options).
 */
export function usePoll<T>(
  load: () => Promise<T>,
  key: string,
  intervalMs = 1000,
  maxMs = 30_000,
  options: PollOptions = {},
) {
  const [value, setValue] = useState<T | undefined>();
  const [error, setError] = useState<ServerFailure | undefined>();
  /** When the value was last read (Date.now()), to say how old it is while reads fail. */
  const [readAt, setReadAt] = useState<number | undefined>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const nudgeRef = useRef<() => void>(() => undefined);
  const live = options.live ?? false;
  // biome-ignore lint/correctness/useExhaustiveDependencies: restarts when the key changes (a new game) or the mode
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = intervalMs;
    let running = false;
    let again = false;
    let startedAt = 0;
    const schedule = (ms: number) => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(tick, ms);
    };
    const tick = async () => {
      running = true;
      startedAt = Date.now();
      try {
        const next = await loadRef.current();
        if (stopped) return;
        setValue(next);
        setReadAt(Date.now());
        setError(undefined);
        delay = intervalMs;
      } catch (failure) {
        if (stopped) return;
        setError(failureOf(failure));
        delay = Math.min(maxMs, delay * 2);
      } finally {
        running = false;
      }
      if (stopped) return;
      if (again) {
        again = false;
        schedule(Math.max(0, startedAt + intervalMs - Date.now()));
      } else schedule(document.hidden || live ? Math.max(maxMs, delay) : delay);
    };
    nudgeRef.current = () => {
      if (stopped) return;
      if (running) again = true;
      else schedule(Math.max(0, startedAt + intervalMs - Date.now()));
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [key, intervalMs, maxMs, live]);
  useEffect(() => {
    if (options.nudge) nudgeRef.current();
  }, [options.nudge]);
  return { value, error, readAt };
}

/** `fn` at most once per `ms`: calls within that time run it once when it is over (the latest `fn`). */
export function useThrottled(fn: () => void, ms: number): () => void {
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const state = useRef<{ last: number; timer: ReturnType<typeof setTimeout> | undefined }>({
    last: 0,
    timer: undefined,
  });
  useEffect(
    () => () => {
      if (state.current.timer) clearTimeout(state.current.timer);
    },
    [],
  );
  const call = useRef(() => {
    const s = state.current;
    if (s.timer) return;
    const wait = s.last + ms - Date.now();
    const run = () => {
      s.timer = undefined;
      s.last = Date.now();
      fnRef.current();
    };
    if (wait <= 0) run();
    else s.timer = setTimeout(run, wait);
  });
  return call.current;
}
