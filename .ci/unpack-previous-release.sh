#!/usr/bin/env bash
# Usage: bash .ci/unpack-previous-release.sh <dir> — unpacks the previous release (.ci/previous-release: `<tag>
# <commit>`) from this clone's history into <dir> (git archive, so the release's files exactly as committed; <dir> is
# made if missing), with its dependencies: this tree's node_modules, linked, when every package the release locks is
# installed here at the same version (the usual case: releases differ in a few packages, if any); otherwise its own
# `npm ci --ignore-scripts`. Prints `<tag> <commit>` as the only line on stdout (its other messages go to stderr).
# Used by .ci/check-compat.sh (the API against the release's) and the fault suite's `upgrade` phase
# (test/faults/previous-release.ts: the release's programs, upgraded to this tree and rolled back under load).
set -euo pipefail
dir=${1:?usage: unpack-previous-release.sh <dir>}
cd "$(dirname "$0")/.."

read -r tag commit < <(grep -Ev '^[[:space:]]*(#|$)' .ci/previous-release | head -n 1) || true
if [[ ! "${commit:-}" =~ ^[0-9a-f]{40}$ ]]; then
  echo "previous release: .ci/previous-release must hold one line '<tag> <40-hex commit>'" >&2
  exit 1
fi
if ! git cat-file -e "${commit}^{commit}" 2>/dev/null; then
  echo "previous release: $tag ($commit) is not in this clone's history (a shallow clone?)" >&2
  exit 1
fi

mkdir -p "$dir"
git archive "$commit" | tar -x -C "$dir"

if python3 - "$dir/package-lock.json" package-lock.json >&2 <<'PY'; then
import json, sys
old, new = (json.load(open(path))["packages"] for path in sys.argv[1:3])
missing = [name for name, entry in old.items()
           if name and not entry.get("link") and new.get(name, {}).get("version") != entry.get("version")]
if missing:
    print(f"the release locks {len(missing)} package(s) this tree does not, e.g. {missing[:3]}: npm ci for it")
    sys.exit(1)
PY
  ln -s "$(readlink -f node_modules)" "$dir/node_modules"
else
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi
echo "$tag $commit"
