// Every error code the API answers, in one table: its statuses and what it means. `AppError` takes only these
// (a typed union, so a misspelt code does not compile), the transport checks codes that arrive from other programs
// against it, and `docs/errors.md`'s table of all codes is generated from it (`npm run docs:errors`; `npm run check`
// fails when the docs differ). The per-route tables in docs/errors.md say in which order a route checks them.

interface ErrorCodeEntry {
  /** HTTP statuses; for codes that only close a WebSocket (the decisions subscription), the close code. */
  statuses: readonly number[];
  meaning: string;
}

export const ERROR_CODES = {
  // Everywhere
  not_found: { statuses: [404], meaning: 'unknown route, or a scoped object that does not exist or is not visible' },
  NOT_FOUND: { statuses: [404], meaning: 'the operator API: no such invitation or account' },
  method_not_allowed: { statuses: [405], meaning: 'known path, other method (`Allow` says which)' },
  internal_error: { statuses: [500], meaning: 'a bug, logged with the request id' },
  PLATFORM_DISABLED: { statuses: [503], meaning: 'the operator switched the platform off' },
  PLATFORM_UNAVAILABLE: { statuses: [503], meaning: 'a dependency is unreachable (no more specific code)' },
  INVALID_REQUEST: { statuses: [400], meaning: 'the body is not JSON (I-JSON), or a request outside its schema' },
  INVALID_CONTENT_TYPE: { statuses: [415], meaning: 'Content-Type is not application/json' },
  PAYLOAD_TOO_LARGE: { statuses: [413], meaning: 'the body is over the route’s limit' },
  // Developer sessions
  UNAUTHORIZED: { statuses: [401], meaning: 'no valid, unexpired token of the trusted provider' },
  SESSION_EXPIRED: { statuses: [4401], meaning: 'WebSocket close code: the session’s token expired (subscription)' },
  INVALID_SESSION_ORIGIN: { statuses: [403], meaning: 'an Origin not in ALLOWED_ORIGINS' },
  EMAIL_VERIFICATION_REQUIRED: { statuses: [403], meaning: 'the token’s email_verified is not true' },
  DEVELOPER_INVITATION_REQUIRED: { statuses: [403], meaning: 'no active invitation for the e-mail' },
  AUTH_UNAVAILABLE: { statuses: [503], meaning: 'identity-admission or its store is unreachable' },
  DEV_SESSION_LOCAL_ONLY: {
    statuses: [403],
    meaning: 'the development sign-in (POST /console/dev-session) from anywhere but the server’s own machine',
  },
  DEVELOPER_ACCESS_UNAVAILABLE: { statuses: [503], meaning: 'the developer access read could not be served' },
  TOO_MANY_REQUESTS: {
    statuses: [429, 4029],
    meaning:
      'past the developer’s limits (rate, requests in flight, rule dry-runs; `Retry-After` says when to retry); 4029: WebSocket close code of a connection attempt past them',
  },
  // Console, records, GraphQL
  forbidden: { statuses: [403], meaning: 'the member’s role may not do this' },
  conflict: { statuses: [409], meaning: 'the action conflicts with the current state (e.g. a duplicate)' },
  owner_immutable: { statuses: [409], meaning: 'the organization’s owner cannot be changed or removed' },
  invalid_action: { statuses: [400], meaning: 'a console action outside its schema' },
  insufficient_funds: { statuses: [400], meaning: 'the source has fewer credits than asked for' },
  limit_exceeded: { statuses: [400], meaning: 'a ceiling or count limit would be passed' },
  project_limit: { statuses: [400], meaning: 'an allocation above the project’s ceiling' },
  game_limit: { statuses: [400], meaning: 'an allocation above the game’s ceiling' },
  unlimited_funding: { statuses: [400, 403], meaning: 'unlimited funding is not allowed here / for this caller' },
  INVALID_RECORD_QUERY: { statuses: [400], meaning: 'records or link-intents query parameters are invalid' },
  INVALID_CURSOR: { statuses: [400], meaning: 'a cursor that is not one of this query’s pages' },
  INVALID_STATS_QUERY: { statuses: [400], meaning: 'a decisionStats window or bucket is invalid' },
  SIMULATION_TOO_LARGE: { statuses: [400], meaning: 'simulateRule: the window holds too many decisions' },
  SLOW_CONSUMER: { statuses: [4008], meaning: 'WebSocket close code: a subscriber fell too far behind in reading' },
  TOO_MANY_CONNECTIONS: {
    statuses: [4029],
    meaning: 'WebSocket close code: the developer already holds the most live connections allowed',
  },
  TOO_MANY_SUBSCRIBE_MESSAGES: {
    statuses: [4029],
    meaning: 'WebSocket close code: a live socket sent subscribe messages faster than its bound',
  },
  CONSOLE_NOT_BUILT: { statuses: [503], meaning: 'the web console’s built files are missing' },
  // Game SDK: events and configuration
  invalid_key: { statuses: [401], meaning: 'missing, malformed, unknown or revoked secret key' },
  secret_key_required: { statuses: [403], meaning: 'a public key where a secret key is needed' },
  invalid_event: { statuses: [400], meaning: 'the event is outside GameEventInput' },
  invalid_metadata: {
    statuses: [400],
    meaning: 'the event’s metadata is over its limits, or holds a NUL, a lone surrogate or a number out of range',
  },
  invalid_player: { statuses: [404], meaning: 'playerId is not a player of the key’s game' },
  event_conflict: { statuses: [409], meaning: 'the eventId was used with another payload' },
  retry_later: { statuses: [503], meaning: 'a dependency is down; the message says whether anything was stored' },
  INVALID_PUBLIC_KEY: {
    statuses: [401],
    meaning: 'missing, repeated, malformed, unknown, revoked or secret publicKey',
  },
  // Player links
  INVALID_PLAYER: { statuses: [400], meaning: 'externalPlayerId or playerId is invalid' },
  invalid_link: {
    statuses: [400, 404, 409],
    meaning: 'a malformed link-token body (400); unknown link token (404); used or expired (409)',
  },
  already_linked: { statuses: [409], meaning: 'the player is already linked to another account' },
  // Native sessions
  INVALID_TOKEN: { statuses: [401], meaning: 'the native session token is missing or not valid' },
  INVALID_TOKEN_PAYLOAD: { statuses: [401], meaning: 'the native token lacks a required claim' },
  ACCOUNT_DISABLED: { statuses: [403], meaning: 'the platform account is disabled' },
  ACCOUNT_STATUS_UNAVAILABLE: { statuses: [503], meaning: 'the account status could not be read' },
  CLIENT_UPDATE_REQUIRED: { statuses: [403], meaning: 'the native client build is below NATIVE_MIN_BUILD' },
  DEVICE_VERIFICATION_REQUIRED: { statuses: [403], meaning: 'no device permit for this account and device' },
  DEVICE_ACCOUNT_CONFLICT: { statuses: [409], meaning: 'the device is bound to another account' },
  DEVICE_AUTH_UNAVAILABLE: { statuses: [503], meaning: 'the device permit store is unreachable' },
  GEO_BLOCKED: { statuses: [403], meaning: 'the country is not in SUPPORTED_COUNTRIES' },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** Whether the table lists `status` for `code` (a reply from another program is checked before it is trusted). */
export function isListedStatus(code: ErrorCode, status: number): boolean {
  const statuses: readonly number[] = ERROR_CODES[code].statuses;
  return statuses.includes(status);
}

/** A code that arrived from elsewhere (another program's reply): itself when known, `internal_error` otherwise. */
export function toErrorCode(code: string): ErrorCode {
  return isErrorCode(code) ? code : 'internal_error';
}

/** The Markdown table of every code (docs/errors.md, between its generated-table markers). */
export function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES as Record<string, ErrorCodeEntry>).map(
    ([code, entry]) => `| \`${code}\` | ${entry.statuses.join(', ')} | ${entry.meaning} |`,
  );
  return ['| code | status | meaning |', '|---|---|---|', ...rows].join('\n');
}
