// `npm run dev:token -- --email you@example.com`: prints a session token of the local development identity
// provider (the one `npm start` trusts when no DEVELOPER_JWKS / NATIVE_JWKS is set). Only the token goes to stdout.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { dataDirOf } from '#runtime/cli/local-service.ts';
import { developerSubject, loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';
import { isUuid } from '#runtime/validation/uuid.ts';

const usage = `Usage:
  npm run dev:token -- --email you@example.com [--sub SUBJECT] [--unverified] [--expires-in 12h]
  npm run dev:token -- --native [--sub CREDITS_USER_UUID] [--sid SESSION_ID] [--username NAME] [--expires-in 12h]

Prints a token signed by the local development identity provider whose keys live in DATA_DIR
(default ./.data, the same folder \`npm start\` uses). Developer tokens carry sub, email and
email_verified; the e-mail must also be invited (npm run admin -- invite EMAIL). Native tokens
carry sub (a random UUID unless given) and sid (a random session id unless given).
A process started with DEVELOPER_JWKS / NATIVE_JWKS (or the _URL variants) does not trust these tokens.`;

function fail(message: string): never {
  process.stderr.write(`dev:token: ${message}\n\n${usage}\n`);
  process.exit(2);
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      email: { type: 'string' },
      sub: { type: 'string' },
      sid: { type: 'string' },
      username: { type: 'string' },
      native: { type: 'boolean', default: false },
      unverified: { type: 'boolean', default: false },
      'expires-in': { type: 'string', default: '12h' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

const dataDir = dataDirOf(process.env);
const expiresIn = values['expires-in'] as string;
if (values.native) {
  const provider = await loadDevProvider(dataDir, 'native');
  const sub = (values.sub as string | undefined) ?? randomUUID();
  if (!isUuid(sub)) fail(`--sub must be a UUID for a native token (the account's creditsUserId), got ${sub}`);
  const sid = (values.sid as string | undefined) ?? `dev-session-${randomUUID()}`;
  const claims: Record<string, unknown> = { sid };
  if (values.username) claims.preferred_username = values.username;
  process.stdout.write(`${await provider.sign(claims, { subject: sub, expiresIn })}\n`);
  process.stderr.write(`native session: sub (creditsUserId) ${sub}, sid ${sid}\n`);
} else {
  const email = values.email as string | undefined;
  if (!email?.includes('@')) fail('--email is required for a developer token');
  const provider = await loadDevProvider(dataDir, 'developer');
  // A stable subject per e-mail, so that repeated tokens are the same developer.
  const sub = (values.sub as string | undefined) ?? developerSubject(email);
  const token = await provider.sign({ email, email_verified: !values.unverified }, { subject: sub, expiresIn });
  process.stdout.write(`${token}\n`);
  process.stderr.write(`developer session for ${email} (sub ${sub}), valid ${expiresIn}\n`);
}
