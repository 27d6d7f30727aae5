// POST /api/game-sdk/v2/events (CONTRACT section 7). First failure wins:
//   platform switch (503) -> bearer credential: missing, malformed, unknown or revoked (401 invalid_key), a public
//   key (403 secret_key_required) -> content type (415) -> size on the raw bytes (413) -> JSON (400 INVALID_REQUEST)
//   -> schema (400 invalid_event) -> metadata (400 invalid_metadata) -> RecordEvent in the ledger, which answers
//   401 invalid_key, 404 invalid_player, 409 event_conflict or the decision.
// A lone surrogate or a number outside a double's range inside `metadata` is a metadata fault, not a JSON one
// (CONTRACT section 10): the body reader reports it instead of refusing the body, and validateEventInput refuses it
// after the schema. Elsewhere in the body, and a duplicated member name anywhere, it stays 400 INVALID_REQUEST.
// Whether a well-formed key exists is known only to the ledger. A valid event asks once (RecordEvent checks the
// key in its transaction); a request that fails a check of its body first asks AuthenticateGameKey, so that an
// unknown or revoked key still answers 401 before any body error. The hot path stays one NATS round trip, shared
// by the events of one batch (event-batcher.ts).
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Counter } from 'prom-client';
import type { KeyPacer } from '#runtime/batching/key-pacer.ts';
import { AppError } from '#runtime/errors.ts';
import type { RequestAdmission, RequestHandler } from '#runtime/http/admission.ts';
import { readJsonBodyDeferring } from '#runtime/http/body.ts';
import { SecretKeyGate } from '#runtime/http/game-key.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { validateEventInput } from '../domain/event-input.ts';
import {
  EDGE_BATCH_MAX_DEFAULT,
  EDGE_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEY_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEYS_MAX_DEFAULT,
  type EdgeBatchObserver,
  EdgeEventBatcher,
} from './event-batcher.ts';
import { answerJson, decide, gameEventResultText, setQuotaHeaders } from './event-decision.ts';
import { addEventBatchRoute, EVENTS_BATCH_PATH } from './events-batch.ts';
import { KeyAdmission } from './key-admission.ts';
import { KeyTenants } from './key-tenants.ts';

export const EVENTS_PATH = '/api/game-sdk/v2/events';

// The answer `{"data": GameEventResult}` around the decision's JSON text.
const DATA_OPEN = Buffer.from('{"data":');
const CLOSE = Buffer.from('}');

const EVENT_PATHS = new Set([EVENTS_PATH, EVENTS_BATCH_PATH]);

/** Is this an event request (single or batch), the requests the event admission holds. */
function isEventRequest(request: IncomingMessage): boolean {
  if (request.method !== 'POST') return false;
  const url = request.url ?? '';
  const query = url.indexOf('?');
  return EVENT_PATHS.has(query === -1 ? url : url.slice(0, query));
}

export interface EventAdmissionOptions {
  /** Most event requests of one game (of one credential until its game is known) in the app at once. */
  gameInAppMax: number;
  /** Most event requests of one organization's games in the app at once. */
  organizationInAppMax: number;
  holdConnections: boolean;
  /** The games and organizations of the credentials the ledger has decided events of. */
  tenants: KeyTenants;
}

/**
 * The event routes' admission (key-admission.ts), two in a row: at most `gameInAppMax` event requests
 * (single or batch) of one game are handled at once, then at most `organizationInAppMax` of one organization's games;
 * the rest wait in front of the app, and with `holdConnections` a client's own connections are not read while its
 * game is at its bound (INGEST_EVENT_HOLD_CONNECTIONS). The game is known once one of its credential's events was
 * decided (key-tenants.ts): until then the credential as presented is its own game, and has no organization (the
 * second bound lets it pass).
 * A request is held before any check of it, and each gets the same answer as without the bounds, once it enters.
 * The game's bound comes first: a flood's requests past it wait there, holding none of the organization's room, so
 * another game of the organization finds it. Defaults: 2 x the per-game in-flight bound (INGEST_EVENT_KEY_REQUESTS_MAX:
 * a game's next call is read and ready when its call out ends) and 2 x that for the organization
 * (INGEST_EVENT_ORGANIZATION_REQUESTS_MAX).
 */
