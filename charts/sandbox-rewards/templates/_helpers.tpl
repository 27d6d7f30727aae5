{{/*
Helpers of the sandbox-rewards chart. Every helper is namespaced "sandbox-rewards.".
*/}}

{{/* Chart name. */}}
{{- define "sandbox-rewards.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified name prefix; trimmed so "<fullname>-identity-admission" fits 63 characters. */}}
{{- define "sandbox-rewards.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Chart label value. */}}
{{- define "sandbox-rewards.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The five programs in a fixed order. */}}
{{- define "sandbox-rewards.programNames" -}}
gateway ingest links ledger identity-admission
{{- end -}}

{{/*
Static facts about each program (fixed by the code): values key, entry file, role.
Usage: {{ $p := include "sandbox-rewards.program" "identity-admission" | fromYaml }}
*/}}
{{- define "sandbox-rewards.program" -}}
{{- $catalog := dict
  "gateway" (dict "valuesKey" "gateway" "entry" "gateway/src/main.ts" "role" "edge")
  "ingest" (dict "valuesKey" "ingest" "entry" "services/ingest/src/main.ts" "role" "edge")
  "links" (dict "valuesKey" "links" "entry" "services/links/src/main.ts" "role" "edge")
  "ledger" (dict "valuesKey" "ledger" "entry" "services/ledger/src/main.ts" "role" "state-owner")
  "identity-admission" (dict "valuesKey" "identityAdmission" "entry" "services/identity-admission/src/main.ts" "role" "state-owner")
-}}
{{- $p := get $catalog . -}}
{{- if not $p -}}
{{- fail (printf "unknown program %q" .) -}}
{{- end -}}
{{- toYaml (merge (dict "name" .) $p) -}}
{{- end -}}

{{/* Resource name of one program. Usage: include "sandbox-rewards.programFullname" (dict "root" $ "program" "gateway") */}}
{{- define "sandbox-rewards.programFullname" -}}
{{- printf "%s-%s" (include "sandbox-rewards.fullname" .root) .program | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels shared by every resource. */}}
{{- define "sandbox-rewards.labels" -}}
helm.sh/chart: {{ include "sandbox-rewards.chart" . }}
{{ include "sandbox-rewards.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: sandbox-rewards
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels shared by every resource of the release. */}}
{{- define "sandbox-rewards.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sandbox-rewards.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of one component. Usage: include "sandbox-rewards.componentLabels" (dict "root" $ "component" "gateway") */}}
{{- define "sandbox-rewards.componentLabels" -}}
{{ include "sandbox-rewards.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Selector labels of one component. */}}
{{- define "sandbox-rewards.componentSelectorLabels" -}}
{{ include "sandbox-rewards.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Image reference: repository@digest, or repository:tag (tag defaults to appVersion). */}}
{{- define "sandbox-rewards.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* ServiceAccount of the programs. */}}
{{- define "sandbox-rewards.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sandbox-rewards.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Name of the Secret created by the chart. */}}
{{- define "sandbox-rewards.secretName" -}}
{{- include "sandbox-rewards.fullname" . -}}
{{- end -}}

{{/* Whether the chart creates its Secret ("true" or empty). */}}
{{- define "sandbox-rewards.createSecret" -}}
{{- if or .Values.database.url .Values.adminToken.value .Values.webhookSecretKey.value -}}true{{- end -}}
{{- end -}}

{{/* secretKeyRef of DATABASE_URL: the chart's Secret when database.url is set, else database.existingSecret. */}}
{{- define "sandbox-rewards.databaseUrlRef" -}}
{{- if .Values.database.url -}}
name: {{ include "sandbox-rewards.secretName" . }}
key: DATABASE_URL
{{- else if .Values.database.existingSecret.name -}}
name: {{ .Values.database.existingSecret.name }}
key: {{ .Values.database.existingSecret.key }}
{{- else -}}
{{- fail "DATABASE_URL is required: set database.url or database.existingSecret.name" -}}
{{- end -}}
{{- end -}}

{{/* secretKeyRef of WEBHOOK_SECRET_KEY (ledger): the chart's Secret when webhookSecretKey.value is set, else
webhookSecretKey.existingSecret; required, as the ledger refuses to start on a database without it. */}}
{{- define "sandbox-rewards.webhookSecretKeyRef" -}}
{{- if .Values.webhookSecretKey.value -}}
name: {{ include "sandbox-rewards.secretName" . }}
key: WEBHOOK_SECRET_KEY
{{- else if .Values.webhookSecretKey.existingSecret.name -}}
name: {{ .Values.webhookSecretKey.existingSecret.name }}
key: {{ .Values.webhookSecretKey.existingSecret.key }}
{{- else -}}
{{- fail "WEBHOOK_SECRET_KEY is required: set webhookSecretKey.value or webhookSecretKey.existingSecret.name (base64 of 32 bytes: openssl rand -base64 32)" -}}
{{- end -}}
{{- end -}}

{{/* secretKeyRef of ADMIN_TOKEN, or empty when the operator API is disabled. */}}
{{- define "sandbox-rewards.adminTokenRef" -}}
{{- if .Values.adminToken.value -}}
name: {{ include "sandbox-rewards.secretName" . }}
key: ADMIN_TOKEN
{{- else if .Values.adminToken.existingSecret.name -}}
name: {{ .Values.adminToken.existingSecret.name }}
key: {{ .Values.adminToken.existingSecret.key }}
{{- end -}}
{{- end -}}

{{/*
Non-secret environment of one program (CONTRACT section 1), as a YAML map.
Empty values are left out so the program's own default applies.
Usage: include "sandbox-rewards.programConfig" (dict "root" $ "program" "ledger")
*/}}
{{- define "sandbox-rewards.programConfig" -}}
{{- $c := .root.Values.config -}}
{{- $env := dict "LOG_LEVEL" $c.logLevel "HTTP_PORT" "8080" "NATS_URL" $c.natsUrl "NATS_REQUEST_TIMEOUT_MS" (toString $c.natsRequestTimeoutMs) "DATA_DIR" "/tmp/data" "TRUST_PROXY" (toString $c.trustProxy) -}}
{{- /* Edges drain after SIGTERM until the readiness probe has failed enough times for the Service to drop them. */ -}}
{{- if has .program (list "gateway" "ingest" "links") -}}
{{- $r := .root.Values.probes.readiness -}}
{{- $drainMs := 0 -}}
{{- if $r.enabled -}}
{{- $drainMs = mul (add (mul $r.periodSeconds $r.failureThreshold) 1) 1000 -}}
{{- end -}}
{{- $_ := set $env "SHUTDOWN_DRAIN_MS" (toString $drainMs) -}}
{{- end -}}
{{- if has .program (list "ledger" "identity-admission") -}}
{{- $_ := set $env "DATABASE_POOL_MAX" (toString .root.Values.database.poolMax) -}}
{{- $_ := set $env "DATABASE_NAMED_STATEMENTS" (toString .root.Values.database.namedStatements) -}}
{{- $_ := set $env "DATABASE_STATEMENT_TIMEOUT_MS" (toString .root.Values.database.statementTimeoutMs) -}}
{{- $_ := set $env "DATABASE_LOCK_TIMEOUT_MS" (toString .root.Values.database.lockTimeoutMs) -}}
{{- end -}}
{{- if eq .program "gateway" -}}
{{- $_ := set $env "GRAPHQL_INTROSPECTION" (toString $c.graphqlIntrospection) -}}
{{- $_ := set $env "LIVE_CONNECTIONS_PER_DEVELOPER_MAX" (toString $c.liveConnectionsPerDeveloperMax) -}}
{{- $_ := set $env "DEVELOPER_RATE_PER_SECOND" (toString $c.developerRatePerSecond) -}}
{{- $_ := set $env "DEVELOPER_BURST" (toString $c.developerBurst) -}}
{{- $_ := set $env "DEVELOPER_IN_FLIGHT_MAX" (toString $c.developerInFlightMax) -}}
{{- $_ := set $env "SIMULATE_RULE_PER_DEVELOPER_MAX" (toString $c.simulateRulePerDeveloperMax) -}}
{{- $_ := set $env "SIMULATE_RULE_IN_FLIGHT_MAX" (toString $c.simulateRuleInFlightMax) -}}
{{- $_ := set $env "CONSOLE_READS_PER_DEVELOPER_MAX" (toString $c.consoleReadsPerDeveloperMax) -}}
{{- $_ := set $env "CONSOLE_READS_IN_FLIGHT_MAX" (toString $c.consoleReadsInFlightMax) -}}
{{- else if eq .program "ingest" -}}
{{- $_ := set $env "INGEST_EVENT_BATCH_MAX" (toString $c.ingestEventBatchMax) -}}
{{- $_ := set $env "INGEST_EVENT_IN_FLIGHT_MAX" (toString $c.ingestEventInFlightMax) -}}
{{- $_ := set $env "INGEST_EVENT_KEYS_MAX" (toString $c.ingestEventKeysMax) -}}
{{- $_ := set $env "INGEST_EVENT_KEY_IN_FLIGHT_MAX" (toString $c.ingestEventKeyInFlightMax) -}}
{{- $_ := set $env "INGEST_EVENT_KEY_REQUESTS_MAX" (toString $c.ingestEventKeyRequestsMax) -}}
{{- $_ := set $env "INGEST_EVENT_HOLD_CONNECTIONS" (toString $c.ingestEventHoldConnections) -}}
{{- $_ := set $env "INGEST_FLOOD_PACING_TARGET_PERCENT" (toString $c.ingestFloodPacingTargetPercent) -}}
{{- else if eq .program "ledger" -}}
{{- $_ := set $env "EVENT_RATE_LIMIT_PER_MINUTE" (toString $c.eventRateLimitPerMinute) -}}
{{- $_ := set $env "EVENT_BATCH_MAX" (toString $c.eventBatchMax) -}}
{{- $_ := set $env "EVENT_GROUP_KEYS_MAX" (toString $c.eventGroupKeysMax) -}}
{{- $_ := set $env "SIMULATE_RULE_MAX_EVENTS" (toString $c.simulateRuleMaxEvents) -}}
{{- $_ := set $env "LEDGER_RETENTION_INTERVAL_SECONDS" (toString $c.ledgerRetentionIntervalSeconds) -}}
{{- $_ := set $env "LEDGER_RETENTION_BATCH" (toString $c.ledgerRetentionBatch) -}}
{{- $_ := set $env "CONSOLE_READS_PER_ORGANIZATION_MAX" (toString $c.consoleReadsPerOrganizationMax) -}}
{{- else if eq .program "identity-admission" -}}
{{- $opt := dict
  "DEVELOPER_JWKS" $c.developer.jwks
  "DEVELOPER_JWKS_URL" $c.developer.jwksUrl
  "DEVELOPER_JWT_ISSUER" $c.developer.jwtIssuer
  "DEVELOPER_JWT_AUDIENCE" $c.developer.jwtAudience
  "NATIVE_JWKS" $c.native.jwks
  "NATIVE_JWKS_URL" $c.native.jwksUrl
  "NATIVE_JWT_ISSUER" $c.native.jwtIssuer
  "NATIVE_JWT_AUDIENCE" $c.native.jwtAudience
  "SUPPORTED_COUNTRIES" (join "," $c.supportedCountries)
  "ALLOWED_ORIGINS" (join "," $c.allowedOrigins)
-}}
{{- range $k, $v := $opt -}}
{{- if $v -}}
{{- $_ := set $env $k $v -}}
{{- end -}}
{{- end -}}
{{- $_ := set $env "NATIVE_ADMISSION_MODE" $c.native.admissionMode -}}
{{- $_ := set $env "NATIVE_MIN_BUILD" (toString $c.native.minBuild) -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* Pod volumes shared by every pod: a writable /tmp. */}}
{{- define "sandbox-rewards.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpVolumeSizeLimit }}
{{- end -}}

{{- define "sandbox-rewards.tmpVolumeMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* Name of the Secret holding the programs' NATS credentials: nats.auth.existingSecret, else the chart's. */}}
{{- define "sandbox-rewards.natsSecretName" -}}
{{- .Values.nats.auth.existingSecret | default (printf "%s-nats" (include "sandbox-rewards.fullname" .)) -}}
{{- end -}}

{{/*
NATS credential and TLS environment of one program (EnvVar list; empty with nats.auth.method none and no TLS):
the program's own entries of the NATS Secret (docs/deploy.md, "NATS: the trust boundary").
Usage: include "sandbox-rewards.natsEnv" (dict "root" $ "program" "ledger")
*/}}
{{- define "sandbox-rewards.natsEnv" -}}
{{- $a := .root.Values.nats.auth -}}
{{- $secret := include "sandbox-rewards.natsSecretName" .root -}}
{{- if eq $a.method "userPassword" }}
- name: NATS_USER
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ .program }}-user
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ .program }}-password
{{- else if eq $a.method "token" }}
- name: NATS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ .program }}-token
{{- else if eq $a.method "nkey" }}
- name: NATS_NKEY_SEED_FILE
  value: /etc/sandbox-rewards/nats/nkey-seed
{{- else if eq $a.method "creds" }}
- name: NATS_CREDS_FILE
  value: /etc/sandbox-rewards/nats/user.creds
{{- end }}
{{- if .root.Values.nats.tls.existingSecret }}
- name: NATS_TLS_CA_FILE
  value: /etc/sandbox-rewards/nats-tls/ca.crt
{{- if .root.Values.nats.tls.clientCertificate }}
- name: NATS_TLS_CERT_FILE
  value: /etc/sandbox-rewards/nats-tls/tls.crt
- name: NATS_TLS_KEY_FILE
  value: /etc/sandbox-rewards/nats-tls/tls.key
{{- end }}
{{- end }}
{{- end -}}

{{/*
Volumes of one program's NATS files: its own NKey seed or .creds entry only, and the TLS Secret (read-only, mode 0440).
Usage: include "sandbox-rewards.natsVolumes" (dict "root" $ "program" "ledger")
*/}}
{{- define "sandbox-rewards.natsVolumes" -}}
{{- $method := .root.Values.nats.auth.method -}}
{{- if has $method (list "nkey" "creds") }}
- name: nats-credentials
  secret:
    secretName: {{ include "sandbox-rewards.natsSecretName" .root }}
    defaultMode: 288
    items:
      - key: {{ .program }}{{ if eq $method "nkey" }}.nk{{ else }}.creds{{ end }}
        path: {{ if eq $method "nkey" }}nkey-seed{{ else }}user.creds{{ end }}
{{- end }}
{{- with .root.Values.nats.tls }}
{{- if .existingSecret }}
- name: nats-tls
  secret:
    secretName: {{ .existingSecret }}
    defaultMode: 288
    items:
      - key: ca.crt
        path: ca.crt
      {{- if .clientCertificate }}
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
      {{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Mounts of the volumes of sandbox-rewards.natsVolumes. */}}
{{- define "sandbox-rewards.natsVolumeMounts" -}}
{{- if has .Values.nats.auth.method (list "nkey" "creds") }}
- name: nats-credentials
  mountPath: /etc/sandbox-rewards/nats
  readOnly: true
{{- end }}
{{- if .Values.nats.tls.existingSecret }}
- name: nats-tls
  mountPath: /etc/sandbox-rewards/nats-tls
  readOnly: true
{{- end }}
{{- end -}}
