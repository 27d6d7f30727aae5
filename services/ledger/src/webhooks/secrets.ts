// Webhook signing secrets (Standard Webhooks): `whsec_` + base64 of 32 random bytes, shown once at creation or
// rotation. Stored encrypted with AES-256-GCM under a key that is not in the database (WEBHOOK_SECRET_KEY), so that a
// reader of the database cannot sign a message (docs/decisions.md, "Webhook secrets"). Stored form: 12-byte nonce,
// 32-byte ciphertext, 16-byte tag (60 bytes; the column's constraint).
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** The stored form's length: nonce, ciphertext, tag. */
export const SECRET_CIPHERTEXT_BYTES = NONCE_BYTES + SECRET_BYTES + TAG_BYTES;

/** A new secret: its raw bytes and the `whsec_` text the developer is shown once. */
export function newWebhookSecret(): { raw: Buffer; text: string } {
  const raw = randomBytes(SECRET_BYTES);
  return { raw, text: `${SECRET_PREFIX}${raw.toString('base64')}` };
}

export function encryptSecret(key: Buffer, raw: Buffer): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const ciphertext = Buffer.concat([cipher.update(raw), cipher.final()]);
  return Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]);
}

/** The raw secret; throws when the stored form was made under another key or altered. */
export function decryptSecret(key: Buffer, stored: Buffer): Buffer {
  if (stored.length !== SECRET_CIPHERTEXT_BYTES) throw new Error('malformed webhook secret');
  const decipher = createDecipheriv('aes-256-gcm', key, stored.subarray(0, NONCE_BYTES));
  decipher.setAuthTag(stored.subarray(NONCE_BYTES + SECRET_BYTES));
  return Buffer.concat([decipher.update(stored.subarray(NONCE_BYTES, NONCE_BYTES + SECRET_BYTES)), decipher.final()]);
}

/**
 * The Standard Webhooks signature header's value: `v1,` + base64 HMAC-SHA256 over `<id>.<timestamp>.<body>` with
 * the raw secret.
 */
export function signWebhook(raw: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', raw).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
