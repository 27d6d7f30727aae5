// The ingest program's own process (`npm run start:ingest`, a container of the image with this entry): the program
// alone, on NATS (runStandalone). The all-in-one process composes it with the others instead.
import { runStandalone } from '#runtime/program.ts';
import { ingest } from './program.ts';

await runStandalone(ingest);
