// The ledger's retention: a bounded periodic clean-up of minute counters, daily totals and link intents.
export { type Instant, RetentionRepository } from './repository.ts';
export {
  RETENTION_BATCH_DEFAULT,
  RETENTION_HORIZONS,
  RETENTION_INTERVAL_SECONDS_DEFAULT,
  RetentionScheduler,
} from './scheduler.ts';
