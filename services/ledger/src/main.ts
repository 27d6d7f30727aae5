import { runStandalone } from '#runtime/program.ts';
import { ledger } from './program.ts';

await runStandalone(ledger);
