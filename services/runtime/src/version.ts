// The release version of the programs: package.json's `version`, one number for the image, the chart's appVersion
// and the NATS micro services (`nats micro info ledger` shows it).
import { readFileSync } from 'node:fs';

export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
