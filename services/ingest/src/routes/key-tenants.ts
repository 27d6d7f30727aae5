// Which game and organization a secret key's events belong to, as the edge learns it from the ledger's decisions.
//
// Fair ingest is per game and per organization: a game's share of the edge (its requests in the app, its events in
// RecordEvents requests, its flood pacing) must not grow with the number of its keys or of its clients' addresses. A
// request names only its credential, and whether a key exists, and whose it is, is known only to the ledger. The
// edge does not ask: a key's first decision (its `gameId` and `organizationId`) teaches it, and until then the key
// is its own tenant, as it always was. Only a decision teaches, so only a key the ledger accepted is kept: unknown,
// revoked or made-up credentials never enter the map.
//
// Kept per credential as presented (the Authorization header: the per-request lookup is one Map.get of a string the
// request already has), at most `max` of them; past that the credential learned first is forgotten (it is learned
// again with its next decision). A key revoked later stays its game's until forgotten: it is refused by the ledger
// anyway, and grouping its requests with its game's only bounds them more.

import type { EdgeDecision } from './record-events-wire.ts';

export interface KeyTenant {
  /** The game's queue and admission key. */
  game: string;
  /** The organization's admission key. */
  organization: string;
}

/** Credentials kept by default: far more keys than one edge process serves at once. */
export const KEY_TENANTS_MAX_DEFAULT = 10_000;

export class KeyTenants {
  private readonly known = new Map<string, KeyTenant>();
  private readonly max: number;

  constructor(max = KEY_TENANTS_MAX_DEFAULT) {
    if (!(Number.isInteger(max) && max >= 1)) throw new Error(`invalid key tenants bound ${max}`);
    this.max = max;
  }

  /** The tenant of a credential as presented, once one of its events was decided. */
  of(credential: string | undefined): KeyTenant | undefined {
    return credential === undefined ? undefined : this.known.get(credential);
  }

  /** Credentials kept now (at most `max`). */
  get size(): number {
    return this.known.size;
  }

  /**
   * A decision of an event sent with `credential`: its game and organization are the key's. Reads the decision's JSON
   * only for a credential not known yet (once per key, not per event); call it before the next reply is read (the
   * decision's JSON is the edge codec's scratch buffer).
   */
  learn(credential: string | undefined, decision: EdgeDecision): void {
    if (credential === undefined || decision.json === undefined || this.known.has(credential)) return;
    const { gameId, organizationId } = JSON.parse(decision.json.toString('utf8')) as {
      gameId?: unknown;
      organizationId?: unknown;
    };
    if (typeof gameId !== 'string' || typeof organizationId !== 'string') return;
    if (this.known.size >= this.max) {
      const oldest = this.known.keys().next().value as string;
      this.known.delete(oldest);
    }
    this.known.set(credential, { game: `game ${gameId}`, organization: `organization ${organizationId}` });
  }
}
