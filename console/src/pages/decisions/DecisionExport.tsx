// The decision search's "Export" (docs/console.md "Decision export"): the decisions of the search's game in
// its window that match its filters, oldest first, as NDJSON or CSV, fetched with the session's token and saved by
// the browser; an export cut short says so (what came is still saved, and where to resume); and the same request as
// a curl command for an export too large for a browser tab.
import { useEffect, useState } from 'react';
import { currentSessionToken, failureOf, type ServerFailure } from '../../api.ts';
import { CopyButton, FailureText } from '../../components.tsx';
import {
  cutShortBy,
  DECISION_EXPORT_PATH,
  decisionsText,
  type ExportFormat,
  exportCurl,
  exportedCount,
  exportFileName,
  exportPlan,
} from './export-query.ts';
import { playerIdOf } from './SearchFailure.tsx';
import { isExternalPlayerId, type Search } from './search.ts';

type ExportState =
  | { kind: 'idle' }
  | { kind: 'running'; format: ExportFormat; bytes: number }
  | { kind: 'saved'; fileName: string; records: number; bytes: number; cut?: ServerFailure | undefined }
  | { kind: 'failed'; failure: ServerFailure };

/** The envelope of a refused export (`{"error": {code, message}}`), or a failure of the console's own words. */
async function refusalOf(response: Response): Promise<ServerFailure> {
  const body = (await response.json().catch(() => undefined)) as { error?: ServerFailure } | undefined;
  return body?.error?.code ? { code: body.error.code, message: body.error.message } : failureOf(response);
}

function saveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 ** 2
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1024 ** 2).toFixed(1)} MB`;

export function DecisionExport({ search, disabled }: { search: Search; disabled: boolean }) {
  const [state, setState] = useState<ExportState>({ kind: 'idle' });
  // A game's own player id is looked up (as the search does) for the curl command; the export looks it up again.
  const external = Boolean(search.game && isExternalPlayerId(search.player));
  const [playerId, setPlayerId] = useState<string | undefined>();
  useEffect(() => {
    setPlayerId(undefined);
    if (!search.game || !search.player || !isExternalPlayerId(search.player)) return;
    let stopped = false;
    playerIdOf(search.game, search.player).then(
      (id) => !stopped && setPlayerId(id),
      () => undefined,
    );
    return () => {
      stopped = true;
    };
  }, [search.game, search.player]);
  const preview = exportPlan(search, 'ndjson', Date.now(), playerId);
  const curl = (plan: { query: string; from: string; to: string }) =>
    exportCurl(window.location.origin, plan.query, exportFileName(search.game ?? '', plan.from, plan.to, 'ndjson'));

  const run = async (format: ExportFormat) => {
    setState({ kind: 'running', format, bytes: 0 });
    try {
      const playerId =
        search.game && isExternalPlayerId(search.player) ? await playerIdOf(search.game, search.player) : undefined;
      const plan = exportPlan(search, format, Date.now(), playerId);
      if ('problem' in plan) throw { code: 'invalid_export', message: plan.problem } satisfies ServerFailure;
      const token = currentSessionToken();
      const response = await fetch(`${DECISION_EXPORT_PATH}?${plan.query}`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      if (!response.ok || !response.body) throw await refusalOf(response);
      const chunks: Uint8Array[] = [];
      let bytes = 0;
      let cut: ServerFailure | undefined;
      const reader = response.body.getReader();
      try {
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          chunks.push(read.value);
          bytes += read.value.length;
          setState({ kind: 'running', format, bytes });
        }
      } catch {
        // CSV's body is aborted when a page fails after the first bytes (NDJSON ends with an error line instead).
        cut = { code: 'DEVELOPER_ACCESS_UNAVAILABLE', message: 'The export stopped before its end.' };
      }
      const blob = new Blob(chunks as BlobPart[], { type: response.headers.get('content-type') ?? 'text/plain' });
      const text = await blob.text();
      cut ??= format === 'ndjson' ? cutShortBy(text) : undefined;
      const fileName = exportFileName(search.game!, plan.from, plan.to, format);
      saveFile(blob, fileName);
      setState({ kind: 'saved', fileName, records: exportedCount(text, format), bytes, cut });
    } catch (error) {
      const failure = error as ServerFailure | undefined;
      setState({ kind: 'failed', failure: failure?.code ? failure : failureOf(error) });
    }
  };

  const running = state.kind === 'running';
  return (
    <section className="decision-export" aria-labelledby="decision-export-title">
      <h2 id="decision-export-title">Export</h2>
      {'problem' in preview ? (
        <p className="hint">{preview.problem}</p>
      ) : (
        <p className="hint">
          Every decision of this game received from {preview.from.slice(0, 16).replace('T', ' ')} to{' '}
          {preview.to.slice(0, 16).replace('T', ' ')} UTC that matches the filters, oldest first (at most 31 days).
        </p>
      )}
      <p>
        {(['ndjson', 'csv'] as const).map((format) => (
          <span key={format}>
            <button
              type="button"
              className="secondary"
              disabled={disabled || running || 'problem' in preview}
              onClick={() => void run(format)}
            >
              Export {format === 'csv' ? 'CSV' : 'NDJSON'}
            </button>{' '}
          </span>
        ))}
      </p>
      <p aria-live="polite" className="export-status">
        {state.kind === 'running' && `Exporting… ${size(state.bytes)} received.`}
        {state.kind === 'saved' &&
          !state.cut &&
          `Saved ${state.fileName}: ${decisionsText(state.records)} (${size(state.bytes)}).`}
      </p>
      {state.kind === 'saved' && state.cut && (
        <p className="error" role="alert">
          The export was cut short after {decisionsText(state.records)} (saved as {state.fileName}):{' '}
          <FailureText failure={state.cut} />. Export again from the last decision's received time to get the rest.
        </p>
      )}
      {state.kind === 'failed' && (
        <p className="error" role="alert">
          {state.failure.code === 'INVALID_RECORD_QUERY' || state.failure.code === 'invalid_export' ? (
            <>
              {state.failure.message} <span className="code">({state.failure.code})</span>
            </>
          ) : (
            <FailureText failure={state.failure} action="export" />
          )}
        </p>
      )}
      {!('problem' in preview) && (!external || playerId) && (
        <details>
          <summary>Export with curl (for a large export)</summary>
          <p className="hint">Replace $TOKEN with a developer token: the same filters and window, as NDJSON.</p>
          <pre>{curl(preview)}</pre>
          <CopyButton value={curl(preview)} label="Copy the command" />
        </details>
      )}
    </section>
  );
}
