// Player linking in the ledger: link intents and player reads (CONTRACT section 6).
export { linkEndpoints } from './endpoints.ts';
export { LINK_INTENT_LIFETIME_MINUTES } from './repository.ts';
