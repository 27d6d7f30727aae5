// WEBHOOK_SECRET_KEY on a deployment (services/ledger/src/program.ts): with DATABASE_URL the ledger refuses to start
// without it, naming the variable, run alone or in the all-in-one process, rather than keep the key that encrypts
// webhook secrets in the same database. The development default (embedded database) keeps its generated key:
// test/integration/webhooks/embedded.test.ts delivers a webhook there without the variable.
import { pino } from 'pino';
import { startSystem } from '../../../services/all-in-one/src/system.ts';
import { WEBHOOK_SECRET_KEY_REQUIRED } from '../../../services/ledger/src/program.ts';
import { createTestDatabase } from '../../support/database.ts';
import { startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';

test('a ledger run alone with DATABASE_URL and no WEBHOOK_SECRET_KEY exits with 2, naming it', async () => {
  const nats = await startNats();
  try {
    const run = await startProgram(
      'ledger',
      { NATS_URL: nats.url, DATABASE_URL: await createTestDatabase(), WEBHOOK_SECRET_KEY: undefined },
      undefined,
      'started',
    );
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('WEBHOOK_SECRET_KEY is required when DATABASE_URL is set');
  } finally {
    await nats.stop();
  }
}, 120_000);

test('the all-in-one process with DATABASE_URL and no WEBHOOK_SECRET_KEY refuses its configuration', async () => {
  const start = startSystem({
    env: { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none', ADMIN_TOKEN: 'x'.repeat(32), LOG_LEVEL: 'silent' },
    port: 0,
    host: '127.0.0.1',
    logger: pino({ level: 'silent' }),
  });
  await expect(start).rejects.toThrow(WEBHOOK_SECRET_KEY_REQUIRED);
});

test('a key that is not the base64 of 32 bytes is refused too', async () => {
  const start = startSystem({
    env: {
      DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none',
      WEBHOOK_SECRET_KEY: Buffer.alloc(16).toString('base64'),
      LOG_LEVEL: 'silent',
    },
    port: 0,
    host: '127.0.0.1',
    logger: pino({ level: 'silent' }),
  });
  await expect(start).rejects.toThrow(/WEBHOOK_SECRET_KEY must be the base64 of 32 bytes/);
});
