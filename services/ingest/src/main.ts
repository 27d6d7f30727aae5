import { runStandalone } from '../../runtime/src/program.ts';
import { ingest } from './program.ts';

await runStandalone(ingest);
