// The search box in the top bar: `/` anywhere outside a field focuses it; Enter opens the results page
// (#/search?q=…). An empty or too long text is refused at the box, and nothing is sent.
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { focusesSearch, searchAddress, searchTextOf, searchTextProblem } from './search.ts';

export function SearchBox() {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState(() => searchTextOf(window.location.hash));
  const [problem, setProblem] = useState<string | undefined>();
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (!focusesSearch(event.key, event.target as HTMLElement | null)) return;
      event.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const wrong = searchTextProblem(text);
    setProblem(wrong);
    if (wrong) return;
    window.location.hash = searchAddress(text);
  };
  return (
    <search className="search-box">
      <form onSubmit={submit} noValidate>
        <label htmlFor={`${id}-q`} className="visually-hidden">
          Search ids and names
        </label>
        <input
          id={`${id}-q`}
          ref={input}
          type="search"
          value={text}
          placeholder="Search any id or name  ( / )"
          onChange={(e) => {
            setText(e.target.value);
            setProblem(undefined);
          }}
          aria-keyshortcuts="/"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-problem` : undefined}
          autoComplete="off"
          spellCheck={false}
        />
        <button type="submit" className="secondary">
          Search
        </button>
        {problem && (
          <span className="search-problem" id={`${id}-problem`} role="alert">
            {problem}
          </span>
        )}
      </form>
    </search>
  );
}
