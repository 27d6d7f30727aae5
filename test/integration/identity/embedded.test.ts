// The identity flows on the embedded default of `npm start` (PGlite and the in-process transport): the same SQL and
// the same operations as on real PostgreSQL and NATS.
import { randomUUID } from 'node:crypto';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import {
  admin,
  developerToken,
  EMBEDDED_START_TIMEOUT_MS,
  nativeToken,
  startTestSystem,
  type TestSystem,
} from '../../support/system.ts';
import { access, errorBody } from './support.ts';

describe('identity on the embedded default', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem({ mode: 'embedded', env: { NATIVE_MIN_BUILD: '3' } });
  }, EMBEDDED_START_TIMEOUT_MS);
  afterAll(async () => {
    await system?.stop();
  });

  it('invites, binds and revokes developers; switches the platform', async () => {
    expect(system.running.transportKind).toBe('in-process');
    const invitation = (await admin(system, 'POST', '/invitations', { email: 'Embedded@Example.com' })).body.data;
    const token = await developerToken(system, 'embedded@example.com', { sub: 'idp|embedded' });
    expect((await access(system, token)).body).toEqual({
      data: { authorized: true, email: 'embedded@example.com', mode: 'sandbox' },
    });
    expect(
      (await access(system, await developerToken(system, 'embedded@example.com', { sub: 'idp|other' }))).body,
    ).toEqual(errorBody('DEVELOPER_INVITATION_REQUIRED'));
    await admin(system, 'PUT', '/platform', { enabled: false });
    expect((await access(system, token)).body).toEqual(errorBody('PLATFORM_DISABLED'));
    await admin(system, 'PUT', '/platform', { enabled: true });
    await admin(system, 'POST', `/invitations/${invitation.id}/revoke`);
    expect((await access(system, token)).body).toEqual(errorBody('DEVELOPER_INVITATION_REQUIRED'));
  });

  it('admits native sessions: account on first sight, build, permit', async () => {
    const session = await nativeToken(system, { username: 'Embedded' });
    const call = (build: string, capabilities: string) =>
      system.running.transport
        .call(
          identityOps.admitNative,
          { authorization: `Bearer ${session.token}`, country: 'SE', build, capabilities },
          { requestId: randomUUID() },
        )
        .then(
          (reply) => reply.principal,
          (error: unknown) =>
            error instanceof AppError ? { code: error.code, extra: error.extra } : Promise.reject(error),
        );
    expect(await call('2', 'challenge-v1')).toEqual({ code: 'CLIENT_UPDATE_REQUIRED', extra: { minBuild: 3 } });
    expect(await call('3', 'challenge-v1')).toEqual({ code: 'DEVICE_VERIFICATION_REQUIRED', extra: undefined });
    const permit = await admin(system, 'POST', '/device-permits', {
      sessionId: session.sid,
      creditsUserId: session.sub,
      expiresInSeconds: 300,
    });
    expect(permit.status).toBe(200);
    expect(await call('3', 'challenge-v1')).toMatchObject({
      creditsUserId: session.sub,
      sessionId: session.sid,
      username: 'Embedded',
    });
    const disabled = await admin(system, 'PUT', `/native-accounts/${session.sub}`, { status: 'disabled' });
    expect(disabled.body.data).toMatchObject({ creditsUserId: session.sub, status: 'disabled', username: 'Embedded' });
    expect(await call('3', 'challenge-v1')).toEqual({ code: 'ACCOUNT_DISABLED', extra: undefined });
  });
});
