import { runStandalone } from '#runtime/program.ts';
import { gateway } from './program.ts';

await runStandalone(gateway);
