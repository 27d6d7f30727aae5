// The event's metadata, stored with its decision (the web console's decision panel shows it): the RFC 8785
// canonical JSON text the edge computed for the payload hash (at most 4,096 UTF-8 bytes, CONTRACT section 7), as
// text, not jsonb: nothing queries inside it, and text is written as it comes (no parse on the hot path) and read
// back byte for byte as the game server's object in canonical form. Null when the event had none, and for every
// decision stored before this migration (nothing to backfill: the ledger never had it).
//
// Adding a nullable column without a default changes only the catalog (no table rewrite). The check constraint is
// added NOT VALID: every existing row is null, so there is nothing to scan for, and new rows are checked; validating
// it would read the whole table under this migration's lock. ledger.record_events (../sql/record_events.sql) gains
// the metadata argument in the same release; its previous signature stays as a wrapper that stores none.
import { Migration } from '@mikro-orm/migrations';

export class LedgerEventMetadata extends Migration {
  override name = '0010-event-metadata';

  override up(): void {
    this.addSql(`alter table ledger.events add column metadata text`);
    this.addSql(`alter table ledger.events add constraint events_metadata_object check (metadata is null
      or (octet_length(metadata) between 2 and 4096 and left(metadata, 1) = '{' and right(metadata, 1) = '}'))
      not valid`);
  }
}
