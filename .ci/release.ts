// Usage: npm run release -- <major.minor.patch> — cuts a release in the working tree: one version everywhere it is
// written (package.json and its lockfile, the chart's version and appVersion, which is also the image's default tag,
// the chart README's version line, the image examples in docs/deploy.md), and CHANGELOG.md's `## [Unreleased]`
// becomes `## [<version>] - <today>` under a new, empty `## [Unreleased]`. Then review, commit, tag and record:
//
//   git commit -am "release: <version>" && git tag -a v<version> -m v<version>
//   echo "v<version> $(git rev-parse HEAD)" > .ci/previous-release   # in the next commit: CI compares with it
//
// docs/operations.md, "Releases", is the whole process.
import { readFileSync, writeFileSync } from 'node:fs';

const version = process.argv[2] ?? '';
if (!/^\d+\.\d+\.\d+$/.test(version)) {
  console.error('usage: npm run release -- <major.minor.patch>   (semantic version, e.g. 0.3.0)');
  process.exit(2);
}
const current = JSON.parse(readFileSync('package.json', 'utf8')).version as string;
const order = (v: string) => v.split('.').map(Number);
const [a, b] = [order(current), order(version)];
const newer = b[0]! - a[0]! || b[1]! - a[1]! || b[2]! - a[2]!;
if (newer <= 0) {
  console.error(`release: ${version} is not newer than the current version ${current}`);
  process.exit(2);
}

function edit(path: string, change: (text: string) => string): void {
  const before = readFileSync(path, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`release: nothing to change in ${path}: is it still written as expected?`);
  writeFileSync(path, after);
  console.log(`  ${path}`);
}
const escaped = current.replaceAll('.', '\\.');

console.log(`release ${current} -> ${version}:`);
edit('package.json', (t) => t.replace(`"version": "${current}"`, `"version": "${version}"`));
edit('package-lock.json', (t) => {
  const lock = JSON.parse(t);
  lock.version = version;
  lock.packages[''].version = version;
  return `${JSON.stringify(lock, null, 2)}\n`;
});
edit('charts/sandbox-rewards/Chart.yaml', (t) =>
  t.replace(/^version: .*$/m, `version: ${version}`).replace(/^appVersion: .*$/m, `appVersion: "${version}"`),
);
edit('charts/sandbox-rewards/README.md', (t) =>
  t.replace(
    /^Chart version [^,]+, application version [^.]+\.[^.]+\.[^.]+\./m,
    `Chart version ${version}, application version ${version}.`,
  ),
);
edit('docs/deploy.md', (t) =>
  t
    .replace(new RegExp(`sandbox-rewards:${escaped}\\b`, 'g'), `sandbox-rewards:${version}`)
    .replace(new RegExp(`tag: "${escaped}"`, 'g'), `tag: "${version}"`),
);
edit('CHANGELOG.md', (t) => {
  if (!/^## \[Unreleased\]$/m.test(t)) throw new Error('release: CHANGELOG.md has no "## [Unreleased]" section');
  const today = new Date().toISOString().slice(0, 10);
  return t.replace(/^## \[Unreleased\]$/m, `## [Unreleased]\n\n## [${version}] - ${today}`);
});
console.log(`now: review the diff, then commit, tag v${version} and record it in .ci/previous-release (see above)`);
