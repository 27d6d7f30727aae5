#!/usr/bin/env bash
# Usage: bash .ci/check-compat.sh — the API of the working tree against the previous release's (.ci/previous-release:
# `<tag> <commit>`): the OpenAPI document of GET /openapi.json with `oasdiff breaking --fail-on ERR`, the GraphQL
# schema with `graphql-inspector diff`. Both sides are printed by .ci/print-api.ts from their own sources (the
# release's from this clone's history, unpacked with git archive), without starting a server. A breaking change fails
# unless CHANGELOG.md names it in a `### Breaking` list of `## [Unreleased]` or of a release since the previous one (.ci/compat-verdict.ts;
# docs/integrating.md, "API compatibility"). Tools: oasdiff pinned in .ci/go-tools.txt (built by .ci/go-tool.sh),
# @graphql-inspector/cli pinned below (npx). Called by .ci/run after the static checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
GRAPHQL_INSPECTOR_VERSION=7.0.0
# Scripts run on the Node 24 of the `node` dev dependency, as under npm run.
export PATH="$root/node_modules/.bin:$PATH"

read -r tag commit < <(grep -Ev '^[[:space:]]*(#|$)' .ci/previous-release | head -n 1) || true
if [[ ! "${commit:-}" =~ ^[0-9a-f]{40}$ ]]; then
  echo "check-compat: .ci/previous-release must hold one line '<tag> <40-hex commit>'" >&2
  exit 1
fi
if ! git cat-file -e "${commit}^{commit}" 2>/dev/null; then
  echo "check-compat: the previous release $tag ($commit) is not in this clone's history (a shallow clone?)" >&2
  exit 1
fi
echo "previous release: $tag ($commit); working tree: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with changes')"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/previous"
git archive "$commit" | tar -x -C "$work/previous"

# The release's dependencies: this tree's node_modules when every package the release locks is installed here at the
# same version (the usual case: releases differ in a few packages, if any); otherwise its own `npm ci`.
if python3 - "$work/previous/package-lock.json" package-lock.json <<'EOF'; then
import json, sys
old, new = (json.load(open(path))["packages"] for path in sys.argv[1:3])
missing = [name for name, entry in old.items()
           if name and not entry.get("link") and new.get(name, {}).get("version") != entry.get("version")]
if missing:
    print(f"the release locks {len(missing)} package(s) this tree does not, e.g. {missing[:3]}: npm ci for it")
    sys.exit(1)
EOF
  ln -s "$(readlink -f node_modules)" "$work/previous/node_modules"
else
  (cd "$work/previous" && npm ci --ignore-scripts --no-audit --no-fund)
fi

node .ci/print-api.ts "$work/previous" "$work/old"
node .ci/print-api.ts "$root" "$work/new"

echo
echo "==> REST: oasdiff breaking --fail-on ERR ($tag -> working tree)"
oasdiff=$(bash .ci/go-tool.sh oasdiff)
rest_status=0
"$oasdiff" breaking "$work/old/openapi.json" "$work/new/openapi.json" --fail-on ERR --color never || rest_status=$?
"$oasdiff" breaking "$work/old/openapi.json" "$work/new/openapi.json" --format json >"$work/oasdiff.json"
echo "(oasdiff exit status $rest_status)"

echo
echo "==> GraphQL: graphql-inspector diff ($tag -> working tree)"
COMPAT_GRAPHQL_OUT="$work/graphql.json" npx -y "@graphql-inspector/cli@$GRAPHQL_INSPECTOR_VERSION" diff \
  "$work/old/schema.graphql" "$work/new/schema.graphql" --onComplete .ci/compat-graphql.cjs

echo
echo "==> Breaking changes against CHANGELOG.md"
status=0
node .ci/compat-verdict.ts CHANGELOG.md "$work/oasdiff.json" "$work/graphql.json" "$tag" || status=$?
echo "check-compat: $((SECONDS - started)) s"
exit "$status"
