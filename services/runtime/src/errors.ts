// Errors that reach a caller. Every failure the API reports is an AppError: status, code and message are exactly
// what the error envelope `{ "error": { "code", "message", ...extra } }` carries. Codes come from one table
// (contracts/error-codes.ts).
import type { ErrorCode } from './contracts/error-codes.ts';

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly extra: Record<string, unknown> | undefined;

  constructor(status: number, code: ErrorCode, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.extra = extra;
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
    super(503, 'PLATFORM_UNAVAILABLE', `A dependency is temporarily unavailable; retry later.`);
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
    return new AppError(503, code, text);
  }
  return error;
}

export const notFound = (message = 'Not found.') => new AppError(404, 'not_found', message);
