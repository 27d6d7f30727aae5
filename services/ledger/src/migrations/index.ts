import type { MigrationSet } from '../../../runtime/src/db/migrations.ts';
import { LedgerInitial } from './0001-initial.ts';
import { LedgerRecordEvent } from './0003-record-event.ts';
import { LedgerRecordEvents } from './0004-record-events.ts';
import { LedgerRetention } from './0005-retention.ts';

/** The ledger schema's migrations, in order. Append new ones; never edit an applied one. */
export const ledgerMigrations: MigrationSet = {
  schema: 'ledger',
  migrations: [
    { name: '0001-initial', class: LedgerInitial },
    { name: '0003-record-event', class: LedgerRecordEvent },
    { name: '0004-record-events', class: LedgerRecordEvents },
    { name: '0005-retention', class: LedgerRetention },
  ],
};
