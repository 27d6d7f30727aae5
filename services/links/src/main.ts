// The links program's own process (`npm run start:links`, a container of the image with this entry): the program
// alone, on NATS (runStandalone). The all-in-one process composes it with the others instead.
import { runStandalone } from '#runtime/program.ts';
import { links } from './program.ts';

await runStandalone(links);