export function eventAdmission(options: EventAdmissionOptions): EventAdmission {
  const { tenants, holdConnections } = options;
  const clientOf = (request: IncomingMessage) => request.headers.authorization;
  const game = new KeyAdmission({
    inAppMax: options.gameInAppMax,
    holdConnections,
    clientOf,
    keyOf: (request) => {
      if (!isEventRequest(request)) return undefined;
      const credential = request.headers.authorization;
      return tenants.of(credential)?.game ?? credential;
    },
  });
  // The organization's admission holds no connection: the game's holds them (a connection held by both would be
  // read again by one while the other counts it held), and its requests past the organization's bound wait parsed.
  const organization = new KeyAdmission({
    inAppMax: options.organizationInAppMax,
    holdConnections: false,
    keyOf: (request) => (isEventRequest(request) ? tenants.of(request.headers.authorization)?.organization : undefined),
  });
  return new EventAdmission(game, organization);
}

/** The game's admission, then the organization's (eventAdmission). */
export class EventAdmission implements RequestAdmission {
  private readonly game: KeyAdmission;
  private readonly organization: KeyAdmission;

  constructor(game: KeyAdmission, organization: KeyAdmission) {
    this.game = game;
    this.organization = organization;
  }

  admit(request: IncomingMessage, response: ServerResponse, next: RequestHandler): void {
    this.game.admit(request, response, (r, s) => this.organization.admit(r, s, next));
  }

  release(): void {
    this.game.release();
    this.organization.release();
  }

  /** Requests waiting in front of the app, at either bound. */
  get waiting(): number {
    return this.game.waiting + this.organization.waiting;
  }

  /** Games (or credentials) and organizations with event requests in the app or waiting. */
  get keysKept(): { game: number; organization: number } {
    return { game: this.game.keysKept, organization: this.organization.keysKept };
  }

  /** Connections not read now, their game being at its bound (the organization's admission holds none). */
  get held(): number {
    return this.game.held + this.organization.held;
  }
}

export interface EventRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
  /** The games and organizations of credentials (shared with the event admission); default: a map of the routes'. */
  tenants?: KeyTenants;
  /** Counts answered decisions (`event_decisions_total`). */
  decisions?: Counter<'status' | 'reason' | 'replayed'>;
  /** Edge batching (event-batcher.ts); batchMax 1 sends one RecordEvent per event. */
  batching?: {
    batchMax: number;
    inFlightMax: number;
    keysMax: number;
    keyInFlightMax: number;
    pacer?: KeyPacer | undefined;
    observer?: EdgeBatchObserver;
  };
}

/** Adds the event routes; returns their batcher's close (the program's, once its HTTP server has closed). */
export function addEventRoutes(router: Router, deps: EventRouteDeps): { close(): void; batcher: EdgeEventBatcher } {
  const { transport } = deps;
  const keys = new SecretKeyGate(transport);
  const tenants = deps.tenants ?? new KeyTenants();
  const ledger = new EdgeEventBatcher(
    transport,
    {
      batchMax: deps.batching?.batchMax ?? EDGE_BATCH_MAX_DEFAULT,
      inFlightMax: deps.batching?.inFlightMax ?? EDGE_IN_FLIGHT_MAX_DEFAULT,
      keysMax: deps.batching?.keysMax ?? EDGE_KEYS_MAX_DEFAULT,
      keyInFlightMax: deps.batching?.keyInFlightMax ?? EDGE_KEY_IN_FLIGHT_MAX_DEFAULT,
      pacer: deps.batching?.pacer,
    },
    deps.batching?.observer,
  );

  router.post(EVENTS_PATH, platformGate(deps.platform, 'retry_later'), async (ctx) => {
    const key = await keys.secretKey(ctx);
    const { value: body, memberFault } = await keys.check(ctx, key, () => readJsonBodyDeferring(ctx, 'metadata'));
    const checked = validateEventInput(body, memberFault);
    if (!checked.ok) {
      await keys.assertKnown(ctx, key);
      throw new AppError(checked.code, checked.message);
    }
    const credential = ctx.req.headers.authorization;
    const reply = await decide(ledger, key, checked.input, ctx, tenants.of(credential)?.game);
    tenants.learn(credential, reply);
    const result = gameEventResultText(reply);
    deps.decisions?.inc({ status: reply.status, reason: reply.reason ?? 'none', replayed: String(reply.replayed) });
    // Node's setHeader, not Koa's ctx.set (two arrays per call): the hot path's headers.
    ctx.res.setHeader('Cache-Control', 'no-store');
    if (!reply.replayed && reply.quota) setQuotaHeaders(ctx.res, reply.quota);
    answerJson(ctx, [DATA_OPEN, result, CLOSE]);
  });

  addEventBatchRoute(router, { platform: deps.platform, keys, ledger, tenants, decisions: deps.decisions });
  return { close: () => ledger.close(), batcher: ledger };
}
