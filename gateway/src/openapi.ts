// The OpenAPI 3.1 document served at GET /openapi.json (CONTRACT section 1). Each program's REST module contributes
// a fragment (its paths and the named schemas they use); `buildOpenApiDocument` merges them with the parts every
// endpoint shares (security schemes, the error envelope and its responses). The named schemas are the very objects
// the edges validate with, so the document cannot drift from the validation.
import type Router from '@koa/router';
import { commonSchemas } from './schemas/common.ts';
import type { JsonSchema } from './schemas/json-schema.ts';

export interface OpenApiFragment {
  /** Path items by path, e.g. `{ '/api/developer/v1/records': { get: {...} } }`. */
  paths: Record<string, Record<string, unknown>>;
  /** Named schemas, referenced as `#/components/schemas/<name>`. */
  schemas: Record<string, JsonSchema>;
  /** Named responses, referenced as `#/components/responses/<name>` (beside the shared `Error<status>` ones). */
  responses?: Record<string, unknown>;
}

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '2.0.0';

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Invalid request, or an allocation or cap constraint violated.',
  '401': 'Missing or invalid credential or token.',
  '403': 'Admission or organization permission denied.',
  '404': 'Scoped resource not found.',
  '409': 'Replay conflict, expired link, or incompatible resource state.',
  '413': 'JSON body exceeds 16,384 UTF-8 bytes.',
  '415': 'Content-Type is not application/json.',
  '429': "TOO_MANY_REQUESTS: past the developer's limits (request rate, requests in flight, rule dry-runs).",
  '503':
    'Platform disabled, or a dependency temporarily unavailable: the message says whether nothing was changed or ' +
    'the outcome is unknown (docs/errors.md, "503 and what was stored").',
};

export const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before retrying.',
  required: true,
  schema: { type: 'string', pattern: '^[0-9]+$' },
};

/** The headers of a 429 TOO_MANY_REQUESTS (REST and POST /graphql). */
export const TOO_MANY_REQUESTS_HEADERS = {
  'Retry-After': RETRY_AFTER_HEADER,
  'RateLimit-Policy': {
    description: 'The developer\'s bucket (IETF RateLimit fields): `"developer";q=<burst>;w=<seconds to refill it>`.',
    required: true,
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'What is left of it: `"developer";r=<whole tokens left>;t=<seconds until it is full>`.',
    required: true,
    schema: { type: 'string' },
  },
};

/** Merges fragments into one document; a path or schema defined twice is a programming error. */
export function buildOpenApiDocument(fragments: OpenApiFragment[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, JsonSchema> = { ...commonSchemas };
  for (const fragment of fragments) {
    for (const [path, item] of Object.entries(fragment.paths)) {
      if (paths[path]) throw new Error(`OpenAPI path ${path} is defined twice`);
      paths[path] = item;
    }
    for (const [name, schema] of Object.entries(fragment.schemas)) {
      if (schemas[name] && schemas[name] !== schema) throw new Error(`OpenAPI schema ${name} is defined twice`);
      schemas[name] = schema;
    }
  }
  const responses: Record<string, unknown> = Object.fromEntries(
    Object.entries(ERROR_STATUSES).map(([status, description]) => [
      `Error${status}`,
      {
        description,
        // Every 503 says when to try again (services/runtime/src/http/app.ts), and so does every 429, with the
        // developer's bucket (gateway/src/auth/developer-limits.ts).
        ...(status === '503' ? { headers: { 'Retry-After': RETRY_AFTER_HEADER } } : {}),
        ...(status === '429' ? { headers: TOO_MANY_REQUESTS_HEADERS } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      },
    ]),
  );
  for (const fragment of fragments) {
    for (const [name, response] of Object.entries(fragment.responses ?? {})) {
      if (responses[name]) throw new Error(`OpenAPI response ${name} is defined twice`);
      responses[name] = response;
    }
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Sandbox Rewards API',
      version: API_VERSION,
      description:
        'Sandbox rewards backend: developer console, game event ingest, player linking. Amounts are sandbox TEST ' +
        'credits (1,000 units = one test dollar). Success bodies are `{ "data": ... }`, errors `{ "error": { code, message } }`.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    // Relative: the server that serves this document (`npm start`: http://localhost:8080). Client generators take it
    // as the default base URL.
    servers: [{ url: '/', description: 'The server that serves this document.' }],
    paths,
    components: {
      schemas,
      responses,
      securitySchemes: {
        developerSession: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Developer session of the identity provider.',
        },
        nativeSession: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Native platform session.' },
        gameSecretKey: { type: 'http', scheme: 'bearer', description: 'Game server secret key (cr_sk_sandbox_...).' },
        gamePublicKey: {
          type: 'apiKey',
          in: 'query',
          name: 'publicKey',
          description: 'Public game key (cr_pk_sandbox_...).',
        },
        adminToken: { type: 'http', scheme: 'bearer', description: 'Operator token (ADMIN_TOKEN).' },
      },
    },
  };
}

/** GET /openapi.json: the document, built once. Not behind the platform switch, like the probes. */
export function addOpenApiRoute(router: Router, fragments: OpenApiFragment[]): void {
  const body = JSON.stringify(buildOpenApiDocument(fragments));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body;
  });
}
