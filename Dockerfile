# syntax=docker/dockerfile:1
#
# One image for the five Sandbox Rewards programs (and the all-in-one process).
# Node 24 runs the TypeScript sources directly (type stripping): there is no build step,
# only the production dependencies are installed; the programs' compile cache is filled at
# build time so that they run without the type stripper.
#
#   docker build -t sandbox-rewards .
#   docker run --rm -e NATS_URL=nats://nats:4222 sandbox-rewards gateway/src/main.ts
#   docker run --rm -e DATABASE_URL=... sandbox-rewards services/all-in-one/src/migrate.ts
#   docker run --rm -p 8080:8080 sandbox-rewards            # all-in-one (npm start equivalent)
#   docker run --rm -e OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318 ... # with traces
#
# The web console (/console/ on the gateway) is served from console/dist, built in a stage of its own
# (docs/console-ui.md): the image gets the built files, not the build tools. The embedded database's template (the
# all-in-one's first start on a new DATA_DIR unpacks it; not in git) is built in a stage of its own too, from the
# image's own sources and production dependencies (`npm run embedded:template`).
#
# Entry files: gateway/src/main.ts, services/ingest/src/main.ts, services/links/src/main.ts,
# services/ledger/src/main.ts, services/identity-admission/src/main.ts.

ARG NODE_VERSION=24.21.0

# ---- dependencies: production node_modules only (the `node` devDependency is left out) ----
FROM node:${NODE_VERSION}-slim AS deps
WORKDIR /app
ENV NODE_ENV=production \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
# devDependencies are removed from this stage's package.json first: the image never needs
# the dev tools, and `npm ci` then does not check the lockfile for their platform-specific
# optional packages (biome, buf, swc binaries), which registries or lockfiles may lack.
# The runtime stage gets the untouched package.json with the sources.
# The `prepare` script (the console's build, which needs the dev tools) is the console stage's.
RUN --mount=type=cache,target=/root/.npm \
    npm pkg delete devDependencies scripts.prepare \
 && npm ci --omit=dev --no-audit --no-fund

# ---- console: the web console's build (Vite, a devDependency) into console/dist ----
FROM node:${NODE_VERSION}-slim AS console
WORKDIR /app
ENV npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
# The base image's Node runs the build (the `node` devDependency is left out), `prepare` runs below once the sources
# are here, and no dependency's install script runs (Vite needs none).
RUN --mount=type=cache,target=/root/.npm \
    npm pkg delete devDependencies.node scripts.prepare \
 && npm ci --ignore-scripts --no-audit --no-fund
COPY console ./console
COPY services/runtime/src/contracts ./services/runtime/src/contracts
RUN npm run console:build

# ---- template: the embedded database's template, services/runtime/src/db/embedded-template/ ----
# What `npm run embedded:template` (the `prepare` script's second step) runs: initdb in PGlite, every migration, packed.
# The production dependencies (PGlite is one) and the sources are enough; the build context holds no template
# (.dockerignore), so the image's is always made from the migrations it ships.
FROM node:${NODE_VERSION}-slim AS template
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN node --liftoff-only services/all-in-one/src/make-embedded-template.ts

# ---- runtime ----
FROM node:${NODE_VERSION}-slim AS runtime
# NODE_COMPILE_CACHE: Node's compile cache, filled below at build time, so that the programs load their modules
# without Node's TypeScript type stripper (about 13 MiB less per process; docs/benchmarks.md, "Memory").
ENV NODE_ENV=production \
    HTTP_PORT=8080 \
    PORT=8080 \
    HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    DATA_DIR=/tmp/data \
    NODE_COMPILE_CACHE=/app/.cache/node-compile-cache
WORKDIR /app
# Sources and dependencies stay owned by root and read-only for the runtime user;
# the only writable place the programs need is /tmp (an emptyDir in Kubernetes).
COPY --from=deps /app/node_modules ./node_modules
COPY . .
COPY --from=console /app/console/dist ./console/dist
COPY --from=template /app/services/runtime/src/db/embedded-template ./services/runtime/src/db/embedded-template
# Each program's entry with --warm-compile-cache loads what a start loads, writes the compile cache and exits (started
# as the ENTRYPOINT starts it, so with the same flags and paths: the cache is keyed by both). Read-only at run time: a
# file the cache lacks is compiled as without it, and Node's write of it fails quietly.
RUN for entry in services/identity-admission/src/main.ts services/ledger/src/main.ts gateway/src/main.ts \
        services/ingest/src/main.ts services/links/src/main.ts; do \
      sh /app/services/runtime/start.sh "$entry" --warm-compile-cache || exit 1; \
    done
# 1000 is the `node` user of the base image; numeric so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
# Exec form, and start.sh execs node: node is PID 1 and receives SIGTERM itself; every program handles it
# (drains NATS, finishes in-flight requests, exits within about 10 s). start.sh starts node with the programs' flags
# and environment (services/runtime/node-flags, why each) and the tracing register file, loaded before the program:
# it does nothing unless an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, see docs/deploy.md "Traces").
ENTRYPOINT ["sh", "/app/services/runtime/start.sh"]
CMD ["services/all-in-one/src/main.ts"]
