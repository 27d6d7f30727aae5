import { runStandalone } from '#runtime/program.ts';
import { ingest } from './program.ts';

await runStandalone(ingest);
