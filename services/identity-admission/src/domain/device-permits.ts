// Device permits as the operator grants them: a permit lives from 1 second to one day.

export const PERMIT_SECONDS_MAX = 86_400;

/** A permit's lifetime in seconds: 1 to PERMIT_SECONDS_MAX. */
export function isValidPermitLifetime(seconds: number): boolean {
  return seconds >= 1 && seconds <= PERMIT_SECONDS_MAX;
}
