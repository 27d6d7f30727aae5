// Every request-reply operation between programs: subject, request and reply messages (proto/rewards/v1).
// Callers and servers import their operation from here, so a subject is spelled once.
import { defineOperation } from '../transport/operation.ts';
import {
  AuthenticateGameKeyRequestSchema,
  AuthenticateGameKeyResponseSchema,
  GetPublicConfigRequestSchema,
  GetPublicConfigResponseSchema,
  RecordEventRequestSchema,
  RecordEventResponseSchema,
} from './gen/rewards/v1/events_pb.ts';
import {
  AdmitDeveloperRequestSchema,
  AdmitDeveloperResponseSchema,
  CreateInvitationRequestSchema,
  CreateInvitationResponseSchema,
  GetPlatformStateRequestSchema,
  GetPlatformStateResponseSchema,
  ListInvitationsRequestSchema,
  ListInvitationsResponseSchema,
  RevokeInvitationRequestSchema,
  RevokeInvitationResponseSchema,
  SetPlatformStateRequestSchema,
  SetPlatformStateResponseSchema,
} from './gen/rewards/v1/identity_pb.ts';

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
} as const;

export const ledgerOps = {
  recordEvent: defineOperation('ledger', 'RecordEvent', RecordEventRequestSchema, RecordEventResponseSchema),
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
} as const;
