// Every notice subject (publish-subscribe, fire-and-forget; operations.ts has the request-reply ones): the topic
// (message and metrics label) and how its subjects are spelled, so that a subject is spelled once.
import { defineTopic } from '../transport/operation.ts';
import { DecisionCommittedSchema, MembershipChangedSchema } from './gen/rewards/v1/notices_pb.ts';

/** Fresh event decisions, published by the ledger after commit; one subject per game. */
export const decisionsTopic = defineTopic('decisions', DecisionCommittedSchema);

/** `rewards.v1.notices.decisions.<gameId>` (the game's UUID in lower case, as the ledger spells it). */
export function decisionsSubject(gameId: string): string {
  return `rewards.v1.notices.decisions.${gameId.toLowerCase()}`;
}

/** Members removed from organizations, published by the ledger after commit; one subject for all. */
export const membershipTopic = defineTopic('membership', MembershipChangedSchema);

export const MEMBERSHIP_SUBJECT = 'rewards.v1.notices.membership';
