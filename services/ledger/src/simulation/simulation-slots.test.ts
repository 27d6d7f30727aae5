// The dry-runs' slots (simulation.ts, SimulationSlots): one organization holds at most its share, so whatever one
// tenant's developers run, another tenant's dry-run finds a slot; past a bound a dry-run is refused, not queued.
import { SimulationSlots } from './simulation.ts';

const refused = (take: () => unknown) => {
  try {
    take();
  } catch (error) {
    return (
      (error as { status?: number; code?: string }).code === 'TOO_MANY_REQUESTS' &&
      (error as { status?: number }).status === 429
    );
  }
  return false;
};

describe('SimulationSlots', () => {
  it("one organization's dry-runs never take another's slot (the defaults: one each, two in a process)", () => {
    const slots = new SimulationSlots(1, 2);
    const a = slots.take('org-a');
    // A second of the same organization is refused: its developers share its one slot.
    expect(refused(() => slots.take('org-a'))).toBe(true);
    // Another organization finds the process's second slot.
    const b = slots.take('org-b');
    // A third organization waits for one of them (the process's bound), and gets one once A's ends.
    expect(refused(() => slots.take('org-c'))).toBe(true);
    a();
    const c = slots.take('org-c');
    b();
    c();
    // Released twice: counted once.
    c();
    expect(refused(() => slots.take('org-a'))).toBe(false);
  });
});
