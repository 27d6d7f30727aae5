// The table of programs the launcher starts: their names in start order, the edges among them, and the entry file
// of each (processes.ts runs a file per process; in-process.ts composes the same programs' modules in one).
import type { ProgramName } from '#runtime/program.ts';

export type { ProgramName };

/** The five programs a deployment runs, state owners first (their operations are served before edges take traffic). */
export const PROGRAMS = [
  'identity-admission',
  'ledger',
  'gateway',
  'ingest',
  'links',
] as const satisfies readonly ProgramName[];

/** The programs with public HTTP routes (the others answer only probes and metrics over HTTP). */
export const EDGES = ['gateway', 'ingest', 'links'] as const satisfies readonly ProgramName[];

/** Entry file of every program, and of the all-in-one process (the five in one), relative to the repository's root. */
export const PROGRAM_ENTRIES = {
  'identity-admission': 'services/identity-admission/src/main.ts',
  ledger: 'services/ledger/src/main.ts',
  gateway: 'gateway/src/main.ts',
  ingest: 'services/ingest/src/main.ts',
  links: 'services/links/src/main.ts',
  'all-in-one': 'services/all-in-one/src/main.ts',
} as const satisfies Record<ProgramName | 'all-in-one', string>;
/** What processes.ts can start: a program, or the all-in-one process. */
export type LaunchedProgram = keyof typeof PROGRAM_ENTRIES;
