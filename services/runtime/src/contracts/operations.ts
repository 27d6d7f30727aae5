// Every request-reply operation between programs: subject, request and reply messages (proto/rewards/v1).
// Callers and servers import their operation from here, so a subject is spelled once.
import { defineOperation } from '../transport/operation.ts';
import {
  AdmitDeveloperRequestSchema,
  AdmitDeveloperResponseSchema,
  GetPlatformStateRequestSchema,
  GetPlatformStateResponseSchema,
} from './gen/rewards/v1/identity_pb.ts';

export const identityOps = {
  getPlatformState: defineOperation('identity', 'GetPlatformState', GetPlatformStateRequestSchema, GetPlatformStateResponseSchema),
  admitDeveloper: defineOperation('identity', 'AdmitDeveloper', AdmitDeveloperRequestSchema, AdmitDeveloperResponseSchema),
} as const;

export const ledgerOps = {} as const;
