// One console action as a form (ActionForm: fields checked in the browser, the server's refusal as a sentence at its
// field, "done" messages cleared when the next action starts) and the confirmation dialog it opens (ConfirmDialog).
import { type FormEvent, type KeyboardEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { type ActionResult, isFailure, runAction, type ServerFailure } from './api.ts';
import { Heading } from './components.tsx';
import { sentenceOf } from './errors.ts';
import { dollars, parseCredits } from './money.ts';

// ---- confirmation dialogs ----

export interface DangerSpec {
  title: string;
  body: string;
  confirmLabel: string;
  /** false: a confirmation that is not destructive (not red, the focus on the confirm button). Default true. */
  destructive?: boolean;
}

/**
 * A modal dialog (native <dialog>, showModal: the rest of the page is inert): focus moves into it (to Cancel for a
 * destructive action) and Tab cycles inside it; Escape cancels; focus goes back to what opened it.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  destructive,
  busy,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  destructive?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const headingId = useId();
  const bodyId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    dialog.querySelector<HTMLElement>('[data-initial-focus]')?.focus();
    return () => {
      if (dialog.open) dialog.close();
      if (opener?.isConnected) opener.focus();
      else document.getElementById('main')?.focus();
    };
  }, []);
  const trap = (event: KeyboardEvent) => {
    if (event.key !== 'Tab' || !ref.current) return;
    const focusable = [...ref.current.querySelectorAll<HTMLElement>('button:not(:disabled), a[href], [tabindex="0"]')];
    const first = focusable[0];
    const last = focusable.at(-1);
    if (!first || !last) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };
  return (
    <dialog
      ref={ref}
      className={destructive ? 'dialog dialog-danger' : 'dialog'}
      aria-labelledby={headingId}
      aria-describedby={bodyId}
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
      onKeyDown={trap}
    >
      <Heading id={headingId}>{title}</Heading>
      <div id={bodyId}>{children}</div>
      <div className="dialog-buttons">
        <button
          type="button"
          className={destructive ? 'danger' : undefined}
          disabled={busy}
          onClick={onConfirm}
          data-initial-focus={destructive ? undefined : true}
        >
          {confirmLabel}
        </button>
        <button
          type="button"
          className="secondary"
          onClick={onCancel}
          data-initial-focus={destructive ? true : undefined}
        >
          Cancel
        </button>
      </div>
    </dialog>
  );
}

// ---- one console action as a form ----

export type FieldSpec =
  | { name: string; label: string; kind: 'text'; optional?: boolean; initial?: string; rule?: string }
  | { name: string; label: string; kind: 'credits'; optional?: boolean; initial?: string; min?: number }
  | { name: string; label: string; kind: 'select'; options: string[]; initial?: string }
  | { name: string; label: string; kind: 'checkbox'; initial?: boolean }
  /** A local date and time (datetime-local), sent as an RFC 3339 instant. */
  | { name: string; label: string; kind: 'datetime'; initial?: string };

/** What went wrong with a submission: in the browser (no code) or at the server (its code). */
export interface Problem {
  field: string | undefined;
  sentence: string;
  code?: string;
}

// Any action starting clears the messages of every form ("done", errors): the page shows only the latest outcome.
const actions = new EventTarget();
/** Says that an action of `source` starts: every other form clears its messages. */
export const announceStart = (source: string) => actions.dispatchEvent(new CustomEvent('start', { detail: source }));

/** Runs `clear` whenever an action other than `source`'s starts (see announceStart). */
export function useClearOnAction(source: string, clear: () => void) {
  const clearRef = useRef(clear);
  clearRef.current = clear;
  useEffect(() => {
    const listener = (event: Event) => {
      if ((event as CustomEvent<string>).detail !== source) clearRef.current();
    };
    actions.addEventListener('start', listener);
    return () => actions.removeEventListener('start', listener);
  }, [source]);
}

export interface ActionFormProps {
  action: string;
  title: string;
  submitLabel?: string;
  fields: FieldSpec[];
  /** Fixed parts of the input (ids). */
  fixed?: Record<string, unknown>;
  /** The field the server's error is shown at (default: the first field). */
  errorField?: string;
  /** Rows of a confirmation step shown before the action runs: [label, before, after]. */
  confirm?: (input: Record<string, unknown>) => Array<[string, string, string]>;
  /**
   * What the console already knows the server would refuse (a ceiling or limit passed, from the figures it shows):
   * a sentence at the amount field, saying how much room is left; nothing is sent and no "after" figures are shown.
   */
  limit?: (input: Record<string, unknown>) => Problem | undefined;
  /** The room left under the limit this action may pass, as a sentence (added to the server's limit refusals). */
  room?: () => string;
  /**
   * A destructive action: the confirmation to ask for (undefined: none needed for this input). It may be read from the
   * server first (a promise; a second submission meanwhile is ignored), and may then be a problem at a field instead
   * (nothing sent).
   */
  danger?: (input: Record<string, unknown>) => DangerSpec | undefined | Promise<DangerSpec | Problem | undefined>;
  onDone?: (result: ActionResult, input: Record<string, unknown>) => void;
  /** Rewrites the input before it is sent (e.g. an e-mail into an identity subject). */
  transform?: (input: Record<string, unknown>) => Promise<Record<string, unknown>>;
  compact?: boolean;
  /** Extra class of the submit button (e.g. "danger"). */
  submitClass?: string;
}

/** The server's refusals of an amount that passes a ceiling or limit. */
const LIMIT_CODES = new Set(['limit_exceeded', 'project_limit', 'game_limit', 'insufficient_funds']);

/** A datetime-local input's value (the browser's time zone) as an RFC 3339 instant; undefined when not a time. */
export function instantOf(local: string): string | undefined {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(local.trim())) return undefined;
  const time = new Date(local.trim()).getTime();
  return Number.isFinite(time) ? new Date(time).toISOString() : undefined;
}

