// A fresh PostgreSQL database per test file, on the suite's server (see global-setup.ts).
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export function testServerUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests with `npm test`');
  return url;
}

/** Creates an empty database and returns its URL. */
export async function createTestDatabase(prefix = 'rewards_test'): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: testServerUrl() });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one SQL statement on a database with a short-lived client. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}
