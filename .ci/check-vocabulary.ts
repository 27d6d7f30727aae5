// npm run check: one place for each rule. Fails when a rule literal of the API document's vocabulary
// (services/runtime/src/contracts/vocabulary.ts, the UUID rule in services/runtime/src/validation/uuid.ts) is spelled
// anywhere else in the shipped code, and when the GraphQL schema's enumerations differ from the vocabulary.
//
// Not scanned: the modules that own the rules, tests (they state expected values on their own, on purpose),
// migrations (history, never edited; test/integration/migrations.test.ts compares the database's CHECK constraints
// with the vocabulary), generated code and docs. Usage: node .ci/check-vocabulary.ts
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSchema, GraphQLEnumType } from 'graphql';
import {
  DECISION_REASONS,
  EVENT_STATUSES,
  EVENT_TYPE_PATTERN,
  GAME_STATUSES,
  MEMBER_ROLES,
  PLATFORMS,
} from '#runtime/contracts/vocabulary.ts';

const root = resolve(import.meta.dirname, '..');

const OWNERS = new Set([
  'services/runtime/src/contracts/vocabulary.ts',
  'services/runtime/src/validation/uuid.ts',
  '.ci/check-vocabulary.ts',
]);

/** A rule literal: what betrays a second spelling of it. */
const LITERALS: Array<{ rule: string; pattern: RegExp }> = [
  { rule: 'the eventType pattern (EVENT_TYPE_PATTERN)', pattern: /a-z0-9_\.-\]\{0,63\}/ },
  { rule: 'the credits limit (CREDITS_MAX)', pattern: /\b1_?000_?000_?000_?000\b/ },
  {
    rule: 'the platform enumeration (PLATFORMS)',
    pattern: /['"`]unity['"`][^\n]*['"`]unreal['"`]|['"`]unreal['"`][^\n]*['"`]unity['"`]/,
  },
  { rule: 'the game statuses (GAME_STATUSES)', pattern: /['"`]active['"`],\s*['"`]paused['"`]/ },
  { rule: 'the member roles (MEMBER_ROLES)', pattern: /['"`]admin['"`],\s*['"`]owner['"`],\s*['"`]viewer['"`]/ },
  { rule: 'the event statuses (EVENT_STATUSES)', pattern: /['"`]accepted['"`],\s*['"`]rejected['"`]/ },
  {
    rule: 'the decision reasons (DECISION_REASONS)',
    pattern: /['"`]game_payout_ceiling['"`],\s*['"`]player_not_linked['"`]/,
  },
  { rule: 'the UUID rule (UUID_PATTERN)', pattern: /\[1-8\]\[0-9a-fA-F\]\{3\}/ },
];

function scanned(path: string): boolean {
  if (OWNERS.has(path)) return false;
  if (!/^(services|gateway|console\/src|load|charts\/dashboards)\//.test(path)) return false;
  if (!/\.(ts|tsx|js|sql)$/.test(path)) return false;
  if (/\.test\.tsx?$/.test(path) || /\/migrations\//.test(path) || /\/gen\//.test(path)) return false;
  return true;
}

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root })
  .toString()
  .split('\n')
  .filter(scanned);

const problems: string[] = [];
for (const file of files) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  lines.forEach((line, index) => {
    for (const { rule, pattern } of LITERALS) {
      if (pattern.test(line)) problems.push(`${file}:${index + 1}: spells ${rule}; import it from the vocabulary`);
    }
  });
}

// The GraphQL schema is SDL: its enumerations are spelled there, so they are compared instead.
const sdlPath = 'gateway/src/graphql/schema.graphql';
const sdl = readFileSync(join(root, sdlPath), 'utf8');
const schema = buildSchema(sdl);
const enums: Record<string, readonly string[]> = {
  Platform: PLATFORMS,
  GameStatus: GAME_STATUSES,
  Role: MEMBER_ROLES,
  EventStatus: EVENT_STATUSES,
  EventReason: DECISION_REASONS,
};
for (const [name, values] of Object.entries(enums)) {
  const type = schema.getType(name);
  const actual = type instanceof GraphQLEnumType ? type.getValues().map((v) => v.value as string) : undefined;
  if (JSON.stringify(actual) !== JSON.stringify([...values])) {
    problems.push(`${sdlPath}: enum ${name} is ${JSON.stringify(actual)}, the vocabulary says ${JSON.stringify(values)}`);
  }
}
for (const match of sdl.matchAll(/pattern (\^\S*\$)/g)) {
  if (match[1] !== EVENT_TYPE_PATTERN) {
    problems.push(`${sdlPath}: describes the pattern ${match[1]}; the vocabulary's is ${EVENT_TYPE_PATTERN}`);
  }
}

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n\ncheck-vocabulary: ${problems.length} rule literal(s) outside the vocabulary\n`);
  process.exit(1);
}
process.stdout.write(`vocabulary: one spelling of each rule (${files.length} files, ${Object.keys(enums).length} GraphQL enums)\n`);
