import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { type ActionResult, isFailure, runAction, type ServerFailure } from './api.ts';

export const credits = (value: number) => value.toLocaleString('en-US');

/** A labelled bar: value against a maximum (a ceiling or a budget), with the figures in text. */
export function Bar({ label, value, max, detail }: { label: string; value: number; max: number; detail?: string }) {
  const ratio = max > 0 ? Math.min(1, value / max) : 0;
  return (
    <div className="bar">
      <span className="bar-label">
        {label}: {credits(value)}
        {detail ? ` ${detail}` : ` of ${credits(max)}`}
      </span>
      <meter className="bar-track" aria-label={label} min={0} max={Math.max(max, value, 1)} value={value}>
        {(ratio * 100).toFixed(0)}%
      </meter>
    </div>
  );
}

export type FieldSpec =
  | { name: string; label: string; kind: 'text' | 'credits'; optional?: boolean; initial?: string }
  | { name: string; label: string; kind: 'select'; options: string[]; optional?: boolean; initial?: string }
  | { name: string; label: string; kind: 'checkbox'; initial?: boolean };

/** Credits fields: digits become a number; anything else is sent as typed, so the server's refusal is shown. */
function inputValue(field: FieldSpec, raw: string | boolean): unknown {
  if (field.kind === 'checkbox') return raw;
  const text = String(raw);
  if (field.kind === 'credits') return /^\d+$/.test(text.trim()) ? Number(text.trim()) : text;
  return text;
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
  onDone?: (result: ActionResult, input: Record<string, unknown>) => void;
  /** Rewrites the input before it is sent (e.g. an e-mail into an identity subject). */
  transform?: (input: Record<string, unknown>) => Promise<Record<string, unknown>>;
  compact?: boolean;
}

/** One console action as a form: the server validates; its code and message appear at the field. */
export function ActionForm(props: ActionFormProps) {
  const id = useId();
  const initial = Object.fromEntries(
    props.fields.map((f) => [f.name, f.kind === 'checkbox' ? (f.initial ?? false) : (f.initial ?? '')]),
  );
  const [values, setValues] = useState<Record<string, string | boolean>>(initial);
  const [error, setError] = useState<ServerFailure | undefined>();
  const [pending, setPending] = useState<Record<string, unknown> | undefined>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | undefined>();
  // The error is shown at the field its message names (the server names the input field), else at errorField.
  const errorField =
    (error && props.fields.find((f) => new RegExp(`\\b${f.name}\\b`).test(error.message))?.name) ??
    props.errorField ??
    props.fields[0]?.name;

  const buildInput = () => {
    const input: Record<string, unknown> = { ...props.fixed };
    for (const field of props.fields) {
      const raw = values[field.name] ?? '';
      if (field.kind !== 'checkbox' && field.optional && raw === '') continue;
      input[field.name] = inputValue(field, raw);
    }
    return input;
  };

  const run = async (input: Record<string, unknown>) => {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const sent = props.transform ? await props.transform({ ...input }) : input;
      const result = await runAction(props.action, sent);
      setPending(undefined);
      setValues(initial);
      setDone(`${props.title}: done.`);
      props.onDone?.(result, input);
    } catch (failure) {
      setPending(undefined);
      setError(isFailure(failure) ? failure : { code: 'error', message: String(failure) });
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const input = buildInput();
    if (props.confirm) {
      setError(undefined);
      setPending(input);
    } else {
      void run(input);
    }
  };

  const errorId = `${id}-error`;
  return (
    <form className={props.compact ? 'action compact' : 'action'} onSubmit={submit} aria-label={props.title} noValidate>
      {!props.compact && <h4>{props.title}</h4>}
      {props.fields.map((field) => {
        const fieldId = `${id}-${field.name}`;
        const invalid = error !== undefined && field.name === errorField;
        const common = {
          id: fieldId,
          name: field.name,
          'aria-invalid': invalid || undefined,
          'aria-describedby': invalid ? errorId : undefined,
        };
        return (
          <div className="field" key={field.name}>
            {field.kind === 'checkbox' ? (
              <label htmlFor={fieldId} className="check">
                <input
                  {...common}
                  type="checkbox"
                  checked={Boolean(values[field.name])}
                  onChange={(e) => setValues({ ...values, [field.name]: e.target.checked })}
                />{' '}
                {field.label}
              </label>
            ) : (
              <>
                <label htmlFor={fieldId}>{field.label}</label>
                {field.kind === 'select' ? (
                  <select
                    {...common}
                    value={String(values[field.name] ?? '')}
                    onChange={(e) => setValues({ ...values, [field.name]: e.target.value })}
                  >
                    {field.optional && <option value="">(unchanged)</option>}
                    {field.options.map((option) => (
                      <option key={option} value={option}>
                        {option}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    {...common}
                    type="text"
                    inputMode={field.kind === 'credits' ? 'numeric' : undefined}
                    autoComplete="off"
                    value={String(values[field.name] ?? '')}
                    onChange={(e) => setValues({ ...values, [field.name]: e.target.value })}
                  />
                )}
              </>
            )}
            {invalid && (
              <p className="error" id={errorId} role="alert">
                <code>{error.code}</code>: {error.message}
              </p>
            )}
          </div>
        );
      })}
      {error && !errorField && (
        <p className="error" role="alert">
          <code>{error.code}</code>: {error.message}
        </p>
      )}
      {pending && props.confirm ? (
        <fieldset className="confirm">
          <legend>Confirm: {props.title}</legend>
          <table>
            <caption>Before and after</caption>
            <thead>
              <tr>
                <th scope="col">Figure</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {props.confirm(pending).map(([label, before, after]) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  <td>{before}</td>
                  <td>{after}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="button" disabled={busy} onClick={() => void run(pending)}>
            Confirm {props.submitLabel ?? props.title}
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setPending(undefined)}>
            Cancel
          </button>
        </fieldset>
      ) : (
        <button type="submit" disabled={busy}>
          {props.submitLabel ?? props.title}
        </button>
      )}
      {done && (
        <p className="done" role="status">
          {done}
        </p>
      )}
    </form>
  );
}

export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary"
      onClick={() => {
        void navigator.clipboard
          ?.writeText(value)
          .then(() => setCopied(true))
          .catch(() => setCopied(false));
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** Amount of a confirmation input, or NaN when the typed value is not a whole number. */
export const amountOf = (input: Record<string, unknown>) =>
  typeof input.amountCredits === 'number' ? input.amountCredits : Number.NaN;
export const figure = (value: number) => (Number.isFinite(value) ? credits(value) : '?');
