import { runStandalone } from '../../runtime/src/program.ts';
import { identityAdmission } from './program.ts';

await runStandalone(identityAdmission);
