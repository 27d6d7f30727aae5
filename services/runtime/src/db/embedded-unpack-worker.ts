// The worker thread that unpacks the embedded template into a new data folder (embedded-data.ts,
// unpackTemplateInWorker): its workerData names the template's file and the folder.
import { readFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { unpackTemplate } from './embedded-data.ts';

const { template, folder } = workerData as { template: string; folder: string };
unpackTemplate(readFileSync(template), folder);
