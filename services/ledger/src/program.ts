// ledger: owner of the `ledger` schema. Console actions, snapshot and records, event decisions, link intents and
// public configuration data; every mutation is one transaction here.

import type { EnvReader } from '#runtime/config.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { SIMULATION_MAX_EVENTS_DEFAULT } from '#runtime/contracts/simulation.ts';
import { stateOwner } from '#runtime/program.ts';
import { PACKAGE_VERSION } from '#runtime/version.ts';
import { consoleEndpoints } from './console/endpoints.ts';
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

export interface LedgerConfig {
  eventRateLimitPerMinute: number;
  /** Most events decided in one call of ledger.record_events (one transaction); 1 turns batching off. */
  eventBatchMax: number;
  /** Most keys' waiting batches in one call of ledger.record_events (EVENT_GROUP_KEYS_MAX); 1: one key per call. */
  eventGroupKeysMax: number;
  /** SIMULATE_RULE_MAX_EVENTS: the most stored decisions one rule dry-run (simulateRule) replays. */
  simulateRuleMaxEvents: number;
  /** Seconds between runs of the retention clean-up; 0 turns it off. */
  retentionIntervalSeconds: number;
  /** Most rows the retention clean-up removes per table in one run. */
  retentionBatch: number;
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
      retentionIntervalSeconds: reader.int('LEDGER_RETENTION_INTERVAL_SECONDS', RETENTION_INTERVAL_SECONDS_DEFAULT, {
        min: 0,
        max: 86_400,
      }),
      retentionBatch: reader.int('LEDGER_RETENTION_BATCH', RETENTION_BATCH_DEFAULT, { min: 1, max: 100_000 }),
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
    return {
      name: 'ledger',
      close: () => retention.stop(),
      services: [
        {
          service: 'ledger',
          version: PACKAGE_VERSION,
          description: 'Console, events, links and configuration',
          endpoints: [
            ...consoleEndpoints({ database, clock: deps.clock, logger: deps.logger, transport: deps.transport }),
            ...eventEndpoints(deps, config),
            ...linkEndpoints(deps),
            ...simulationEndpoints(
              { database, logger: deps.logger },
              { rateLimitPerMinute: config.eventRateLimitPerMinute, maxEvents: config.simulateRuleMaxEvents },
            ),
          ],
        },
      ],
    };
  },
});
