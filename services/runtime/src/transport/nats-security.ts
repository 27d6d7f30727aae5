// How a program authenticates to NATS and encrypts its connection (docs/deploy.md, "NATS: the trust boundary"):
// a request carries its principal (developer, game key, native session, operator) as data, so whoever may publish on
// a subject may act as anyone that subject serves. NATS is therefore a trust boundary like HTTP: each program
// connects with credentials of its own and the server lets it publish and subscribe only where its job needs
// (charts/sandbox-rewards/nats-authorization.conf).
//
// Variables (at most one kind of credentials; none: connect without, as before):
//   NATS_USER + NATS_PASSWORD    user and password
//   NATS_TOKEN                   a token
//   NATS_NKEY_SEED_FILE          a file holding an NKey user seed (SU...)
//   NATS_CREDS_FILE              a decentralized-auth .creds file (user JWT and seed)
//   NATS_TLS_CA_FILE             CA bundle the server's certificate is verified against (turns TLS on)
//   NATS_TLS_CERT_FILE + NATS_TLS_KEY_FILE   a client certificate and its key (turns TLS on)
// Files are read again on every (re)connect, so a rotated Secret is used from the next connection on.
import { accessSync, constants, readFileSync } from 'node:fs';
import {
  type Authenticator,
  credsAuthenticator,
  nkeyAuthenticator,
  type TlsOptions,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
} from '@nats-io/transport-node';
import type { EnvReader } from '../config.ts';

export type NatsCredentials =
  | { kind: 'none' }
  | { kind: 'user'; user: string; password: string }
  | { kind: 'token'; token: string }
  | { kind: 'nkey'; seedFile: string }
  | { kind: 'creds'; credsFile: string };

export interface NatsSecurity {
  credentials: NatsCredentials;
  /** TLS files; undefined: no TLS options (a `tls://` URL still asks for TLS, verified against the system CAs). */
  tls: { caFile?: string; certFile?: string; keyFile?: string } | undefined;
}

export const NATS_NO_SECURITY: NatsSecurity = { credentials: { kind: 'none' }, tls: undefined };

/** A path variable whose file must be readable now (a typo stops start-up instead of every connection attempt). */
function readableFile(reader: EnvReader, name: string): string | undefined {
  const path = reader.string(name);
  if (path === undefined) return undefined;
  try {
    accessSync(path, constants.R_OK);
  } catch {
    reader.check(false, `${name} must name a readable file, got ${JSON.stringify(path)}`);
  }
  return path;
}

/** Reads the NATS_* credential and TLS variables; every contradiction is a configuration problem naming them. */
export function readNatsSecurity(reader: EnvReader): NatsSecurity {
  const user = reader.string('NATS_USER');
  const password = reader.string('NATS_PASSWORD');
  const token = reader.string('NATS_TOKEN');
  const seedFile = readableFile(reader, 'NATS_NKEY_SEED_FILE');
  const credsFile = readableFile(reader, 'NATS_CREDS_FILE');
  const given = [
    user !== undefined || password !== undefined ? 'NATS_USER/NATS_PASSWORD' : undefined,
    token !== undefined ? 'NATS_TOKEN' : undefined,
    seedFile !== undefined ? 'NATS_NKEY_SEED_FILE' : undefined,
    credsFile !== undefined ? 'NATS_CREDS_FILE' : undefined,
  ].filter((kind) => kind !== undefined);
  reader.check(given.length <= 1, `set one kind of NATS credentials, not ${given.join(' and ')}`);
  reader.check(
    (user === undefined) === (password === undefined),
    'NATS_USER and NATS_PASSWORD go together: set both or neither',
  );
  let credentials: NatsCredentials = { kind: 'none' };
  if (user !== undefined && password !== undefined) credentials = { kind: 'user', user, password };
  else if (token !== undefined) credentials = { kind: 'token', token };
  else if (seedFile !== undefined) credentials = { kind: 'nkey', seedFile };
  else if (credsFile !== undefined) credentials = { kind: 'creds', credsFile };

  const caFile = readableFile(reader, 'NATS_TLS_CA_FILE');
  const certFile = readableFile(reader, 'NATS_TLS_CERT_FILE');
  const keyFile = readableFile(reader, 'NATS_TLS_KEY_FILE');
  reader.check(
    (certFile === undefined) === (keyFile === undefined),
    'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together: set both or neither',
  );
  const tls =
    caFile === undefined && certFile === undefined
      ? undefined
      : {
          ...(caFile === undefined ? {} : { caFile }),
          ...(certFile === undefined ? {} : { certFile }),
          ...(keyFile === undefined ? {} : { keyFile }),
        };
  return { credentials, tls };
}

const fileBytes = (path: string) => () => readFileSync(path);
const seedBytes = (path: string) => () => new TextEncoder().encode(readFileSync(path, 'utf8').trim());

/** The connect options of `security`: an authenticator and TLS files (nothing for none). */
export function natsSecurityOptions(security: NatsSecurity): { authenticator?: Authenticator; tls?: TlsOptions } {
  const { credentials, tls } = security;
  let authenticator: Authenticator | undefined;
  switch (credentials.kind) {
    case 'user':
      authenticator = usernamePasswordAuthenticator(credentials.user, credentials.password);
      break;
    case 'token':
      authenticator = tokenAuthenticator(credentials.token);
      break;
    case 'nkey':
      authenticator = nkeyAuthenticator(seedBytes(credentials.seedFile));
      break;
    case 'creds':
      authenticator = credsAuthenticator(fileBytes(credentials.credsFile));
      break;
    case 'none':
      break;
  }
  return { ...(authenticator ? { authenticator } : {}), ...(tls ? { tls } : {}) };
}
