// NATS handlers of the event operations: they translate messages to repository calls and outcomes to errors.
// RecordEvent and RecordEvents go through the DecisionBatcher (batcher.ts): the events that arrive while a key's
// batch is in the database go together as one call of ledger.record_events (one round trip, one transaction).
// The path runs one way: these handlers -> the batcher -> the repository -> SQL. What is checked is validation.ts,
// the metrics are metrics.ts, the errors answered are errors.ts.
import type { Clock } from '#runtime/clock.ts';
import type { RecordEventRequest, RecordEventsRequest } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { decisionsSubject, decisionsTopic } from '#runtime/contracts/subjects.ts';
import type { Database } from '#runtime/db/database.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import {
  bind,
  bindEncoded,
  type CallContext,
  EncodedNotice,
  type EndpointBinding,
  type Transport,
} from '#runtime/transport/operation.ts';
import { type DecisionBatchingConfig, decisionBatcher } from './batcher.ts';
import { eventFailures, invalidPublicKey, outcomeError, outcomeOfError } from './errors.ts';
import { decisionBatchMetrics } from './metrics.ts';
import {
  type AnswerOutcome,
  type DecisionAnswer,
  type EncodedDecision,
  encodeDecision,
  encodeRecordEventReply,
  encodeRecordEventsReply,
} from './reply-wire.ts';
import { EventRepository } from './repository.ts';
import { checkRecordEventsSize, isHash, recordEventParams } from './validation.ts';

// load/bench-ledger.ts and test/integration/ingest/batching.test.ts import these from here.

export interface EventEndpointDeps {
  database: Database;
  /** The receipt time of events (null: the decision's transaction's `now()`). */
  clock: Clock;
  logger: Logger;
  metrics?: Metrics | undefined;
  /** Publishes each fresh decision after commit (the live decisions subscription of the gateway). */
  transport?: Transport | undefined;
}

export interface EventEndpointConfig extends DecisionBatchingConfig {
  eventRateLimitPerMinute: number;
}

export function eventEndpoints(deps: EventEndpointDeps, config: EventEndpointConfig): EndpointBinding[] {
  const events = new EventRepository(deps.database);
  // A fresh decision, committed: its live notice, fire-and-forget (publish never throws nor waits; a lost notice
  // loses nothing but a live view). Also for a decision whose answer to this request was lost. The decision is
  // encoded once (reply-wire.ts): the notice's bytes, whose DeveloperEvent the reply copies.
  const publishDecision = (gameId: string, decision: EncodedDecision) =>
    deps.transport?.publish(decisionsTopic, decisionsSubject(gameId), new EncodedNotice(decision.notice));
  const failures = eventFailures(events, deps.logger, (params, decision) =>
    publishDecision(decision.gameId, encodeDecision(params.eventId.toLowerCase(), decision)),
  );
  const batcher = decisionBatcher(events, config, decisionBatchMetrics(deps.metrics), deps.logger);
  deps.metrics?.collections.track('ledger', {
    batcher_keys_in_line: () => batcher.sizes.line,
    batcher_keys_out: () => batcher.sizes.out,
    batcher_events_queued: () => batcher.sizes.queued,
  });

  /** One event, validated and decided (through its key's batch); throws the AppError RecordEvent answers. */
  const recordOne = async (request: RecordEventRequest, ctx: CallContext): Promise<DecisionAnswer> => {
    const params = recordEventParams(request, deps.clock, config.eventRateLimitPerMinute);
    params.deadline = ctx.deadline;
    const result = await batcher.submit(params).catch((error: unknown) => failures.decision(params, error));
    if (result.outcome !== 'decided' && result.outcome !== 'replayed') throw outcomeError(result.outcome);
    // PostgreSQL's spelling of the UUID (lower case), as the records list it.
    const decision = encodeDecision(request.eventId.toLowerCase(), result.decision);
    // Published before the reply is encoded, in the same flush.
    if (result.outcome === 'decided') publishDecision(result.decision.gameId, decision);
    // A replay of the decision whose id the caller proposed: an earlier copy of this same request made it (the edge
    // sends a request again after a per-try timeout), so it is this request's own decision, not a replay; its quota
    // figures went with the first copy's answer.
    const own =
      result.outcome === 'replayed' && params.proposedByCaller === true && result.decision.id === params.decisionId;
    return {
      decision,
      replayed: result.outcome === 'replayed' && !own,
      // A fresh decision's quota figures; a replay (or a decision found after a lost connection) has none.
      quota: result.outcome === 'decided' ? result.quota : undefined,
    };
  };

  /** Several events, each answered by its own outcome. */
  const recordMany = async (request: RecordEventsRequest, ctx: CallContext): Promise<AnswerOutcome[]> => {
    checkRecordEventsSize(request);
    return await Promise.all(
      request.events.map(
        (event): Promise<AnswerOutcome> =>
          recordOne(event, ctx).catch((error: unknown) => outcomeOfError(error, deps.logger, ctx.requestId)),
      ),
    );
  };

  // Each on two subjects: the proposed-id ones, which only a ledger that takes the proposed ids serves (the edge sends
  // there, copies included), and the first ones, for an edge of an earlier release and the edge's fallback.
  return [
    bindEncoded(ledgerOps.recordEvent, recordOne, encodeRecordEventReply),
    bindEncoded(ledgerOps.recordEventWithProposedId, recordOne, encodeRecordEventReply),
    bindEncoded(ledgerOps.recordEvents, recordMany, encodeRecordEventsReply),
    bindEncoded(ledgerOps.recordEventsWithProposedIds, recordMany, encodeRecordEventsReply),
    bind(ledgerOps.authenticateGameKey, async (request) => {
      if (!isHash(request.keyHash)) return { valid: false, kind: '' };
      const kind = await events.keyKind(request.keyHash).catch(failures.notStored);
      return kind ? { valid: true, kind } : { valid: false, kind: '' };
    }),
    bind(ledgerOps.getPublicConfig, async (request) => {
      if (!isHash(request.keyHash)) throw invalidPublicKey();
      const config = await events.publicConfig(request.keyHash).catch(failures.notStored);
      if (!config) throw invalidPublicKey();
      return { config };
    }),
  ];
}
