// Every request-reply operation between programs: subject, request and reply messages (proto/rewards/v1).
// Callers and servers import their operation from here, so a subject is spelled once.
import { defineOperation } from '../transport/operation.ts';
import {
  ConsoleActionRequestSchema,
  ConsoleActionResponseSchema,
  DecisionStatsRequestSchema,
  DecisionStatsResponseSchema,
  GetSnapshotRequestSchema,
  GetSnapshotResponseSchema,
  ListLinkIntentsRequestSchema,
  ListLinkIntentsResponseSchema,
  ListRecordsRequestSchema,
  ListRecordsResponseSchema,
} from './gen/rewards/v1/console_pb.ts';
import {
  AuthenticateGameKeyRequestSchema,
  AuthenticateGameKeyResponseSchema,
  GetPublicConfigRequestSchema,
  GetPublicConfigResponseSchema,
  RecordEventRequestSchema,
  RecordEventResponseSchema,
  RecordEventsRequestSchema,
  RecordEventsResponseSchema,
} from './gen/rewards/v1/events_pb.ts';
import {
  AdmitDeveloperRequestSchema,
  AdmitDeveloperResponseSchema,
  AdmitNativeRequestSchema,
  AdmitNativeResponseSchema,
  CreateDevicePermitRequestSchema,
  CreateDevicePermitResponseSchema,
  CreateInvitationRequestSchema,
  CreateInvitationResponseSchema,
  GetPlatformStateRequestSchema,
  GetPlatformStateResponseSchema,
  ListInvitationsRequestSchema,
  ListInvitationsResponseSchema,
  PutNativeAccountRequestSchema,
  PutNativeAccountResponseSchema,
  RevokeInvitationRequestSchema,
  RevokeInvitationResponseSchema,
  SetPlatformStateRequestSchema,
  SetPlatformStateResponseSchema,
} from './gen/rewards/v1/identity_pb.ts';
import {
  ApproveLinkIntentRequestSchema,
  ApproveLinkIntentResponseSchema,
  CreateLinkIntentRequestSchema,
  CreateLinkIntentResponseSchema,
  GetPlayerRequestSchema,
  GetPlayerResponseSchema,
  InspectLinkIntentRequestSchema,
  InspectLinkIntentResponseSchema,
} from './gen/rewards/v1/links_pb.ts';
import { SimulateRuleRequestSchema, SimulateRuleResponseSchema } from './gen/rewards/v1/simulation_pb.ts';

export const identityOps = {
  getPlatformState: defineOperation(
    'identity',
    'GetPlatformState',
    GetPlatformStateRequestSchema,
    GetPlatformStateResponseSchema,
  ),
  admitDeveloper: defineOperation(
    'identity',
    'AdmitDeveloper',
    AdmitDeveloperRequestSchema,
    AdmitDeveloperResponseSchema,
  ),
  setPlatformState: defineOperation(
    'identity',
    'SetPlatformState',
    SetPlatformStateRequestSchema,
    SetPlatformStateResponseSchema,
  ),
  createInvitation: defineOperation(
    'identity',
    'CreateInvitation',
    CreateInvitationRequestSchema,
    CreateInvitationResponseSchema,
  ),
  listInvitations: defineOperation(
    'identity',
    'ListInvitations',
    ListInvitationsRequestSchema,
    ListInvitationsResponseSchema,
  ),
  revokeInvitation: defineOperation(
    'identity',
    'RevokeInvitation',
    RevokeInvitationRequestSchema,
    RevokeInvitationResponseSchema,
  ),
  admitNative: defineOperation('identity', 'AdmitNative', AdmitNativeRequestSchema, AdmitNativeResponseSchema),
  putNativeAccount: defineOperation(
    'identity',
    'PutNativeAccount',
    PutNativeAccountRequestSchema,
    PutNativeAccountResponseSchema,
  ),
  createDevicePermit: defineOperation(
    'identity',
    'CreateDevicePermit',
    CreateDevicePermitRequestSchema,
    CreateDevicePermitResponseSchema,
  ),
} as const;

export const ledgerOps = {
  /** One console action (POST /api/developer/v1/console), one ledger transaction. */
  consoleAction: defineOperation('ledger', 'ConsoleAction', ConsoleActionRequestSchema, ConsoleActionResponseSchema),
  /** The console snapshot (GET /api/developer/v1/console). */
  getSnapshot: defineOperation('ledger', 'GetSnapshot', GetSnapshotRequestSchema, GetSnapshotResponseSchema),
  /** One page of records (GET /api/developer/v1/records). */
  listRecords: defineOperation('ledger', 'ListRecords', ListRecordsRequestSchema, ListRecordsResponseSchema),
  /** Decisions of one game per time bucket, status and reason (GraphQL decisionStats, the web console's charts). */
  decisionStats: defineOperation('ledger', 'DecisionStats', DecisionStatsRequestSchema, DecisionStatsResponseSchema),
  /** One page of a game's link intents (GraphQL linkIntents, the web console's game page). */
  listLinkIntents: defineOperation(
    'ledger',
    'ListLinkIntents',
    ListLinkIntentsRequestSchema,
    ListLinkIntentsResponseSchema,
  ),
  /** The rule dry-run (GraphQL simulateRule): a replay of a game's stored decisions under a proposed rule. */
  simulateRule: defineOperation('ledger', 'SimulateRule', SimulateRuleRequestSchema, SimulateRuleResponseSchema),
  recordEvent: defineOperation('ledger', 'RecordEvent', RecordEventRequestSchema, RecordEventResponseSchema),
  /** Several events of one edge in one request (edge batching); one outcome per event, as RecordEvent answers. */
  recordEvents: defineOperation('ledger', 'RecordEvents', RecordEventsRequestSchema, RecordEventsResponseSchema),
  authenticateGameKey: defineOperation(
    'ledger',
    'AuthenticateGameKey',
    AuthenticateGameKeyRequestSchema,
    AuthenticateGameKeyResponseSchema,
  ),
  getPublicConfig: defineOperation(
    'ledger',
    'GetPublicConfig',
    GetPublicConfigRequestSchema,
    GetPublicConfigResponseSchema,
  ),
  /** POST /api/game-sdk/v2/link-intents: find or create the player, store a pending intent (token hash only). */
  createLinkIntent: defineOperation(
    'ledger',
    'CreateLinkIntent',
    CreateLinkIntentRequestSchema,
    CreateLinkIntentResponseSchema,
  ),
  /** POST /api/native/v1/link-intents/inspect: what an intent would link; does not consume it. */
  inspectLinkIntent: defineOperation(
    'ledger',
    'InspectLinkIntent',
    InspectLinkIntentRequestSchema,
    InspectLinkIntentResponseSchema,
  ),
  /** POST /api/native/v1/link-intents/approve: consume the intent and link the player, one transaction. */
  approveLinkIntent: defineOperation(
    'ledger',
    'ApproveLinkIntent',
    ApproveLinkIntentRequestSchema,
    ApproveLinkIntentResponseSchema,
  ),
  /** GET /api/game-sdk/v2/players/{playerId} and ?externalPlayerId=: a player of the key's game. */
  getPlayer: defineOperation('ledger', 'GetPlayer', GetPlayerRequestSchema, GetPlayerResponseSchema),
} as const;
