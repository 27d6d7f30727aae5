// Every request-reply operation between programs: subject, request and reply messages, derived from the `service`
// blocks of proto/rewards/v1/*_service.proto (one rpc, one operation). Callers and servers import their operation
// from here, so a subject is spelled once, and a new rpc in the proto is a new operation here without a hand edit.
import type { DescMessage, DescMethod } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { defineOperation, type Operation, type ServiceName } from '../transport/operation.ts';
import { IdentityService } from './gen/rewards/v1/identity_service_pb.ts';
import { LedgerService } from './gen/rewards/v1/ledger_service_pb.ts';

/** The operations of one service, by the rpc's local name (`recordEvents` for `rpc RecordEvents`). */
type OperationsOf<S extends GenServiceMethods> = {
  readonly [K in keyof S]: S[K]['input'] extends DescMessage
    ? S[K]['output'] extends DescMessage
      ? Operation<S[K]['input'], S[K]['output']>
      : never
    : never;
};

/** One operation per unary rpc of `service`, on subject `rewards.v1.<service>.<Rpc>`. */
function operationsOf<S extends GenServiceMethods>(service: ServiceName, descriptor: GenService<S>): OperationsOf<S> {
  const operations: Record<string, Operation> = {};
  for (const method of descriptor.methods as DescMethod[]) {
    if (method.methodKind !== 'unary') throw new Error(`${descriptor.typeName}.${method.name} is not unary`);
    operations[method.localName] = defineOperation(service, method.name, method.input, method.output);
  }
  return Object.freeze(operations) as OperationsOf<S>;
}

/** identity-admission's operations (proto/rewards/v1/identity_service.proto). */
export const identityOps = operationsOf('identity', IdentityService);

/** The ledger's operations (proto/rewards/v1/ledger_service.proto). */
export const ledgerOps = operationsOf('ledger', LedgerService);

/**
 * The ledger's console reads (each request carries the developer as `principal`): the gateway schedules them per
 * developer (gateway/src/auth/fair-reads.ts), the ledger per organization (its console/organization-turns.ts).
 */
export const consoleReadOperations: ReadonlySet<Operation> = new Set<Operation>([
  ledgerOps.getSnapshot,
  ledgerOps.listRecords,
  ledgerOps.listDecisions,
  ledgerOps.decisionStats,
  ledgerOps.listLinkIntents,
  ledgerOps.exportDecisions,
  ledgerOps.searchConsole,
  ledgerOps.listWebhookEndpoints,
  ledgerOps.listWebhookDeliveries,
  ledgerOps.listAuditEntries,
] as unknown as Operation[]);
