// Errors that reach a caller. Every failure the API reports is an AppError: status, code and message are exactly
// what the error envelope `{ "error": { "code", "message", ...extra } }` carries. Codes come from one table
// (contracts/error-codes.ts).
import { ERROR_CODES, type ErrorCode } from './contracts/error-codes.ts';

/** Codes with one status in the table: `new AppError(code, message)` looks that status up. */
export type SingleStatusCode = {
  [K in ErrorCode]: (typeof ERROR_CODES)[K]['statuses'] extends readonly [number] ? K : never;
}[ErrorCode];

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly extra: Record<string, unknown> | undefined;

  /** The status is the table's: only codes with exactly one status are accepted here (see `withStatus`). */
  constructor(code: SingleStatusCode, message: string, extra?: Record<string, unknown>);
  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> | undefined, status: number);
  constructor(code: ErrorCode, message: string, extra?: Record<string, unknown>, status?: number) {
    super(message);
    const statuses: readonly number[] = ERROR_CODES[code].statuses;
    const chosen = status ?? statuses[0];
    if (chosen === undefined || !statuses.includes(chosen) || (status === undefined && statuses.length > 1)) {
      throw new Error(`error code ${code}: status ${status ?? 'unnamed'} is not one of its table's (${statuses})`);
    }
    this.name = 'AppError';
    this.code = code;
    this.status = chosen;
    this.extra = extra;
  }

  /**
   * An error whose status is named: for the codes the table lists with two statuses (`invalid_link`,
   * `unlimited_funding`), and for a code that arrived from elsewhere with its status (a reply over NATS). The status
   * must be one the table lists for the code; anything else is a bug and throws.
   */
  static withStatus(status: number, code: ErrorCode, message: string, extra?: Record<string, unknown>): AppError {
    return new AppError(code, message, extra, status);
  }

  toEnvelope(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...(this.extra ?? {}) } };
  }
}

/**
 * A state owner could not be reached (no responders, timeout, connection closed). Edges translate it into the
 * endpoint's own 503 code (`retry_later`, `AUTH_UNAVAILABLE`, ...); untranslated it is `PLATFORM_UNAVAILABLE`.
 * `outcome` says what is known of the request: `not_delivered` when no state owner received it (no responders, or
 * NATS was disconnected so it was never sent), `unknown` when it may have been handled and only the reply was lost
 * (a timeout, a connection lost while the request was in flight).
 */
export class DependencyUnavailableError extends AppError {
  readonly dependency: string;
  readonly outcome: 'not_delivered' | 'unknown';

  constructor(dependency: string, detail: string, outcome: 'not_delivered' | 'unknown' = 'unknown') {
    super('PLATFORM_UNAVAILABLE', `A dependency is temporarily unavailable; retry later.`);
    this.name = 'DependencyUnavailableError';
    this.dependency = dependency;
    this.outcome = outcome;
    this.cause = detail;
  }
}

/**
 * Re-labels an unavailable dependency with the code an endpoint promises for it; other errors pass through.
 * `messages.unknown`, when given, replaces the message where the request may have been handled (a mutation whose
 * reply was lost must not claim that nothing happened).
 */
export function relabelUnavailable(
  error: unknown,
  code: ErrorCode,
  message?: string,
  messages: { unknown?: string } = {},
): unknown {
  if (error instanceof DependencyUnavailableError) {
    const text = error.outcome === 'unknown' && messages.unknown ? messages.unknown : (message ?? error.message);
    return AppError.withStatus(503, code, text);
  }
  return error;
}

export const notFound = (message = 'Not found.') => new AppError('not_found', message);
