import { createContext, type ReactNode, useContext, useEffect, useId, useRef, useState } from 'react';
import type { ServerFailure } from './api.ts';
import { sentenceOf } from './errors.ts';
import { credits, dollars } from './money.ts';

export {
  ActionForm,
  type ActionFormProps,
  announceStart,
  ConfirmDialog,
  type DangerSpec,
  type FieldSpec,
  type Problem,
  useClearOnAction,
} from './action-form.tsx';
export {
  amountAbove,
  amountOf,
  CREDITS_PER_DOLLAR,
  credits,
  creditsWithDollars,
  dollars,
  figure,
  parseCredits,
  roomLeft,
} from './money.ts';

// ---- heading levels: each page has one h1; sections, cards, forms and dialogs take the next level down ----

const Level = createContext(2);

export function Heading({ children, id, className }: { children: ReactNode; id?: string; className?: string }) {
  const level = Math.min(6, useContext(Level));
  const Tag = `h${level}` as 'h2';
  return (
    <Tag id={id} className={className} tabIndex={id ? -1 : undefined}>
      {children}
    </Tag>
  );
}

/** Children one heading level below the current one. */
export function Deeper({ children }: { children: ReactNode }) {
  const level = useContext(Level);
  return <Level.Provider value={level + 1}>{children}</Level.Provider>;
}

export function Section({ title, children, className }: { title: string; children: ReactNode; className?: string }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className={className}>
      <Heading id={id}>{title}</Heading>
      <Deeper>{children}</Deeper>
    </section>
  );
}

const timestamp = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });
/** A decision's time as a table shows it, short enough for one line: "11/28/26, 12:36:09 PM" (the browser's locale). */
export const when = (instant: string) => timestamp.format(new Date(instant));

/** A table that scrolls sideways inside its own box on a narrow screen (the page never does). */
export function TableBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe)
    <section className="table-box" aria-label={`${label} (scrolls sideways)`} tabIndex={0}>
      {children}
    </section>
  );
}

/** A labelled bar: value against a maximum (a ceiling or a budget), with the figures in text. */
export function Bar({ label, value, max, detail }: { label: string; value: number; max: number; detail?: string }) {
  const ratio = max > 0 ? Math.min(1, value / max) : 0;
  return (
    <div className="bar">
      <span className="bar-label">
        {label}: {credits(value)}
        {detail ? ` ${detail}` : ` of ${credits(max)}`} <span className="usd">({dollars(value)})</span>
      </span>
      <meter className="bar-track" aria-label={label} min={0} max={Math.max(max, value, 1)} value={value}>
        {(ratio * 100).toFixed(0)}%
      </meter>
    </div>
  );
}

/** A failure as the page shows it: a plain sentence, and the code (the key to docs/errors.md). */
export function FailureText({ failure, action, rule }: { failure: ServerFailure; action?: string; rule?: string }) {
  return (
    <>
      {sentenceOf(failure, { action, rule })} <span className="code">({failure.code})</span>
    </>
  );
}

export function FailureAlert({ failure, id }: { failure: ServerFailure; id?: string }) {
  return (
    <p className="error" role="alert" id={id}>
      <FailureText failure={failure} />
    </p>
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

/** The document's title for a page: "<page> · Sandbox Rewards console". */
export function useTitle(title: string) {
  useEffect(() => {
    document.title = `${title} · Sandbox Rewards console`;
  }, [title]);
}

/**
 * A write form behind its action button ("New …", "Edit …"): the button (aria-expanded) shows the form and moves the
 * focus to its first field; pressing it again, or the form's Close button, hides it and gives the focus back.
 */
export function Reveal({
  label,
  children,
  className,
  buttonClass,
}: {
  label: string;
  children: ReactNode;
  className?: string;
  buttonClass?: string;
}) {
  const [open, setOpen] = useState(false);
  const regionId = useId();
  const button = useRef<HTMLButtonElement>(null);
  const region = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (open) region.current?.querySelector<HTMLElement>('input, select, textarea, button')?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  return (
    <div className={className ? `reveal ${className}` : 'reveal'}>
      <button
        type="button"
        ref={button}
        className={buttonClass ?? 'secondary'}
        aria-expanded={open}
        aria-controls={regionId}
        onClick={() => (open ? close() : setOpen(true))}
      >
        {label}
      </button>
      <div id={regionId} ref={region} hidden={!open} className="reveal-body">
        {open && (
          <>
            {children}
            <button type="button" className="link-button" onClick={close}>
              Close {label.charAt(0).toLowerCase() + label.slice(1)}
            </button>
          </>
        )}
      </div>
    </div>
  );
}
