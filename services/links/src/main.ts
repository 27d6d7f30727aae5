import { runStandalone } from '../../runtime/src/program.ts';
import { links } from './program.ts';

await runStandalone(links);
