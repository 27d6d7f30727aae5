// ALLOWED_ORIGINS (CONTRACT section 1): origins allowed to call the developer endpoints from a browser. Read by
// identity-admission (the Origin check of developer admission) and by the gateway (CORS headers).
import type { EnvReader } from '../config.ts';

const ORIGIN_PATTERN = /^https?:\/\/[^/\s]+$/;

export function readAllowedOrigins(reader: EnvReader): string[] {
  return reader.list('ALLOWED_ORIGINS', ORIGIN_PATTERN, 'an origin such as https://console.example.com');
}

/** Origins compare as scheme://host[:port], case-insensitively (browsers send them in lower case). */
export function isAllowedOrigin(origin: string, allowedOrigins: string[]): boolean {
  const given = origin.trim().toLowerCase();
  return allowedOrigins.some((allowed) => allowed.toLowerCase() === given);
}
