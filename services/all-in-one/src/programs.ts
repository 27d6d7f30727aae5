import type { ProgramModule } from '#runtime/program.ts';
import { gateway } from '../../../gateway/src/program.ts';
import { identityAdmission } from '../../identity-admission/src/program.ts';
import { ingest } from '../../ingest/src/program.ts';
import { ledger } from '../../ledger/src/program.ts';
import { links } from '../../links/src/program.ts';

/** The five programs; state owners first so that their operations are served before the edges take traffic. */
// biome-ignore lint/suspicious/noExplicitAny: each module has its own config type.
export const allPrograms: ProgramModule<any>[] = [identityAdmission, ledger, gateway, ingest, links];

export const stateOwners = allPrograms.filter((m) => m.database);
