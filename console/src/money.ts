// Sandbox test credit in the console: credits as typed and shown, their nominal dollars, and the amounts a form
// checks before it sends anything (whole numbers, limits with the room left). Pure: no React, no request.
import { CREDITS_MAX } from '../../services/runtime/src/contracts/vocabulary.ts';

export const credits = (value: number) => value.toLocaleString('en-US');

/** Sandbox test credit has a nominal value: 1,000 credits = $1 (no real money moves). */
export const CREDITS_PER_DOLLAR = 1000;
const usd = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 3,
});
export const dollars = (value: number) => usd.format(value / CREDITS_PER_DOLLAR);
/** "10,000 credits ($10.00 sandbox test credit)". */
export const creditsWithDollars = (value: number) =>
  `${credits(value)} credits (${dollars(value)} sandbox test credit)`;

/** "1,000" and "1000" are 1000; anything else (1.5, "", ten) is refused with a sentence, before any request. */
export function parseCredits(text: string, min = 0): { value: number } | { problem: string } {
  const typed = text.trim();
  if (typed === '')
    return { problem: min > 0 ? 'Enter an amount, like 1,000.' : 'Enter a number of credits, like 1,000.' };
  if (!/^(\d+|\d{1,3}(,\d{3})+)$/.test(typed)) {
    if (/^[\d,]*[.]\d*$/.test(typed)) return { problem: 'Credits are whole numbers: leave out the decimal point.' };
    if (/^-/.test(typed)) return { problem: 'Enter a number of credits of 0 or more.' };
    return { problem: 'Enter a whole number of credits, like 1,000 or 1000.' };
  }
  const value = Number(typed.replace(/,/g, ''));
  if (value > CREDITS_MAX) return { problem: `At most ${credits(CREDITS_MAX)} credits.` };
  if (value < min) return { problem: `Enter ${min === 1 ? 'an amount above 0' : `at least ${credits(min)}`} credits.` };
  return { value };
}

/** The amount of a confirmed input (checked in the browser, so always a whole number). */
export const amountOf = (input: Record<string, unknown>) => Number(input.amountCredits ?? 0);

/** Before/after cells of a confirmation: "10,000 ($10.00)". */
export const figure = (value: number) => `${credits(value)} (${dollars(value)})`;

/** An amount refused in the browser: the field and the sentence shown at it. */
export interface AmountProblem {
  field: string;
  sentence: string;
}

/** How much room is left under a limit, as a sentence. */
export const roomLeft = (room: number) => (room > 0 ? `At most ${figure(room)} more fits.` : 'There is no room left.');

/**
 * The first of `limits` that an input's amount passes (each: the room left under it and what it is), as the browser's
 * refusal at the amount field, saying how much room is left; undefined when the amount fits under every one.
 */
export function amountAbove(
  input: Record<string, unknown>,
  limits: Array<{ room: number; sentence: string }>,
): AmountProblem | undefined {
  const amount = amountOf(input);
  const passed = limits.find((limit) => amount > limit.room);
  return passed && { field: 'amountCredits', sentence: `${passed.sentence} ${roomLeft(Math.max(0, passed.room))}` };
}
