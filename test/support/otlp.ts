// A small OTLP/HTTP receiver for traces (JSON encoding: OTEL_EXPORTER_OTLP_PROTOCOL=http/json), enough for tests to
// see the spans the programs export.
import { createServer } from 'node:http';
import { listen } from '#runtime/program.ts';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** The span as received, for searches through everything it carries. */
  raw: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

function attributeValue(value: OtlpValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(attributeValue);
  return undefined;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, attributeValue(a.value)]));
}

export interface OtlpReceiver {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the programs. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Raw request bodies, for searches for secrets. */
  bodies: string[];
  /** Waits until `predicate` holds for the spans received so far. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (request.method === 'POST' && request.url === '/v1/traces') {
        bodies.push(body);
        try {
          const parsed = JSON.parse(body) as {
            resourceSpans?: Array<{
              resource?: { attributes?: OtlpAttribute[] };
              scopeSpans?: Array<{
                spans?: Array<{
                  traceId: string;
                  spanId: string;
                  parentSpanId?: string;
                  name: string;
                  kind: number;
                  attributes?: OtlpAttribute[];
                }>;
              }>;
            }>;
          };
          for (const resourceSpans of parsed.resourceSpans ?? []) {
            const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
            for (const scope of resourceSpans.scopeSpans ?? []) {
              for (const span of scope.spans ?? []) {
                spans.push({
                  service,
                  traceId: span.traceId,
                  spanId: span.spanId,
                  parentSpanId: span.parentSpanId ?? '',
                  name: span.name,
                  kind: span.kind,
                  attributes: attributesOf(span.attributes),
                  raw: span,
                });
              }
            }
          }
        } catch {
          response.writeHead(400).end();
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      response.writeHead(404).end();
    });
  });
  const port = await listen(server, 0, '127.0.0.1');
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    async waitFor(predicate, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) {
          const seen = spans.map((s) => `${s.service}: ${s.name}`).join('\n');
          throw new Error(`no ${what} within ${timeoutMs} ms; spans received:\n${seen}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
