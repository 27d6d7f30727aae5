// The ledger's bounded periodic clean-up of data that only grows. Every
// LEDGER_RETENTION_INTERVAL_SECONDS (default 60; 0 turns it off) each ledger process runs one short statement per
// table, each removing at most LEDGER_RETENTION_BATCH rows (default 1000) past its horizon. A run that filled a batch
// for some table is followed by the next one after CATCH_UP_MS instead of the interval, so a backlog drains in short
// steps. Several replicas can run it at once: the statements skip rows another one holds (repository.ts).
//
// Horizons (fixed: each is what the readers of the rows need, plus a margin; see docs/decisions.md "Retention"):
//   - minute counters: ledger.record_event(s) read only the counter of the receipt minute (and prune a game's counters
//     more than 5 minutes before a new minute themselves); minutes more than 10 minutes old are removed, which also
//     clears the counters of games that stopped sending.
//   - daily totals: the decisions read only the total of the receipt's UTC day; nothing else reads them (decisionStats
//     and the console read ledger.events). Days more than 2 days before today are removed (a transaction whose now()
//     is just before midnight still finds yesterday's row).
//   - link intents: an intent past its expiry is final (used, or expired unused); 60 minutes after its expiry it is
//     moved to a tombstone that keeps the API's answer for its token (409 invalid_link, used or expired).
//   - webhook messages: a delivered or failed message (and its attempts) 30 days after it finished; after that it can
//     no longer be read or redelivered (the console's deliveries view shows the newest ones).
import type { Counter } from 'prom-client';
import { Counter as PromCounter } from 'prom-client';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import type { Instant, RetentionHorizons, RetentionRepository, RetentionTable } from './repository.ts';

export const RETENTION_INTERVAL_SECONDS_DEFAULT = 60;
export const RETENTION_BATCH_DEFAULT = 1000;
export const RETENTION_HORIZONS: RetentionHorizons = {
  minuteCounterMinutes: 10,
  dailyTotalDays: 2,
  linkIntentGraceMinutes: 60,
  webhookMessageDays: 30,
};
/** The pause before the next run when a run removed a full batch from some table. */
const CATCH_UP_MS = 1000;

export type RetentionRun = Record<RetentionTable, number>;

export interface RetentionOptions {
  /** Seconds between runs; 0: no periodic runs. */
  intervalSeconds: number;
  /** Most rows removed per table in one run. */
  batch: number;
  horizons?: RetentionHorizons;
}

export class RetentionScheduler {
  private readonly repository: RetentionRepository;
  private readonly options: Required<RetentionOptions>;
  private readonly logger: Logger;
  private readonly removed: Counter<'table'> | undefined;
  private readonly runs: Counter<'outcome'> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(repository: RetentionRepository, options: RetentionOptions, logger: Logger, metrics?: Metrics) {
    this.repository = repository;
    this.options = { horizons: RETENTION_HORIZONS, ...options };
    this.logger = logger;
    this.removed = metrics
      ? new PromCounter({
          name: 'ledger_retention_rows_removed_total',
          help: 'Rows removed by the ledger retention clean-up, by table (link_intents: moved to tombstones)',
          labelNames: ['table'],
          registers: [metrics.registry],
        })
      : undefined;
    this.runs = metrics
      ? new PromCounter({
          name: 'ledger_retention_runs_total',
          help: 'Runs of the ledger retention clean-up, by outcome (ok, error)',
          labelNames: ['outcome'],
          registers: [metrics.registry],
        })
      : undefined;
  }

  /** Starts the periodic runs (nothing when the interval is 0); the first run comes one interval after start. */
  start(): void {
    if (this.options.intervalSeconds > 0) this.schedule(this.options.intervalSeconds * 1000);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const run = this.runOnce(null).then(
        (removed) => {
          const full = Object.values(removed).some((n) => n >= this.options.batch);
          this.schedule(full ? CATCH_UP_MS : this.options.intervalSeconds * 1000);
        },
        () => this.schedule(this.options.intervalSeconds * 1000),
      );
      this.running = run;
    }, delayMs);
    this.timer.unref();
  }

  /** One run at `now` (null: the database's clock): at most `batch` rows per table, one statement each. */
  async runOnce(now: Instant): Promise<RetentionRun> {
    const { batch, horizons } = this.options;
    try {
      const removed: RetentionRun = {
        game_minute_counters: await this.repository.removeMinuteCounters(now, horizons, batch),
        player_daily_totals: await this.repository.removeDailyTotals(now, horizons, batch),
        link_intents: await this.repository.retireLinkIntents(now, horizons, batch),
        webhook_messages: await this.repository.removeWebhookMessages(now, horizons, batch),
      };
      for (const [table, n] of Object.entries(removed)) if (n > 0) this.removed?.inc({ table }, n);
      this.runs?.inc({ outcome: 'ok' });
      if (Object.values(removed).some((n) => n > 0)) this.logger.debug({ removed }, 'retention run');
      return removed;
    } catch (error) {
      this.runs?.inc({ outcome: 'error' });
      this.logger.warn({ err: error }, 'retention run failed; the next run tries again');
      throw error;
    }
  }

  /** Stops the periodic runs and waits for one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}
