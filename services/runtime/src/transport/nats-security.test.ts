// The NATS credential and TLS variables: each kind alone is read as given, contradictions and unreadable files stop
// start-up naming the variables, and the connect options carry an authenticator and the TLS files.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { ConfigError, EnvReader } from '../config.ts';
import { type NatsSecurity, natsSecurityOptions, readNatsSecurity } from './nats-security.ts';

const dir = mkdtempSync(join(tmpdir(), 'nats-security-'));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const creds = file('user.creds', 'not checked until a connection uses it');
const user = nkeys.createUser();
const seed = file('seed.nk', `${new TextDecoder().decode(user.getSeed())}\n`);
const ca = file('ca.crt', 'CA');
const cert = file('tls.crt', 'CERT');
const key = file('tls.key', 'KEY');

function read(env: Record<string, string>): NatsSecurity {
  const reader = new EnvReader(env);
  const security = readNatsSecurity(reader);
  reader.done();
  return security;
}

function problems(env: Record<string, string>): string[] {
  try {
    read(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

test('none by default; each kind alone as given', () => {
  expect(read({})).toEqual({ credentials: { kind: 'none' }, tls: undefined });
  expect(read({ NATS_USER: 'ingest', NATS_PASSWORD: 'secret' }).credentials).toEqual({
    kind: 'user',
    user: 'ingest',
    password: 'secret',
  });
  expect(read({ NATS_TOKEN: 't0ken' }).credentials).toEqual({ kind: 'token', token: 't0ken' });
  expect(read({ NATS_NKEY_SEED_FILE: seed }).credentials).toEqual({ kind: 'nkey', seedFile: seed });
  expect(read({ NATS_CREDS_FILE: creds }).credentials).toEqual({ kind: 'creds', credsFile: creds });
  expect(read({ NATS_TLS_CA_FILE: ca }).tls).toEqual({ caFile: ca });
  expect(read({ NATS_TLS_CERT_FILE: cert, NATS_TLS_KEY_FILE: key }).tls).toEqual({ certFile: cert, keyFile: key });
});

test('contradictions and unreadable files are problems naming the variables', () => {
  expect(problems({ NATS_USER: 'ingest' })).toEqual(['NATS_USER and NATS_PASSWORD go together: set both or neither']);
  expect(problems({ NATS_USER: 'ingest', NATS_PASSWORD: 'secret', NATS_TOKEN: 't' })).toEqual([
    'set one kind of NATS credentials, not NATS_USER/NATS_PASSWORD and NATS_TOKEN',
  ]);
  expect(problems({ NATS_CREDS_FILE: join(dir, 'missing.creds') })).toEqual([
    `NATS_CREDS_FILE must name a readable file, got ${JSON.stringify(join(dir, 'missing.creds'))}`,
  ]);
  expect(problems({ NATS_TLS_CERT_FILE: cert })).toEqual([
    'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together: set both or neither',
  ]);
});

test('connect options: an authenticator per kind, TLS files as given, nothing for none', () => {
  expect(natsSecurityOptions(read({}))).toEqual({});
  const password = natsSecurityOptions(read({ NATS_USER: 'ingest', NATS_PASSWORD: 'secret' }));
  expect(password.authenticator?.()).toEqual({ user: 'ingest', pass: 'secret' });
  expect(natsSecurityOptions(read({ NATS_TOKEN: 't0ken' })).authenticator?.()).toEqual({ auth_token: 't0ken' });
  // The seed's public key and a signature of the server's nonce.
  const nkey = natsSecurityOptions(read({ NATS_NKEY_SEED_FILE: seed })).authenticator?.('nonce');
  expect(nkey).toMatchObject({ nkey: user.getPublicKey(), sig: expect.any(String) });
  expect(natsSecurityOptions(read({ NATS_TLS_CA_FILE: ca }))).toEqual({ tls: { caFile: ca } });
});
