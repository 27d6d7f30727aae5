// `npm run admin -- <command>`: the operator API (CONTRACT section 3) for a person at a terminal. Finds the service
// and the token as every client script does (services/runtime/src/cli/local-service.ts): API_URL or
// http://localhost:<PORT>, ADMIN_TOKEN or the token `npm start` generated under DATA_DIR. Exit codes: 0 done, 1 the
// call failed (API error or unreachable), 2 wrong usage or missing configuration.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN_FILE, dataDirOf, findAdminToken, serviceUrl } from '#runtime/cli/local-service.ts';

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  invite EMAIL [--unlimited]         invite a developer (--unlimited: may create unlimited-funding organizations)
  invitations                        list invitations
  revoke-invitation ID               revoke an invitation
  native-account ID --status active|disabled [--username NAME]
                                     create or update a native account (ID: its creditsUserId, a UUID)
  device-permit --session SID --account UUID [--expires-in SECONDS]
                                     permit a native session on an account (default 3600 s, at most 86400)
  platform on|off                    enable or disable the platform (off: every non-operator route answers 503)
  audit [--limit N] [--cursor C]     the operator's audit trail, newest first: invitations created and revoked,
                                     platform switches (default 100 entries; --cursor: the page after C)

Options:
  --json                             print the API's JSON answer as is
  -h, --help                         show this help

Environment:
  ADMIN_TOKEN   the operator token the gateway was started with; unset: the token npm start generated in
                DATA_DIR/admin-token (DATA_DIR default ./.data)
  API_URL       the service's address; unset: http://localhost:PORT (PORT default 8080, as npm start)

Examples:
  npm run admin -- invite dev@example.com                  # npm start on the defaults
  PORT=18080 npm run admin -- invite dev@example.com       # npm start with PORT=18080
  ADMIN_TOKEN=... API_URL=https://rewards.example npm run admin -- platform off`;

const REQUEST_TIMEOUT_MS = 10_000;

class UsageError extends Error {}
class CallError extends Error {}

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
}

function usage(message: string): never {
  throw new UsageError(message);
}

function expectArgs(command: string, positionals: string[], count: number, names: string): void {
  if (positionals.length !== count) {
    usage(
      `${command} takes ${count === 0 ? 'no arguments' : names}${positionals.length > count ? `; unexpected: ${positionals.slice(count).join(' ')}` : ''}`,
    );
  }
}

function buildCall(command: string, args: string[], options: Record<string, string | boolean | undefined>): Call {
  const only = (allowed: string[]) => {
    for (const [name, value] of Object.entries(options)) {
      if (value !== undefined && name !== 'json' && name !== 'help' && !allowed.includes(name)) {
        usage(`${command} does not take --${name}`);
      }
    }
  };
  switch (command) {
    case 'invite': {
      only(['unlimited']);
      expectArgs(command, args, 1, 'one argument: EMAIL');
      const body: Record<string, unknown> = { email: args[0] };
      if (options.unlimited) body.canCreateUnlimitedOrganization = true;
      return { method: 'POST', path: '/invitations', body };
    }
    case 'invitations':
      only([]);
      expectArgs(command, args, 0, '');
      return { method: 'GET', path: '/invitations' };
    case 'revoke-invitation':
      only([]);
      expectArgs(command, args, 1, 'one argument: the invitation ID');
      return { method: 'POST', path: `/invitations/${encodeURIComponent(args[0] as string)}/revoke` };
    case 'native-account': {
      only(['status', 'username']);
      expectArgs(command, args, 1, 'one argument: the account ID (creditsUserId)');
      const status = options.status;
      if (status !== 'active' && status !== 'disabled')
        usage('native-account needs --status active or --status disabled');
      const body: Record<string, unknown> = { status };
      if (typeof options.username === 'string') body.username = options.username;
      return { method: 'PUT', path: `/native-accounts/${encodeURIComponent(args[0] as string)}`, body };
    }
    case 'device-permit': {
      only(['session', 'account', 'expires-in']);
      expectArgs(command, args, 0, '');
      if (typeof options.session !== 'string') usage('device-permit needs --session SID');
      if (typeof options.account !== 'string') usage('device-permit needs --account UUID');
      const expiresIn = (options['expires-in'] as string | undefined) ?? '3600';
      if (!/^\d{1,5}$/.test(expiresIn) || Number(expiresIn) < 1 || Number(expiresIn) > 86_400) {
        usage(`--expires-in must be a number of seconds from 1 to 86400, got ${expiresIn}`);
      }
      return {
        method: 'POST',
        path: '/device-permits',
        body: { sessionId: options.session, creditsUserId: options.account, expiresInSeconds: Number(expiresIn) },
      };
    }
    case 'audit': {
      only(['limit', 'cursor']);
      expectArgs(command, args, 0, '');
      const query = new URLSearchParams();
      if (typeof options.limit === 'string') {
        if (!/^\d{1,3}$/.test(options.limit) || Number(options.limit) < 1) {
          usage(`--limit must be a number from 1 to 999, got ${options.limit}`);
        }
        query.set('limit', options.limit);
      }
      if (typeof options.cursor === 'string') query.set('cursor', options.cursor);
      const text = query.toString();
      return { method: 'GET', path: `/audit${text ? `?${text}` : ''}` };
    }
    case 'platform': {
      only([]);
      expectArgs(command, args, 1, 'one argument: on or off');
      if (args[0] !== 'on' && args[0] !== 'off') usage(`platform takes on or off, got ${args[0]}`);
      return { method: 'PUT', path: '/platform', body: { enabled: args[0] === 'on' } };
    }
    default:
      usage(`unknown command ${JSON.stringify(command)}`);
  }
}

