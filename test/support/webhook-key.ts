// The WEBHOOK_SECRET_KEY of the programs the tests start on real PostgreSQL: a ledger with DATABASE_URL refuses to
// start without one (services/ledger/src/program.ts). Fixed, so that every process of a test (replicas, restarts)
// reads the secrets the others stored.
export const TEST_WEBHOOK_SECRET_KEY = Buffer.alloc(32, 'test-webhook-secret-key').toString('base64');
