// ledger: owner of the `ledger` schema. Console actions, snapshot and records, event decisions, link intents and
// public configuration data; every mutation is one transaction here.

import { randomBytes } from 'node:crypto';
import type { EnvReader } from '#runtime/config.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { SIMULATION_MAX_EVENTS_DEFAULT } from '#runtime/contracts/simulation.ts';
import { stateOwner } from '#runtime/program.ts';
import { PACKAGE_VERSION } from '#runtime/version.ts';
import { consoleEndpoints } from './console/endpoints.ts';
import {
  CONSOLE_READS_PER_ORGANIZATION_DEFAULT,
  MemberOrganizations,
  OrganizationTurns,
  withOrganizationTurns,
} from './console/organization-turns.ts';
import { memberOrganizationIds } from './console/read-repository.ts';
import { EVENT_BATCH_MAX_DEFAULT, EVENT_GROUP_KEYS_MAX_DEFAULT, eventEndpoints } from './events/index.ts';
import { linkEndpoints } from './links/index.ts';
import { ledgerMigrations } from './migrations/index.ts';
import {
  RETENTION_BATCH_DEFAULT,
  RETENTION_INTERVAL_SECONDS_DEFAULT,
  RetentionRepository,
  RetentionScheduler,
} from './retention/index.ts';
import { simulationEndpoints } from './simulation/endpoints.ts';
import { SIMULATIONS_PER_LEDGER_DEFAULT, SIMULATIONS_PER_ORGANIZATION_DEFAULT } from './simulation/simulation.ts';
import { parseAllowedPorts } from './webhooks/addresses.ts';
import { webhookReadEndpoints } from './webhooks/endpoints.ts';
import { WebhookRepository } from './webhooks/repository.ts';
import {
  BACKLOG_CHECK_INTERVAL_MS,
  WEBHOOK_PENDING_PER_ENDPOINT_MAX_DEFAULT,
  WEBHOOK_RETRY_DELAY_MAX_MS,
  WebhookWorker,
} from './webhooks/worker.ts';

export interface LedgerConfig {
  eventRateLimitPerMinute: number;
  /** Most events decided in one call of ledger.record_events (one transaction); 1 turns batching off. */
  eventBatchMax: number;
  /** Most keys' waiting batches in one call of ledger.record_events (EVENT_GROUP_KEYS_MAX); 1: one key per call. */
  eventGroupKeysMax: number;
  /** SIMULATE_RULE_MAX_EVENTS: the most stored decisions one rule dry-run (simulateRule) replays. */
  simulateRuleMaxEvents: number;
  /** SIMULATE_RULE_PER_ORGANIZATION_MAX, SIMULATE_RULE_LEDGER_MAX: dry-runs at once (simulation/simulation.ts). */
  simulationsPerOrganizationMax: number;
  simulationsMax: number;
  /** CONSOLE_READS_PER_ORGANIZATION_MAX: console reads of one organization's members at once (console/organization-turns.ts). */
  consoleReadsPerOrganizationMax: number;
  /** Seconds between runs of the retention clean-up; 0 turns it off. */
  retentionIntervalSeconds: number;
  /** Most rows the retention clean-up removes per table in one run. */
  retentionBatch: number;
  webhooks: WebhookConfig;
}

/** The webhooks' configuration (docs/webhooks.md). */
export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES: http:// and loopback or private addresses allowed (the development default). */
  allowPrivateAddresses: boolean;
  /** 443, 80 and WEBHOOK_ALLOWED_PORTS: the ports public endpoints may use. */
  allowedPorts: number[];
  /**
   * WEBHOOK_SECRET_KEY (base64 of 32 bytes): the key secrets are encrypted with. Required with DATABASE_URL (a
   * deployment); unset only on the development default (embedded database), where one is kept in the database.
   */
  secretKey: Buffer | undefined;
  /** WEBHOOK_WORKER=false: this process sends nothing (another replica does). */
  worker: boolean;
  pollIntervalMs: number;
  inFlightPerEndpoint: number;
  inFlightMax: number;
  /** WEBHOOK_IN_FLIGHT_PER_ORGANIZATION: one organization's share of inFlightMax. */
  inFlightPerOrganization: number | undefined;
  retryBaseMs: number;
  retryDelayMaxMs: number;
  disableAfterHours: number;
  /** WEBHOOK_PENDING_PER_ENDPOINT_MAX: pending messages past which an endpoint is disabled (reason `backlog`). */
  pendingPerEndpointMax: number;
  /** WEBHOOK_BACKLOG_CHECK_INTERVAL_MS: how often each worker looks for such endpoints. */
  backlogCheckIntervalMs: number;
}

