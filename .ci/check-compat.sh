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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The release's files and dependencies (the helper shared with the fault suite's upgrade phase).
read -r tag commit < <(bash .ci/unpack-previous-release.sh "$work/previous")
echo "previous release: $tag ($commit); working tree: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with changes')"

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
