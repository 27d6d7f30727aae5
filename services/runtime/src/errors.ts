// Errors that reach a caller. Every failure the API reports is an AppError: status, code and message are exactly
// what the error envelope `{ "error": { "code", "message", ...extra } }` carries.

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown> | undefined;

  constructor(status: number, code: string, message: string, extra?: Record<string, unknown>) {
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
 */
export class DependencyUnavailableError extends AppError {
  readonly dependency: string;

  constructor(dependency: string, detail: string) {
    super(503, 'PLATFORM_UNAVAILABLE', `A dependency is temporarily unavailable; retry later.`);
    this.name = 'DependencyUnavailableError';
    this.dependency = dependency;
    this.cause = detail;
  }
}

/** Re-labels an unavailable dependency with the code an endpoint promises for it; other errors pass through. */
export function relabelUnavailable(error: unknown, code: string, message?: string): unknown {
  if (error instanceof DependencyUnavailableError) {
    return new AppError(503, code, message ?? error.message);
  }
  return error;
}

export const notFound = (message = 'Not found.') => new AppError(404, 'not_found', message);
