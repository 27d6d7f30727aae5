#!/usr/bin/env bash
# Usage: .ci/go-tool.sh NAME — prints the path of the pinned tool NAME of .ci/go-tools.txt, building it first with
# `go install MODULE@VERSION` into its own folder when missing (a few minutes the first time for k6 and helm).
set -euo pipefail
name="${1:?usage: go-tool.sh NAME}"
list="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/go-tools.txt"
read -r module version < <(awk -v n="$name" '$1 == n { print $2, $3 }' "$list")  || true
[[ -n "${module:-}" ]] || { echo "go-tool.sh: $name is not in $list" >&2; exit 1; }
dir="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-rewards/go-tools/$name-$version"
if [[ ! -x "$dir/$name" ]]; then
  command -v go >/dev/null 2>&1 || { echo "go-tool.sh: $name $version is not installed and Go is missing" >&2; exit 1; }
  echo "go-tool.sh: building $name: go install $module@$version (a few minutes the first time)" >&2
  mkdir -p "$dir"
  GOBIN="$dir" go install "$module@$version" >&2
fi
echo "$dir/$name"
