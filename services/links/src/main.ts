import { runStandalone } from '#runtime/program.ts';
import { links } from './program.ts';

await runStandalone(links);
