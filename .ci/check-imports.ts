// npm run check: no program imports another. Each program is a folder (gateway/src, services/<name>/src);
// what two programs share lives in services/runtime (imported as #runtime/...). Fails when shipped code of one
// program imports a file of another, when anything under load/ imports test/, or when a shipped program imports
// test/ or load/, or when anything but the tests and load/ imports the launcher's development tools
// (services/launcher/tools: not in the image, .dockerignore). Allowed: the launcher (services/launcher), whose in-process mode composes the five programs in one
// process (it imports each program's program.ts); the all-in-one process, which runs that mode (it imports the
// launcher); and the tests, which may reach into anything.
//
// And the other way round: the runtime holds only what programs share. A runtime file that the shipped code of a
// single program uses (directly or through other runtime files; tests, load/ and .ci/ aside) belongs in that program's
// folder, and fails the check unless SINGLE_USER names it with the reason it stays.
//
// Usage: node .ci/check-imports.ts
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** The launcher's development tools: separate processes and throwaway servers, left out of the image. */
const LAUNCHER_TOOLS = 'services/launcher/tools';

/** The unit a file belongs to: a program, the runtime, the composer, load/, test/, console/ or other. */
function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'gateway') return 'gateway';
  if (parts[0] === 'services' && parts[1] === 'launcher' && parts[2] === 'tools') return LAUNCHER_TOOLS;
  if (parts[0] === 'services' && parts[1]) return `services/${parts[1]}`;
  if (parts[0] === 'load' || parts[0] === 'test' || parts[0] === 'console') return parts[0];
  return 'other';
}

const PROGRAMS = new Set([
  'gateway',
  'services/ingest',
  'services/links',
  'services/ledger',
  'services/identity-admission',
]);

/**
 * Cross-unit imports still to be moved to the shared contracts (each entry names the importing file and the imported
 * one). Shrink it; never grow it.
 */
const KNOWN: ReadonlySet<string> = new Set<string>([]);

function problem(from: string, to: string): string | undefined {
  const source = unitOf(from);
  const target = unitOf(to);
  if (source === target || target === 'services/runtime') return undefined;
  if (from.endsWith('.test.ts') || source === 'test') return undefined;
  if (source === 'load' && target === 'test') return 'load/ imports test/';
  if (target === LAUNCHER_TOOLS) {
    return source === 'load' ? undefined : `${source} imports the launcher's development tools (not in the image)`;
  }
  if (source === 'services/launcher') return PROGRAMS.has(target) ? undefined : `the launcher imports ${target}`;
  if (source === 'services/all-in-one') {
    return target === 'services/launcher' ? undefined : `all-in-one imports ${target} (compose through the launcher)`;
  }
  if (PROGRAMS.has(source) && (PROGRAMS.has(target) || target === 'services/all-in-one' || target === 'services/launcher')) {
    return `${source} imports ${target}`;
  }
  if ((PROGRAMS.has(source) || source === 'services/runtime') && (target === 'test' || target === 'load')) {
    return `${source} imports ${target}`;
  }
  return undefined;
}

/** The units whose shipped code counts as a user of a runtime file: the five programs, the composers, the console. */
const USERS = new Set([...PROGRAMS, 'services/launcher', 'services/all-in-one', 'console']);

/** Runtime files one program uses that stay in the runtime anyway, each with its reason. Keep it short. */
const SINGLE_USER: ReadonlyMap<string, string> = new Map([
  [
    'services/runtime/src/transport/in-process.ts',
    'the Transport beside nats.ts, sharing its codec and serving (transport/codec.ts); every test composes programs on it',
  ],
  [
    'services/runtime/src/db/embedded.ts',
    'the embedded database, whose template path the image build and .dockerignore name; moving it is a deploy change',
  ],
  ['services/runtime/src/db/embedded-data.ts', 'the embedded database (see db/embedded.ts)'],
]);

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.tsx'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f && !f.includes('/gen/') && !f.startsWith('node_modules/'));

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;
const RUNTIME = 'services/runtime/src/';
const found: string[] = [];
/** Each file's imports of repository files (relative and #runtime/...), as paths from the root. */
const importsOf = new Map<string, string[]>();
for (const file of files) {
  let text: string;
  try {
    text = readFileSync(join(root, file), 'utf8');
  } catch {
    continue; // deleted in the work tree
  }
  const targets: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] as string;
    if (specifier.startsWith('#runtime/')) targets.push(RUNTIME + specifier.slice('#runtime/'.length));
    if (!specifier.startsWith('.')) continue; // packages and #runtime/...
    const target = relative(root, resolve(root, dirname(file), specifier));
    targets.push(target);
    const why = problem(file, target);
    if (why && !KNOWN.has(`${file} -> ${target}`)) found.push(`${file} imports ${target} (${why})`);
  }
  importsOf.set(file, targets);
}
if (found.length > 0) {
  console.error(`Imports across programs (move what is shared to services/runtime/src/contracts):\n  ${found.join('\n  ')}`);
  process.exit(1);
}

// Which units' shipped code reaches each runtime file, through the runtime files it imports.
const usersOf = new Map<string, Set<string>>();
for (const [file, targets] of importsOf) {
  const unit = unitOf(file);
  if (!USERS.has(unit) || file.endsWith('.test.ts') || file.endsWith('.test.tsx')) continue;
  const reached = new Set<string>();
  const pending = targets.filter((target) => target.startsWith(RUNTIME));
  for (let target = pending.pop(); target !== undefined; target = pending.pop()) {
    if (reached.has(target)) continue;
    reached.add(target);
    for (const next of importsOf.get(target) ?? []) if (next.startsWith(RUNTIME)) pending.push(next);
  }
  for (const target of reached) usersOf.set(target, (usersOf.get(target) ?? new Set()).add(unit));
}
const single: string[] = [];
for (const [file, users] of usersOf) {
  if (users.size !== 1 || SINGLE_USER.has(file) || !importsOf.has(file)) continue;
  single.push(`${file} (used by ${[...users][0]} only: move it, with its test, into that program's folder)`);
}
for (const file of SINGLE_USER.keys()) {
  if (usersOf.get(file)?.size !== 1) single.push(`${file} is in SINGLE_USER but not used by one program only: drop it`);
}
if (single.length > 0) {
  console.error(`Runtime files that are not shared:\n  ${single.sort().join('\n  ')}`);
  process.exit(1);
}
console.log(`no program imports another, and every runtime file is shared (${files.length} files checked)`);
