import { useEffect, useRef, useState } from 'react';
import { failureOf, type ServerFailure } from './api.ts';

/**
 * Polls `load` every `intervalMs` while the page is shown (no subscription exists yet); after a failure the delay
 * doubles up to `maxMs`, and returns to `intervalMs` after the next success. A hidden tab polls at `maxMs`.
 */
export function usePoll<T>(load: () => Promise<T>, key: string, intervalMs = 1000, maxMs = 30_000) {
  const [value, setValue] = useState<T | undefined>();
  const [error, setError] = useState<ServerFailure | undefined>();
  const loadRef = useRef(load);
  loadRef.current = load;
  // biome-ignore lint/correctness/useExhaustiveDependencies: restarts when the key changes (a new game)
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = intervalMs;
    const tick = async () => {
      try {
        const next = await loadRef.current();
        if (stopped) return;
        setValue(next);
        setError(undefined);
        delay = intervalMs;
      } catch (failure) {
        if (stopped) return;
        setError(failureOf(failure));
        delay = Math.min(maxMs, delay * 2);
      }
      if (!stopped) timer = setTimeout(tick, document.hidden ? maxMs : delay);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [key, intervalMs, maxMs]);
  return { value, error };
}
