// An OTLP/HTTP endpoint that accepts and drops everything, for benchmarks with tracing on without a collector:
//   node load/otlp-sink.ts [--port 4318]
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm run bench:ledger
// Answers every export with success (an empty ExportTraceServiceResponse, protobuf or JSON) and prints what it
// received when it stops (Ctrl-C / SIGTERM).
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '4318' } } });
let requests = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  request.on('end', () => {
    requests += 1;
    const json = (request.headers['content-type'] ?? '').includes('json');
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    response.end(json ? '{}' : undefined);
  });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`OTLP sink on http://127.0.0.1:${values.port}\n`);
});
const stop = () => {
  process.stdout.write(`OTLP sink: ${requests} exports, ${(bytes / 1024 / 1024).toFixed(1)} MiB\n`);
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
