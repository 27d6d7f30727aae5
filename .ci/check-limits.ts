// npm run check: the event path's limits are spelled once (services/runtime/src/contracts/event-limits.ts).
// Fails when the chart's values.schema.json bounds or values.yaml defaults, or the literals of the SQL (the
// record_events call bound, the occurredAt window, the hash lengths and the metadata size of the tables' CHECK
// constraints), differ from EVENT_LIMITS, or when shipped TypeScript defines one of these limits again under a name
// of its own.
//
// Usage: node .ci/check-limits.ts
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';

const root = resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const problems: string[] = [];
const expectEqual = (where: string, found: unknown, wanted: unknown) => {
  if (found !== wanted) problems.push(`${where} is ${String(found)}, EVENT_LIMITS says ${String(wanted)}`);
};

// The chart: the bounds of the settings that carry these limits, and their defaults.
const schema = JSON.parse(read('charts/sandbox-rewards/values.schema.json'));
const config = schema.properties.config.properties;
const bounds: Array<[string, number]> = [
  ['ingestEventBatchMax', EVENT_LIMITS.eventsPerRequestMax],
  ['ingestEventInFlightMax', EVENT_LIMITS.edgeInFlightMax],
  ['ingestEventKeysMax', EVENT_LIMITS.keysPerRequestMax],
  ['eventBatchMax', EVENT_LIMITS.eventsPerCallMax],
  ['eventGroupKeysMax', EVENT_LIMITS.keysPerCallMax],
];
for (const [key, maximum] of bounds) {
  expectEqual(`values.schema.json config.${key}.maximum`, config[key]?.maximum, maximum);
}
const values = read('charts/sandbox-rewards/values.yaml');
const defaultOf = (key: string) => Number(new RegExp(`^  ${key}: (\\d+)$`, 'm').exec(values)?.[1]);
expectEqual('values.yaml config.ingestEventBatchMax', defaultOf('ingestEventBatchMax'), EVENT_LIMITS.edgeBatchDefault);
expectEqual('values.yaml config.eventBatchMax', defaultOf('eventBatchMax'), EVENT_LIMITS.ledgerBatchDefault);

// The SQL: the bound of one call, the occurredAt window, and every hash length a CHECK constraint states.
const recordEvents = read('services/ledger/src/sql/record_events.sql');
const callBound = /if n > (\d+)/.exec(recordEvents)?.[1];
expectEqual('record_events.sql call bound (if n > ...)', Number(callBound), EVENT_LIMITS.eventsPerCallMax);
const windows = [...read('services/ledger/src/sql/decision_reason.sql').matchAll(/p_occurred.*?interval '(\d+) minutes'/g)];
if (windows.length === 0) problems.push('decision_reason.sql: the occurredAt window was not found');
for (const window of windows) {
  expectEqual('decision_reason.sql occurredAt window (ms)', Number(window[1]) * 60_000, EVENT_LIMITS.occurredAtWindowMs);
}
const sqlFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'services'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\/(sql|migrations)\/[^/]+\.(sql|ts)$/.test(f));
for (const file of sqlFiles) {
  for (const match of read(file).matchAll(/length\((\w*hash\w*)\) = (\d+)/g)) {
    expectEqual(`${file}: length(${match[1]})`, Number(match[2]), EVENT_LIMITS.hashBytes);
  }
  // The metadata's CHECK constraint (events_metadata_object): its upper bound in bytes.
  for (const match of read(file).matchAll(/octet_length\(metadata\) between \d+ and (\d+)/g)) {
    expectEqual(`${file}: octet_length(metadata)`, Number(match[1]), EVENT_LIMITS.metadataBytesMax);
  }
}
const metadataChecks = sqlFiles.filter((file) => /octet_length\(metadata\) between/.test(read(file)));
if (metadataChecks.length === 0) problems.push('the metadata CHECK constraint (octet_length(metadata)) was not found');

// Shipped TypeScript: no second definition of these limits under another name.
const SECOND_DEFINITION =
  /\b(?:const|let)\s+(EDGE_BATCH_MAX_DEFAULT|EVENT_BATCH_MAX_DEFAULT|RECORD_EVENTS_REQUEST_MAX|RECORD_EVENT_GROUP_KEYS_MAX|RECORD_EVENTS_MAX|HASH_BYTES|OCCURRED_AT_(?:MIN|MAX)_MS|OCCURRED_AT_WINDOW_MS)\s*=\s*-?\d/g;
const tsFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /^(services|gateway)\//.test(f) && !f.endsWith('.test.ts') && !f.includes('/gen/'));
for (const file of tsFiles) {
  if (file === 'services/runtime/src/contracts/event-limits.ts') continue;
  for (const match of read(file).matchAll(SECOND_DEFINITION)) {
    problems.push(`${file} defines ${match[1]} again: take it from EVENT_LIMITS`);
  }
}

if (problems.length > 0) {
  console.error(`Event-path limits differ from services/runtime/src/contracts/event-limits.ts:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('event-path limits: one contract, the chart and the SQL agree');
