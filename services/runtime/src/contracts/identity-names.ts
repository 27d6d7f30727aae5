// E-mail addresses, usernames and session ids as identity-admission stores them. No C0 control character and no
// DEL anywhere: PostgreSQL text cannot hold NUL (an insert fails), and the others have no place in these values.
// The gateway's operator API schemas use the same patterns (gateway/src/schemas/admin.ts), so /openapi.json
// describes exactly what is accepted; lengths count code points, as JSON Schema's minLength/maxLength do.

export const USERNAME_MAX = 100;
export const SESSION_ID_MAX = 200;

/** True when the text holds a C0 control character (U+0000-U+001F) or DEL (U+007F). */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x1f || code === 0x7f) return true;
  }
  return false;
}

export const EMAIL_MAX = 320;
// White space as JavaScript's `\s` and String#trim know it, spelled out so that a pattern means the same in every
// regex dialect (Python's `\s`, used by schemathesis, is another set).
const SPACE = '\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const CONTROL = '\\u0000-\\u001f\\u007f';
// One character of an e-mail's local part or domain: not `@`, not a control character, not white space.
const EMAIL_CHARACTER = `[^@${CONTROL}${SPACE}]`;
/** The e-mail rule as a JSON Schema / ECMAScript `u` pattern: 1 to 64 characters, `@`, 1 to 255 characters. */
export const EMAIL_PATTERN = `^${EMAIL_CHARACTER}{1,64}@${EMAIL_CHARACTER}{1,255}$`;
const EMAIL = new RegExp(EMAIL_PATTERN, 'u');
/** Session ids: 1 to 200 characters, none of them a control character. */
export const SESSION_ID_PATTERN = `^[^${CONTROL}]+$`;
/** Usernames: no control character, and at least one that is not white space. */
export const USERNAME_PATTERN = `^[^${CONTROL}]*[^${CONTROL}${SPACE}][^${CONTROL}]*$`;
const USERNAME = new RegExp(USERNAME_PATTERN, 'u');

/** An invitation's e-mail address: EMAIL_PATTERN, at most 320 characters (code points). */
export function isValidEmail(email: string): boolean {
  return EMAIL.test(email) && [...email].length <= EMAIL_MAX;
}

/** A username: 1 to 100 characters (code points), not blank, no control characters. */
export function isValidUsername(name: string): boolean {
  return USERNAME.test(name) && [...name].length <= USERNAME_MAX;
}

/** A session id (`sid`): 1 to 200 characters, no control characters. */
export function isValidSessionId(sid: string): boolean {
  return sid !== '' && [...sid].length <= SESSION_ID_MAX && !hasControlCharacters(sid);
}
