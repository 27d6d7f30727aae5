// ledger.record_event, the single-event decision of 0003, is no longer part of the ledger: no program calls it since
// the batched ledger.record_events (0004), and the benchmarks' baseline and the differential test install their own
// copy (load/sql/record_event.sql). A database migrated by an earlier release has it, kept current by the repeatable
// migration `record_event`: both are dropped here, so every database holds only what the programs run. A program of an
// earlier release started against this schema applies no repeatable migration (db/repeatable.ts) and never called the
// function, so a rollback needs nothing back.
import { Migration } from '@mikro-orm/migrations';

export class LedgerDropSingleEvent extends Migration {
  override name = '0011-drop-single-event';

  override up(): void {
    this.addSql(
      `drop function if exists ledger.record_event(bytea, uuid, uuid, text, bigint, bytea, timestamptz, integer)`,
    );
    // The repeatable migrations' table is created after the versioned ones: absent on a new database.
    this.addSql(`do $$
      begin
        if to_regclass('ledger.repeatable_migrations') is not null then
          delete from ledger.repeatable_migrations where name = 'record_event';
        end if;
      end $$`);
  }
}