async function send(apiUrl: string, token: string, call: Call): Promise<unknown> {
  const url = `${apiUrl.replace(/\/+$/, '')}/api/admin/v1${call.path}`;
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw new CallError(
      `cannot reach the API at ${apiUrl} (${reason}). Is the service running? Set API_URL (or PORT) to its address.`,
    );
  }
  const text = await response.text();
  let parsed: { data?: unknown; error?: { code?: string; message?: string } } | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const code = parsed?.error?.code ?? 'error';
    const message = parsed?.error?.message ?? text.slice(0, 200);
    let hint = '';
    if (response.status === 401) hint = '\nhint: ADMIN_TOKEN does not match the token the gateway was started with.';
    if (response.status === 404 && code === 'not_found' && /No route/.test(message)) {
      hint = '\nhint: the operator API is hidden while the gateway has no ADMIN_TOKEN (or API_URL is not the gateway).';
    }
    throw new CallError(`${response.status} ${code}: ${message}${hint}`);
  }
  if (!parsed || !('data' in parsed)) throw new CallError(`unexpected answer from ${url}: ${text.slice(0, 200)}`);
  return parsed.data;
}

function render(command: string, data: unknown): string {
  if (command === 'invitations') {
    const records = (data as { records: Array<Record<string, unknown>> }).records;
    if (records.length === 0) return 'no invitations';
    return records
      .map(
        (r) =>
          `${r.id}  ${String(r.status).padEnd(7)}  ${r.email}${r.canCreateUnlimitedOrganization ? '  (unlimited)' : ''}` +
          `${r.identityUserId ? `  bound to ${r.identityUserId}` : ''}`,
      )
      .join('\n');
  }
  if (command === 'audit') {
    const page = data as { records: Array<Record<string, unknown>>; nextCursor: string | null };
    if (page.records.length === 0) return 'no audit entries';
    const lines = page.records.map((r) => {
      const changes = Object.entries((r.changes ?? {}) as Record<string, { from: unknown; to: unknown }>)
        .map(([field, change]) => `${field} ${JSON.stringify(change.from)} -> ${JSON.stringify(change.to)}`)
        .join(', ');
      return `${r.createdAt}  ${String(r.action).padEnd(16)}  ${r.targetId ?? String(r.targetKind).padEnd(36)}  ${changes}  (request ${r.requestId})`;
    });
    if (page.nextCursor) lines.push(`more: npm run admin -- audit --cursor ${page.nextCursor}`);
    return lines.join('\n');
  }
  if (command === 'platform') {
    return (data as { enabled: boolean }).enabled ? 'platform enabled' : 'platform disabled';
  }
  return JSON.stringify(data, null, 2);
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: {
          unlimited: { type: 'boolean' },
          status: { type: 'string' },
          username: { type: 'string' },
          session: { type: 'string' },
          account: { type: 'string' },
          'expires-in': { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
          json: { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
      });
    } catch (error) {
      usage((error as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help || positionals[0] === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const [command, ...args] = positionals;
    if (!command) usage('a command is required');
    const call = buildCall(command, args, values as Record<string, string | boolean | undefined>);
    const found = findAdminToken(env);
    if (!found) {
      usage(
        `ADMIN_TOKEN is not set and ${join(dataDirOf(env), ADMIN_TOKEN_FILE)} does not exist: set ADMIN_TOKEN to the ` +
          'operator token the gateway was started with (or DATA_DIR to the folder of the npm start that generated one)',
      );
    }
    const token = found.token;
    const apiUrl = serviceUrl(env);
    try {
      new URL(apiUrl);
    } catch {
      usage(`API_URL is not a URL: ${apiUrl}`);
    }
    const data = await send(apiUrl, token, call);
    process.stdout.write(`${values.json ? JSON.stringify(data) : render(command, data)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`admin: ${error.message}\n\nRun \`npm run admin -- --help\` for the commands.\n`);
      return 2;
    }
    if (error instanceof CallError) {
      process.stderr.write(`admin: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2), process.env);
