// The state owners' clock as tests set it (startTestSystem and compose hand it to the programs): `set` fixes the
// instant the ledger records (events received, link intents created, inspected, approved), `reset` gives the time back
// to the database's `now()`.
import type { Clock } from '#runtime/clock.ts';

export class SettableClock implements Clock {
  private at: Date | null = null;

  now(): Date | null {
    return this.at;
  }

  set(at: Date): void {
    this.at = at;
  }

  reset(): void {
    this.at = null;
  }
}
