// A real local HTTP receiver of webhooks for the tests: verifies every request's signature with the
// `standardwebhooks` package against the current secret (401 otherwise), records it, and answers the next queued
// status (then 200). `start(port)` listens (again) on 127.0.0.1, `stop` closes it with its connections.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { sql } from './database.ts';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** What standardwebhooks' verify answered: the parsed body. */
  verified: unknown;
}

export class WebhookReceiver {
  server: Server;
  secret = '';
  answers: number[] = [];
  received: ReceivedWebhook[] = [];
  rejectedSignatures = 0;

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        };
        let verified: unknown;
        try {
          verified = new Webhook(this.secret).verify(body, headers);
        } catch {
          this.rejectedSignatures += 1;
          response.writeHead(401).end('bad signature');
          return;
        }
        this.received.push({
          id: headers['webhook-id'],
          timestamp: headers['webhook-timestamp'],
          signature: headers['webhook-signature'],
          body,
          verified,
        });
        const status = this.answers.shift() ?? 200;
        response.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
      });
    });
  }

  /** Listens on 127.0.0.1 (`port`: 0 for any free one); answers the endpoint URL. */
  async start(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  ofType(type: string): ReceivedWebhook[] {
    return this.received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type);
  }
}

/** Makes a developer the owner of a fixture organization (ledger-fixtures make organizations without members). */
export async function addOwner(url: string, organizationId: string, identityUserId: string): Promise<void> {
  await sql(
    url,
    `insert into ledger.members (id, organization_id, identity_user_id, role, joined_at)
     values (gen_random_uuid(), $1, $2, 'owner', now())`,
    [organizationId, identityUserId],
  );
}