/** An instant as a datetime-local input's value, in the browser's time zone, to the minute. */
export function localInputValue(instant: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${instant.getFullYear()}-${pad(instant.getMonth() + 1)}-${pad(instant.getDate())}T${pad(instant.getHours())}:${pad(instant.getMinutes())}`;
}

const initialValues = (fields: FieldSpec[]) =>
  Object.fromEntries(fields.map((f) => [f.name, f.kind === 'checkbox' ? (f.initial ?? false) : (f.initial ?? '')]));

/**
 * One console action as a form. Credits are checked in the browser (a plain sentence, no request); the server
 * decides everything else, and its refusal appears at the field as a plain sentence with its code.
 */
export function ActionForm(props: ActionFormProps) {
  const id = useId();
  const initial = initialValues(props.fields);
  const initialKey = JSON.stringify(initial);
  const [values, setValues] = useState<Record<string, string | boolean>>(initial);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [pending, setPending] = useState<
    { input: Record<string, unknown>; danger: DangerSpec | undefined } | undefined
  >();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | undefined>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: initialKey stands for the initial values
  useEffect(() => setValues(initialValues(props.fields)), [initialKey]);
  useEffect(() => {
    const clear = (event: Event) => {
      if ((event as CustomEvent<string>).detail === id) return;
      setDone(undefined);
      setProblem(undefined);
    };
    actions.addEventListener('start', clear);
    return () => actions.removeEventListener('start', clear);
  }, [id]);

  const start = () => {
    announceStart(id);
    setDone(undefined);
    setProblem(undefined);
  };

  /** The input to send, or the first field the browser refuses. */
  const buildInput = (): { input: Record<string, unknown> } | { problem: Problem } => {
    const input: Record<string, unknown> = { ...props.fixed };
    for (const field of props.fields) {
      const raw = values[field.name] ?? '';
      if (field.kind === 'checkbox') {
        input[field.name] = raw;
        continue;
      }
      const text = String(raw);
      if ('optional' in field && field.optional && text.trim() === '') continue;
      if (field.kind === 'credits') {
        const parsed = parseCredits(text, field.min ?? 0);
        if ('problem' in parsed) return { problem: { field: field.name, sentence: parsed.problem } };
        input[field.name] = parsed.value;
      } else if (field.kind === 'text' && text.trim() === '') {
        return { problem: { field: field.name, sentence: `${field.label} cannot be empty.` } };
      } else if (field.kind === 'datetime') {
        const instant = instantOf(text);
        if (!instant) return { problem: { field: field.name, sentence: 'Enter a date and a time.' } };
        input[field.name] = instant;
      } else input[field.name] = text;
    }
    return { input };
  };

  const run = async (input: Record<string, unknown>) => {
    setBusy(true);
    try {
      const sent = props.transform ? await props.transform({ ...input }) : input;
      const result = await runAction(props.action, sent);
      setPending(undefined);
      setValues(initial);
      setDone(`${props.title}: done.`);
      props.onDone?.(result, input);
    } catch (thrown) {
      setPending(undefined);
      const failure: ServerFailure = isFailure(thrown) ? thrown : { code: 'error', message: String(thrown) };
      // The server names the input field in its message: the failure is shown there, else at errorField.
      const named = props.fields.find((f) => new RegExp(`\\b${f.name}\\b`).test(failure.message))?.name;
      const field = named ?? props.errorField ?? props.fields[0]?.name;
      const spec = props.fields.find((f) => f.name === field);
      const rule =
        spec?.kind === 'text'
          ? spec.rule
          : spec?.kind === 'credits'
            ? `Enter a whole number of credits${(spec.min ?? 0) > 0 ? ' above 0' : ''}, like 1,000.`
            : undefined;
      const sentence = sentenceOf(failure, { action: props.action, rule });
      const room = LIMIT_CODES.has(failure.code) && props.room ? ` ${props.room()}` : '';
      setProblem({ field, code: failure.code, sentence: `${sentence}${room}` });
    } finally {
      setBusy(false);
    }
  };

  const asking = useRef(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (asking.current) return;
    start();
    const built = buildInput();
    if ('problem' in built) {
      setProblem(built.problem);
      return;
    }
    const limited = props.limit?.(built.input);
    if (limited) {
      setProblem(limited);
      return;
    }
    const asked = props.danger?.(built.input);
    const ask = (danger: DangerSpec | undefined) => {
      if (danger || props.confirm) setPending({ input: built.input, danger });
      else void run(built.input);
    };
    if (!(asked instanceof Promise)) {
      ask(asked);
      return;
    }
    // Read from the server: the button stays enabled (and focused, for the dialog to give the focus back to it), a
    // second submission meanwhile is ignored.
    asking.current = true;
    void asked.then(
      (answer) => {
        asking.current = false;
        if (answer && 'sentence' in answer) setProblem(answer);
        else ask(answer);
      },
      (thrown: unknown) => {
        asking.current = false;
        const failure: ServerFailure = isFailure(thrown) ? thrown : { code: 'error', message: String(thrown) };
        setProblem({
          field: props.fields[0]?.name,
          code: failure.code,
          sentence: sentenceOf(failure, { action: props.action }),
        });
      },
    );
  };

  const errorId = `${id}-error`;
  const message = problem && (
    <p className="error" id={errorId} role="alert">
      {problem.sentence}
      {problem.code && (
        <>
          {' '}
          <span className="code">({problem.code})</span>
        </>
      )}
    </p>
  );
  const submitLabel = props.submitLabel ?? props.title;
  return (
    <form className={props.compact ? 'action compact' : 'action'} onSubmit={submit} aria-label={props.title} noValidate>
      {!props.compact && <Heading>{props.title}</Heading>}
      {props.fields.map((field) => {
        const fieldId = `${id}-${field.name}`;
        const hintId = `${fieldId}-hint`;
        const invalid = problem !== undefined && field.name === problem.field;
        const credit =
          field.kind === 'credits' && !props.compact ? parseCredits(String(values[field.name] ?? ''), 0) : undefined;
        const describedBy = [invalid ? errorId : '', credit ? hintId : ''].filter(Boolean).join(' ') || undefined;
        const common = {
          id: fieldId,
          name: field.name,
          'aria-invalid': invalid || undefined,
          'aria-describedby': describedBy,
        };
        const set = (value: string | boolean) => setValues((v) => ({ ...v, [field.name]: value }));
        return (
          <div className="field" key={field.name}>
            {field.kind === 'checkbox' ? (
              <label htmlFor={fieldId} className="check">
                <input
                  {...common}
                  type="checkbox"
                  checked={Boolean(values[field.name])}
                  onChange={(e) => set(e.target.checked)}
                />{' '}
                {field.label}
              </label>
            ) : (
              <>
                <label htmlFor={fieldId}>{field.label}</label>
                {field.kind === 'select' ? (
                  <select {...common} value={String(values[field.name] ?? '')} onChange={(e) => set(e.target.value)}>
                    {field.options.map((option) => (
                      <option key={option} value={option}>
                        {option}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    {...common}
                    type={field.kind === 'datetime' ? 'datetime-local' : 'text'}
                    inputMode={field.kind === 'credits' ? 'numeric' : undefined}
                    autoComplete="off"
                    value={String(values[field.name] ?? '')}
                    onChange={(e) => set(e.target.value)}
                  />
                )}
              </>
            )}
            {credit && (
              <p className="hint field-hint" id={hintId}>
                {'value' in credit ? `= ${dollars(credit.value)} sandbox test credit` : '1,000 credits = $1'}
              </p>
            )}
            {invalid && message}
          </div>
        );
      })}
      {problem && !props.fields.some((f) => f.name === problem.field) && message}
      <button type="submit" disabled={busy} className={props.submitClass}>
        {submitLabel}
      </button>
      {done && (
        <p className="done" role="status">
          {done}
        </p>
      )}
      {pending?.danger && (
        <ConfirmDialog
          title={pending.danger.title}
          confirmLabel={pending.danger.confirmLabel}
          destructive={pending.danger.destructive ?? true}
          busy={busy}
          onConfirm={() => void run(pending.input)}
          onCancel={() => setPending(undefined)}
        >
          <p>{pending.danger.body}</p>
        </ConfirmDialog>
      )}
      {pending && !pending.danger && props.confirm && (
        <ConfirmDialog
          title={`Confirm: ${props.title}`}
          confirmLabel={`Confirm ${submitLabel}`}
          busy={busy}
          onConfirm={() => void run(pending.input)}
          onCancel={() => setPending(undefined)}
        >
          <table>
            <caption>Before and after (sandbox test credit: 1,000 credits = $1)</caption>
            <thead>
              <tr>
                <th scope="col">Figure</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {props.confirm(pending.input).map(([label, before, after]) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  <td>{before}</td>
                  <td>{after}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ConfirmDialog>
      )}
    </form>
  );
}
