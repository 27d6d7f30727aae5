import { runStandalone } from '../../runtime/src/program.ts';
import { ledger } from './program.ts';

await runStandalone(ledger);
