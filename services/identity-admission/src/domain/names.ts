// Usernames and session ids as identity-admission stores them.

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

/** A username: 1 to 100 characters (code points), not blank, no control characters. */
export function isValidUsername(name: string): boolean {
  return name.trim() !== '' && [...name].length <= USERNAME_MAX && !hasControlCharacters(name);
}

/** A session id (`sid`): 1 to 200 characters. */
export function isValidSessionId(sid: string): boolean {
  return sid !== '' && [...sid].length <= SESSION_ID_MAX;
}
