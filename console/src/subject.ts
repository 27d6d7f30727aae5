/** The development provider's subject of an e-mail (services/runtime/src/identity/dev-identity-provider.ts). */
export async function developerSubjectOf(email: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(email.toLowerCase()));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
  return `dev|${hex.slice(0, 24)}`;
}
