import { runStandalone } from '../../services/runtime/src/program.ts';
import { gateway } from './program.ts';

await runStandalone(gateway);
