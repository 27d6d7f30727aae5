import { runStandalone } from '#runtime/program.ts';
import { identityAdmission } from './program.ts';

await runStandalone(identityAdmission);