/** The refusal of a deployment without WEBHOOK_SECRET_KEY. */
export const WEBHOOK_SECRET_KEY_REQUIRED =
  'WEBHOOK_SECRET_KEY is required when DATABASE_URL is set: webhook signing secrets are stored encrypted with it, ' +
  'and the key must not live in the database beside them. Set it to the base64 of 32 random bytes ' +
  '(openssl rand -base64 32), the same on every ledger replica, and keep it (docs/webhooks.md)';

function readSecretKey(reader: EnvReader): Buffer | undefined {
  const text = reader.string('WEBHOOK_SECRET_KEY');
  // A deployment (DATABASE_URL) never keeps the key in its own database; only the embedded default does.
  reader.check(text !== undefined || reader.string('DATABASE_URL') === undefined, WEBHOOK_SECRET_KEY_REQUIRED);
  if (text === undefined) return undefined;
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('WEBHOOK_SECRET_KEY must be the base64 of 32 bytes');
  return key;
}

export const ledger = stateOwner<LedgerConfig>({
  name: 'ledger',
  database: { migrations: ledgerMigrations },
  readConfig(reader: EnvReader): LedgerConfig {
    return {
      eventRateLimitPerMinute: reader.int('EVENT_RATE_LIMIT_PER_MINUTE', 120, { min: 1, max: 1_000_000 }),
      eventBatchMax: reader.int('EVENT_BATCH_MAX', EVENT_BATCH_MAX_DEFAULT, {
        min: 1,
        max: EVENT_LIMITS.eventsPerCallMax,
      }),
      eventGroupKeysMax: reader.int('EVENT_GROUP_KEYS_MAX', EVENT_GROUP_KEYS_MAX_DEFAULT, {
        min: 1,
        max: EVENT_LIMITS.keysPerCallMax,
      }),
      simulateRuleMaxEvents: reader.int('SIMULATE_RULE_MAX_EVENTS', SIMULATION_MAX_EVENTS_DEFAULT, {
        min: 1,
        max: 1_000_000,
      }),
      simulationsPerOrganizationMax: reader.int(
        'SIMULATE_RULE_PER_ORGANIZATION_MAX',
        SIMULATIONS_PER_ORGANIZATION_DEFAULT,
        { min: 1, max: 100 },
      ),
      simulationsMax: reader.int('SIMULATE_RULE_LEDGER_MAX', SIMULATIONS_PER_LEDGER_DEFAULT, { min: 1, max: 1_000 }),
      consoleReadsPerOrganizationMax: reader.int(
        'CONSOLE_READS_PER_ORGANIZATION_MAX',
        CONSOLE_READS_PER_ORGANIZATION_DEFAULT,
        { min: 1, max: 1_000 },
      ),
      retentionIntervalSeconds: reader.int('LEDGER_RETENTION_INTERVAL_SECONDS', RETENTION_INTERVAL_SECONDS_DEFAULT, {
        min: 0,
        max: 86_400,
      }),
      retentionBatch: reader.int('LEDGER_RETENTION_BATCH', RETENTION_BATCH_DEFAULT, { min: 1, max: 100_000 }),
      webhooks: {
        allowPrivateAddresses: reader.bool('WEBHOOK_ALLOW_PRIVATE_ADDRESSES', false),
        allowedPorts: parseAllowedPorts(reader.string('WEBHOOK_ALLOWED_PORTS')),
        secretKey: readSecretKey(reader),
        worker: reader.bool('WEBHOOK_WORKER', true),
        pollIntervalMs: reader.int('WEBHOOK_POLL_INTERVAL_MS', 500, { min: 10, max: 60_000 }),
        inFlightPerEndpoint: reader.int('WEBHOOK_IN_FLIGHT_PER_ENDPOINT', 4, { min: 1, max: 100 }),
        inFlightMax: reader.int('WEBHOOK_IN_FLIGHT_MAX', 64, { min: 1, max: 10_000 }),
        // 0: half of WEBHOOK_IN_FLIGHT_MAX (the worker's default).
        inFlightPerOrganization:
          reader.int('WEBHOOK_IN_FLIGHT_PER_ORGANIZATION', 0, { min: 0, max: 10_000 }) || undefined,
        retryBaseMs: reader.int('WEBHOOK_RETRY_BASE_MS', 5000, { min: 100, max: 3_600_000 }),
        retryDelayMaxMs: reader.int('WEBHOOK_RETRY_DELAY_MAX_MS', WEBHOOK_RETRY_DELAY_MAX_MS, {
          min: 100,
          max: WEBHOOK_RETRY_DELAY_MAX_MS,
        }),
        disableAfterHours: reader.int('WEBHOOK_DISABLE_AFTER_HOURS', 120, { min: 1, max: 8760 }),
        pendingPerEndpointMax: reader.int(
          'WEBHOOK_PENDING_PER_ENDPOINT_MAX',
          WEBHOOK_PENDING_PER_ENDPOINT_MAX_DEFAULT,
          {
            min: 1,
            max: 100_000_000,
          },
        ),
        backlogCheckIntervalMs: reader.int('WEBHOOK_BACKLOG_CHECK_INTERVAL_MS', BACKLOG_CHECK_INTERVAL_MS, {
          min: 100,
          max: 3_600_000,
        }),
      },
    };
  },
  async create(deps, config) {
    const { database } = deps;
    const retention = new RetentionScheduler(
      new RetentionRepository(database),
      { intervalSeconds: config.retentionIntervalSeconds, batch: config.retentionBatch },
      deps.logger.child({ component: 'retention' }),
      deps.metrics,
    );
    retention.start();
    const webhookRepository = new WebhookRepository(database);
    const { webhooks } = config;
    if (!webhooks.secretKey) {
      // Only on the development default (readSecretKey refuses a deployment without the key).
      deps.logger.info('WEBHOOK_SECRET_KEY is not set: webhook secrets are encrypted with a key kept in the database');
    }
    let databaseKey: Promise<Buffer> | undefined;
    const secretKey = () => {
      if (webhooks.secretKey) return Promise.resolve(webhooks.secretKey);
      databaseKey ??= webhookRepository.databaseSecretKey(randomBytes(32)).catch((error: unknown) => {
        databaseKey = undefined;
        throw error;
      });
      return databaseKey;
    };
    const worker = webhooks.worker
      ? new WebhookWorker(
          webhookRepository,
          secretKey,
          {
            pollIntervalMs: webhooks.pollIntervalMs,
            inFlightPerEndpoint: webhooks.inFlightPerEndpoint,
            inFlightMax: webhooks.inFlightMax,
            inFlightPerOrganization: webhooks.inFlightPerOrganization,
            retryBaseMs: webhooks.retryBaseMs,
            retryDelayMaxMs: webhooks.retryDelayMaxMs,
            disableAfterMs: webhooks.disableAfterHours * 3600_000,
            pendingPerEndpointMax: webhooks.pendingPerEndpointMax,
            backlogCheckIntervalMs: webhooks.backlogCheckIntervalMs,
            allowPrivateAddresses: webhooks.allowPrivateAddresses,
            allowedPorts: webhooks.allowedPorts,
          },
          deps.logger.child({ component: 'webhooks' }),
          deps.metrics,
        )
      : undefined;
    worker?.start();
    if (worker) {
      deps.metrics.collections.track('ledger', {
        webhook_organizations_in_flight: () => worker.sizes.organizationsInFlight,
        webhook_messages_in_flight: () => worker.sizes.inFlight,
      });
    }
    const organizationTurns = new OrganizationTurns(config.consoleReadsPerOrganizationMax);
    const memberOrganizations = new MemberOrganizations((identityUserId) =>
      memberOrganizationIds(database, identityUserId),
    );
    deps.metrics.collections.track('ledger', {
      console_read_turns_organizations: () => organizationTurns.counts.organizations,
      console_reads_waiting: () => organizationTurns.counts.waiting,
      member_organizations: () => memberOrganizations.size,
    });
    return {
      name: 'ledger',
      close: async () => {
        await Promise.all([retention.stop(), worker?.stop()]);
      },
      services: [
        {
          service: 'ledger',
          version: PACKAGE_VERSION,
          description: 'Console, events, links and configuration',
          endpoints: withOrganizationTurns(
            [
              ...consoleEndpoints({
                database,
                clock: deps.clock,
                logger: deps.logger,
                transport: deps.transport,
                webhooks: {
                  allowPrivateAddresses: webhooks.allowPrivateAddresses,
                  allowedPorts: webhooks.allowedPorts,
                  secretKey,
                },
              }),
              ...webhookReadEndpoints({ database, logger: deps.logger }),
              ...eventEndpoints(deps, config),
              ...linkEndpoints(deps),
              ...simulationEndpoints(
                { database, logger: deps.logger, metrics: deps.metrics },
                {
                  rateLimitPerMinute: config.eventRateLimitPerMinute,
                  maxEvents: config.simulateRuleMaxEvents,
                  perOrganizationMax: config.simulationsPerOrganizationMax,
                  max: config.simulationsMax,
                },
              ),
            ],
            organizationTurns,
            memberOrganizations,
            deps.metrics,
          ),
        },
      ],
    };
  },
});
