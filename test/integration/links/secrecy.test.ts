// The link token is a secret (spec: one-time, valid 10 minutes): it never appears in logs (at trace level), in
// /metrics, in error messages, nor on NATS (only its SHA-256 travels). The whole flow runs, failures included, with
// every log line captured and every NATS message of the system's private server recorded.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { connect } from '@nats-io/transport-node';
import { createLogger } from '#runtime/logger.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  APPROVE,
  createIntent,
  expectData,
  type Game,
  gameWithKeys,
  INSPECT,
  intent,
  LINK_INTENTS,
  native,
  nativeSession,
  PLAYERS,
} from './helpers.ts';

describe('the link token stays secret', () => {
  let system: TestSystem;
  let game: Game;
  let logs = '';
  let natsTraffic: Buffer[] = [];
  let stopRecording: () => Promise<void>;
  /** Resolves once the recorder has every message the server routed before this call (see below). */
  let recorded: () => Promise<void>;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    });
    system = await startTestSystem({
      env: { SUPPORTED_COUNTRIES: 'DE', LOG_LEVEL: 'trace' },
      logger: createLogger({ process: 'all-in-one' }, 'trace', sink),
    });
    const recorder = await connect({ servers: system.natsUrl! });
    const subscription = recorder.subscribe('>');
    // A marker the recorder publishes to itself: the server routes messages to a subscriber in the order it
    // processed them, so when the marker comes back, every message routed before it (all the system sent for the
    // requests already answered) has reached the recorder.
    const MARKER = `test.secrecy.recorded.${randomBytes(8).toString('hex')}`;
    let markerSeen: (() => void) | undefined;
    recorded = async () => {
      const seen = new Promise<void>((resolve) => {
        markerSeen = resolve;
      });
      recorder.publish(MARKER);
      await seen;
    };
    void (async () => {
      for await (const message of subscription) {
        if (message.subject === MARKER) {
          markerSeen?.();
          continue;
        }
        natsTraffic.push(Buffer.from(message.data));
        if (message.headers) natsTraffic.push(Buffer.from(message.headers.toString()));
        natsTraffic.push(Buffer.from(message.subject));
      }
    })();
    stopRecording = () => recorder.drain();
    game = await gameWithKeys(system);
  });
  afterAll(async () => {
    await stopRecording?.();
    await system?.stop();
  });

  it('never in logs, metrics, error messages or NATS messages, through success and failure', async () => {
    logs = '';
    natsTraffic = [];
    const errors: string[] = [];
    const collect = (answer: { status: number; body: any }) => {
      if (answer.status >= 400) errors.push(JSON.stringify(answer.body));
      return answer;
    };

    const created = await intent(system, game, 'secret-keeper');
    const { linkToken } = created;
    const session = await nativeSession(system);
    const other = await nativeSession(system);

    // Success paths.
    expectData(await native(system, INSPECT, session, { linkToken }), 'LinkInspection');
    // Failure paths that carry the token in every place a client might put it.
    collect(await native(system, INSPECT, { token: session.token, headers: {} }, { linkToken })); // GEO_BLOCKED
    collect(await native(system, APPROVE, { token: 'garbage', headers: session.headers }, { linkToken }));
    collect(await native(system, APPROVE, session, { linkToken, extra: linkToken }));
    collect(await native(system, APPROVE, session, { [linkToken]: 1 }));
    collect(await native(system, APPROVE, session, { linkToken: `${linkToken}${'x'.repeat(150)}` }));
    collect(await native(system, APPROVE, session, { linkToken: linkToken.slice(1) }));
    collect(
      await api(system.url, 'POST', APPROVE, {
        token: session.token,
        headers: { ...session.headers, 'Content-Type': 'text/plain' },
        rawBody: linkToken,
      }),
    );
    collect(
      await api(system.url, 'POST', APPROVE, {
        token: session.token,
        headers: { ...session.headers, 'Content-Type': 'application/json' },
        rawBody: `{"linkToken":"${linkToken}"`,
      }),
    );
    collect(
      await api(system.url, 'POST', APPROVE, {
        token: session.token,
        headers: { ...session.headers, 'Content-Type': 'application/json' },
        rawBody: `{"linkToken":"${linkToken}","pad":"${'x'.repeat(17_000)}"}`,
      }),
    );
    collect(await api(system.url, 'POST', LINK_INTENTS, { token: linkToken, body: { externalPlayerId: 'x' } }));
    collect(await createIntent(system, game.secretKey, { externalPlayerId: linkToken, [linkToken]: true }));
    collect(await api(system.url, 'GET', `${PLAYERS}?${linkToken}=1`, { token: game.secretKey }));
    collect(await api(system.url, 'GET', `${PLAYERS}?externalPlayerId=a&t=${linkToken}`, { token: game.secretKey }));
    collect(await api(system.url, 'GET', `/nowhere?t=${linkToken}`));
    // The approval, then the used and someone else's attempts.
    expectData(await native(system, APPROVE, session, { linkToken }), 'LinkApproval');
    collect(await native(system, APPROVE, session, { linkToken }));
    collect(await native(system, APPROVE, other, { linkToken }));
    collect(await native(system, INSPECT, other, { linkToken }));
    const unknown = `cr_link_sandbox_${randomBytes(32).toString('base64url')}`;
    collect(await native(system, APPROVE, other, { linkToken: unknown }));

    expect(errors.length).toBeGreaterThanOrEqual(17);
    const metrics = await (await fetch(`${system.url}/metrics`)).text();
    await recorded(); // the last NATS messages reach the recorder

    // The secret part alone, and a long piece of it: neither may show anywhere.
    const secretPart = linkToken.slice('cr_link_sandbox_'.length);
    const needles = [linkToken, secretPart, secretPart.slice(0, 24), unknown.slice(16)];
    expect(logs.length).toBeGreaterThan(1000); // the capture works: requests were logged at trace level
    expect(logs).toContain('"path":"/api/native/v1/link-intents/approve"');
    expect(natsTraffic.length).toBeGreaterThan(20); // the recorder saw the operations
    const messages = errors.map((e) => JSON.parse(e).error.message as string).join('\n');
    const nats = Buffer.concat(natsTraffic);
    for (const needle of needles) {
      expect({ where: 'logs', found: logs.includes(needle) }).toEqual({ where: 'logs', found: false });
      expect({ where: 'metrics', found: metrics.includes(needle) }).toEqual({ where: 'metrics', found: false });
      expect({ where: 'errors', found: messages.includes(needle) }).toEqual({ where: 'errors', found: false });
      expect({ where: 'nats', found: nats.includes(needle) }).toEqual({ where: 'nats', found: false });
    }
  });
});
