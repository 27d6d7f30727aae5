// Usage: node .ci/compat-verdict.ts CHANGELOG OASDIFF_JSON GRAPHQL_JSON — the verdict of .ci/check-compat.sh: every
// breaking change against the previous release, REST (oasdiff's `breaking --format json`, level 3: ERR) and GraphQL
// (graphql-inspector's BREAKING changes, written by .ci/compat-graphql.cjs; a missing file: none), must be named in
// CHANGELOG.md, in a `### Breaking` list of `## [Unreleased]` or of a release after the previous one, by one line that starts with a code span:
//
//   - `openapi <oasdiff rule id> <METHOD> <path> [<detail>...]`: why.
//   - `graphql <graphql-inspector change type> <schema path>`: why.
//
// An openapi line's details, when given, must each appear in oasdiff's message as a backquoted name (the property or
// parameter: `data/organizations/items/joined`); without details it allows every change of that rule on that
// operation. Every line needs its reason after the code span. Exit 1 on a breaking change no line names, or a line of
// that list that cannot be read; a line that names no change of this comparison is reported, not failed (it may be
// about to be released). docs/integrating.md, "API compatibility", describes the rule.
import { existsSync, readFileSync } from 'node:fs';

interface OasChange {
  id: string;
  text: string;
  level: number;
  operation?: string;
  path?: string;
}
interface GraphQLChange {
  type: string;
  message: string;
  path?: string;
}
type Allowance =
  // line: the item's code span, as the log names it.
  | { kind: 'openapi'; line: string; id: string; operation: string; path: string; details: string[]; used: boolean }
  | { kind: 'graphql'; line: string; type: string; path: string; used: boolean };

const [changelogPath, oasdiffPath, graphqlPath, previousTag = ''] = process.argv.slice(2);
if (!changelogPath || !oasdiffPath || !graphqlPath) {
  console.error('usage: node .ci/compat-verdict.ts CHANGELOG OASDIFF_JSON GRAPHQL_JSON [PREVIOUS_TAG]');
  process.exit(2);
}

/**
 * The items of the `### Breaking` lists of the changes since the previous release: `## [Unreleased]` and every release
 * section above the previous release's own (`## [0.1.0]` for the tag v0.1.0). Each item's first line holds the name.
 */
function breakingLines(changelog: string, previousTag: string): string[] {
  const previousVersion = previousTag.replace(/^v/, '');
  const lines = changelog.split('\n');
  const first = lines.findIndex((line) => /^## \[/.test(line));
  if (first < 0) return [];
  const items: string[] = [];
  let inBreaking = false;
  for (const line of lines.slice(first)) {
    if (/^## /.test(line)) {
      if (line.startsWith(`## [${previousVersion}]`)) break;
      inBreaking = false;
      continue;
    }
    if (/^### /.test(line)) {
      inBreaking = /^### Breaking\s*$/i.test(line);
      continue;
    }
    if (inBreaking && /^\s*[-*] /.test(line)) items.push(line.trim());
  }
  return items;
}

const problems: string[] = [];
const allowances: Allowance[] = [];
const changelog = existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : '';
for (const line of breakingLines(changelog, previousTag)) {
  const match = /^[-*] `([^`]+)`\s*[:—–-]?\s*(.*)$/.exec(line);
  const words = match?.[1]!.trim().split(/\s+/) ?? [];
  if (!match || match[2]!.trim() === '') {
    problems.push(`CHANGELOG.md: a breaking-change line must be "- \`openapi|graphql ...\`: reason": ${line}`);
  } else if (words[0] === 'openapi' && words.length >= 4) {
    const [, id, operation, path, ...details] = words as [string, string, string, string, ...string[]];
    allowances.push({
      kind: 'openapi',
      line: match[1]!,
      id,
      operation: operation.toUpperCase(),
      path,
      details,
      used: false,
    });
  } else if (words[0] === 'graphql' && words.length === 3) {
    allowances.push({ kind: 'graphql', line: match[1]!, type: words[1]!, path: words[2]!, used: false });
  } else {
    problems.push(
      `CHANGELOG.md: a breaking-change line names "openapi <rule id> <METHOD> <path> [<detail>...]" or "graphql <change type> <path>": ${line}`,
    );
  }
}

const rest = (JSON.parse(readFileSync(oasdiffPath, 'utf8') || '[]') ?? []) as OasChange[];
const graphql = existsSync(graphqlPath)
  ? ((JSON.parse(readFileSync(graphqlPath, 'utf8')) as { breaking: GraphQLChange[] }).breaking ?? [])
  : [];

let refused = 0;
const verdict = (allowed: Allowance | undefined, what: string) => {
  if (allowed) {
    allowed.used = true;
    console.log(`  allowed  ${what}\n           by CHANGELOG.md: ${allowed.line}`);
  } else {
    refused += 1;
    console.log(`  BREAKING ${what}\n           not named in a "### Breaking" list of CHANGELOG.md since the previous release`);
  }
};

console.log(`REST (oasdiff, ERR level): ${rest.filter((c) => c.level >= 3).length} breaking change(s)`);
for (const change of rest.filter((c) => c.level >= 3)) {
  const operation = (change.operation ?? '').toUpperCase();
  const allowed = allowances.find(
    (a) =>
      a.kind === 'openapi' &&
      a.id === change.id &&
      a.operation === operation &&
      a.path === change.path &&
      a.details.every((detail) => change.text.includes(`\`${detail}\``)),
  );
  verdict(allowed, `openapi ${change.id} ${operation} ${change.path}: ${change.text}`);
}
console.log(`GraphQL (graphql-inspector, BREAKING): ${graphql.length} breaking change(s)`);
for (const change of graphql) {
  const allowed = allowances.find((a) => a.kind === 'graphql' && a.type === change.type && a.path === change.path);
  verdict(allowed, `graphql ${change.type} ${change.path ?? '(schema)'}: ${change.message}`);
}
for (const allowance of allowances.filter((a) => !a.used)) {
  console.log(`  note: CHANGELOG.md names a breaking change this comparison does not find: ${allowance.line}`);
}
for (const problem of problems) console.log(`  ${problem}`);
if (refused > 0 || problems.length > 0) {
  console.log(
    `${refused} breaking change(s) not named in CHANGELOG.md, ${problems.length} unreadable line(s): failed. ` +
      'Keep the previous shape, or name each change with its reason (docs/integrating.md, "API compatibility").',
  );
  process.exit(1);
}
console.log('no breaking change beyond those CHANGELOG.md names');
