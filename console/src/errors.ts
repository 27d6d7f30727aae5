// Plain sentences for the server's failures, chosen by extensions.code (and the action that failed): the page never
// shows the server's raw message, which for a request GraphQL refused before running it is schema text such as
// `Variable "$input" got invalid value ...; Expected type "PositiveCredits"`. The code stays visible beside the
// sentence, as the key to the API's documentation (docs/errors.md).
import type { ServerFailure } from './api.ts';

export interface FailureContext {
  /** The console action that failed (a mutation's name), when it was one. */
  action?: string | undefined;
  /** A sentence saying what the field at fault accepts (invalid_action). */
  rule?: string | undefined;
}

const INPUT = 'Some of what you typed is not accepted: check the highlighted field and try again.';

const BY_ACTION: Record<string, Record<string, string>> = {
  insufficient_funds: {
    allocateProject:
      "The organization's balance is lower than this amount: fund the organization first, or allocate less.",
    allocateGame:
      'The project has less budget left for its games than this amount: allocate more to the project first, or allocate less.',
  },
  limit_exceeded: {
    fundOrganization: 'A balance can hold at most 1,000,000,000,000 credits: fund less.',
    updateProject: "A project's ceiling cannot be lower than its budget or what its games spent.",
    updateGame: "A game's ceiling cannot be lower than its budget or what it has spent.",
  },
  conflict: {
    createRule: 'This game already has a rule for this event type: change that rule instead.',
    addMember: 'This person is already a member of the organization.',
  },
  unlimited_funding: {
    fundOrganization: 'This organization has unlimited funding: it needs no funding.',
    createOrganization: 'Your invitation does not allow organizations with unlimited funding.',
  },
};

const BY_CODE: Record<string, string> = {
  project_limit: "This would take the project's budget above its ceiling: raise the ceiling, or allocate less.",
  game_limit: "This would take the game's budget above its ceiling: raise the game's ceiling, or allocate less.",
  insufficient_funds: 'There are not enough credits for this amount.',
  limit_exceeded: 'This would pass a ceiling or a limit.',
  conflict: 'This conflicts with something that already exists.',
  unlimited_funding: 'Unlimited funding is not allowed here.',
  owner_immutable: "The organization's owner cannot be changed or removed.",
  forbidden: 'Your role in this organization does not allow this.',
  not_found: 'This no longer exists, or you are no longer a member of its organization.',
  UNAUTHORIZED: 'Your session is not valid any more: sign in again.',
  SESSION_EXPIRED: 'Your session has ended: sign in again.',
  INVALID_SESSION_ORIGIN: 'The service does not accept sign-ins from this address (ALLOWED_ORIGINS).',
  EMAIL_VERIFICATION_REQUIRED: 'Your e-mail address is not verified at your identity provider yet.',
  DEVELOPER_INVITATION_REQUIRED:
    'This e-mail has no invitation to the console yet: ask the operator to invite it (npm run admin -- invite EMAIL).',
  DEV_SESSION_LOCAL_ONLY: 'The development sign-in works only on the machine the service runs on.',
  AUTH_UNAVAILABLE: 'Sign-in is unavailable for a moment: try again shortly.',
  DEVELOPER_ACCESS_UNAVAILABLE: 'The console is unavailable for a moment: try again shortly.',
  PLATFORM_UNAVAILABLE: 'The service is unavailable for a moment: try again shortly.',
  PLATFORM_DISABLED: 'The operator has switched the platform off for now.',
  INVALID_RECORD_QUERY: 'The page size must be a whole number from 1 to 100.',
  INVALID_CURSOR: 'This page is no longer valid: start again from the first page.',
  INVALID_STATS_QUERY: 'This chart window cannot be read.',
  PAYLOAD_TOO_LARGE: 'What you typed is too long.',
  internal_error: 'The service failed to handle this request: try again.',
  network_error: 'The console could not reach the service: check the connection and try again.',
  CONSOLE_NOT_BUILT: 'The console is not built on this server.',
};

/** The sentence the page shows for a failure. */
export function sentenceOf(failure: ServerFailure, context: FailureContext = {}): string {
  const { code } = failure;
  if (code === 'invalid_action' || code === 'INVALID_REQUEST' || code === 'BAD_USER_INPUT')
    return context.rule ?? INPUT;
  const byAction = context.action ? BY_ACTION[code]?.[context.action] : undefined;
  if (byAction) return byAction;
  if (BY_CODE[code]) return BY_CODE[code];
  if (/^\d+$/.test(code)) return 'The service answered with an error: try again shortly.';
  return 'The service refused this request.';
}
