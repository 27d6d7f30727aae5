// Bytes that are not the operation's protobuf request are the caller's fault: a 400-class service error, logged as a
// warning, never a 500 logged as an error.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../../support/compose.ts';
import { createTestDatabase } from '../../support/database.ts';
import { startNats } from '../../support/servers.ts';

describe('a malformed request message on a NATS subject', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let system: Composed;
  let client: NatsConnection;
  const lines: Array<{ level: number; msg: string }> = [];

  beforeAll(async () => {
    nats = await startNats();
    const db = await createTestDatabase();
    await migrate(db, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    system = await compose({ natsUrl: nats.url, identityDatabaseUrl: db, ledgerDatabaseUrl: db, logger });
    client = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await client?.close();
    await system?.stop();
    await nats?.stop();
  });

  it.each([
    'rewards.v1.ledger.GetSnapshot',
    'rewards.v1.ledger.ConsoleAction',
    'rewards.v1.ledger.RecordEvent',
    'rewards.v1.ledger.RecordEventsWithProposedIds',
    'rewards.v1.identity.AdmitDeveloper',
  ])('%s answers a 400 service error and logs a warning', async (subject) => {
    lines.length = 0;
    const reply = await client.request(subject, new TextEncoder().encode('garbage'), { timeout: 5000 });
    expect(reply.headers?.get('Nats-Service-Error-Code')).toBe('400');
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'malformed request message' })]);
  });
});
