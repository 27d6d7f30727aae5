// The ledger schema's migrations, in the order they run (each file says what it changes and why).
import type { MigrationSet } from '#runtime/db/migrations.ts';
import { LedgerInitial } from './0001-initial.ts';
import { LedgerRecordEvent } from './0003-record-event.ts';
import { LedgerRecordEvents } from './0004-record-events.ts';
import { LedgerLinkIntentsByGame } from './0005-link-intents-by-game.ts';
import { LedgerRetention } from './0006-retention.ts';
import { LedgerDecisionsByEventId } from './0007-decisions-by-event-id.ts';
import { LedgerDistributableByGame } from './0008-distributable-by-game.ts';
import { LedgerEventsByPlayer } from './0009-events-by-player.ts';
import { LedgerEventMetadata } from './0010-event-metadata.ts';
import { LedgerDropSingleEvent } from './0011-drop-single-event.ts';
import { LedgerMembersJoined, LedgerMembersJoinedValidate } from './0012-members-joined.ts';
import { LedgerTenantFirstReads } from './0013-tenant-first-reads.ts';
import { LedgerGamesOrganizationIndex } from './0014-games-organization-index.ts';
import { LedgerWebhooks } from './0014-webhooks.ts';
import { LedgerWebhookDecisionBatches } from './0015-webhook-decision-batches.ts';
import { LedgerWebhookClaimIndexes } from './0016-webhook-claim-indexes.ts';
import { LedgerWebhookEndpointsPerGame } from './0017-webhook-endpoints-per-game.ts';
import { LedgerAuditTrail } from './0018-audit-trail.ts';
import { LedgerAuditLogReads } from './0019-audit-log-reads.ts';
import { LedgerGameClocks } from './0020-game-clocks.ts';
import { LedgerWebhookSecretOverlap } from './0021-webhook-secret-overlap.ts';
import { LedgerTestPlayers } from './0022-test-players.ts';
import { LedgerWebhookBacklog, LedgerWebhookBacklogValidate } from './0023-webhook-backlog.ts';

/**
 * The ledger schema's migrations, in order. Append new ones; an applied one changes only into an equivalent that does
 * not block (docs/operations.md, "Migration rules"). The SQL functions' current
 * bodies are the repeatable migrations in ../sql/ (edit the file to change a function).
 */
export const ledgerMigrations: MigrationSet = {
  schema: 'ledger',
  migrations: [
    { name: '0001-initial', class: LedgerInitial },
    { name: '0003-record-event', class: LedgerRecordEvent },
    { name: '0004-record-events', class: LedgerRecordEvents },
    { name: '0005-link-intents-by-game', class: LedgerLinkIntentsByGame },
    { name: '0006-retention', class: LedgerRetention },
    { name: '0007-decisions-by-event-id', class: LedgerDecisionsByEventId },
    { name: '0008-distributable-by-game', class: LedgerDistributableByGame },
    { name: '0009-events-by-player', class: LedgerEventsByPlayer },
    { name: '0010-event-metadata', class: LedgerEventMetadata },
    { name: '0011-drop-single-event', class: LedgerDropSingleEvent },
    { name: '0012-members-joined', class: LedgerMembersJoined },
    { name: '0012-members-joined-validate', class: LedgerMembersJoinedValidate },
    { name: '0013-tenant-first-reads', class: LedgerTenantFirstReads },
    { name: '0014-games-organization-index', class: LedgerGamesOrganizationIndex },
    { name: '0014-webhooks', class: LedgerWebhooks },
    { name: '0015-webhook-decision-batches', class: LedgerWebhookDecisionBatches },
    { name: '0016-webhook-claim-indexes', class: LedgerWebhookClaimIndexes },
    { name: '0017-webhook-endpoints-per-game', class: LedgerWebhookEndpointsPerGame },
    { name: '0018-audit-trail', class: LedgerAuditTrail },
    { name: '0019-audit-log-reads', class: LedgerAuditLogReads },
    { name: '0020-game-clocks', class: LedgerGameClocks },
    { name: '0021-webhook-secret-overlap', class: LedgerWebhookSecretOverlap },
    { name: '0022-test-players', class: LedgerTestPlayers },
    { name: '0023-webhook-backlog', class: LedgerWebhookBacklog },
    { name: '0023-webhook-backlog-validate', class: LedgerWebhookBacklogValidate },
  ],
  repeatables: [
    { name: 'decision_reason', file: new URL('../sql/decision_reason.sql', import.meta.url) },
    { name: 'record_events', file: new URL('../sql/record_events.sql', import.meta.url) },
    { name: 'simulate_rule', file: new URL('../sql/simulate_rule.sql', import.meta.url) },
  ],
};
