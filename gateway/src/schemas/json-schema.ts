// JSON Schemas as plain objects, named once and used twice: by the request/response validation (Ajv) and by the
// OpenAPI document served at /openapi.json. Named schemas are referenced with `ref(name)`, which the document
// keeps as `#/components/schemas/<name>` and the validators inline (no schema here is recursive).
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ajvOnFirstUse, compiledOnFirstUse, type Validator } from '#runtime/validation/ajv.ts';

export type JsonSchema = { [keyword: string]: unknown };

const COMPONENTS = '#/components/schemas/';
/** OpenAPI keywords that are not JSON Schema: kept in the document, dropped for the validators. */
const OPENAPI_ONLY = new Set(['discriminator']);

export function ref(name: string): JsonSchema {
  return { $ref: `${COMPONENTS}${name}` };
}

/** `null` or the schema (OpenAPI 3.1 has no `nullable`; `anyOf` keeps Ajv's strict type checks happy). */
export function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: 'null' }] };
}

/** A deep copy of `schema` with every `ref(...)` replaced by the named schema (itself resolved). */
export function resolveRefs(schema: unknown, components: Record<string, JsonSchema>, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => resolveRefs(item, components, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  const object = schema as JsonSchema;
  if (typeof object.$ref === 'string' && object.$ref.startsWith(COMPONENTS)) {
    const name = object.$ref.slice(COMPONENTS.length);
    const target = components[name];
    if (!target) throw new Error(`unknown schema ${name}`);
    if (seen.includes(name)) throw new Error(`recursive schema ${[...seen, name].join(' -> ')}`);
    return resolveRefs(target, components, [...seen, name]);
  }
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(object)) {
    if (!OPENAPI_ONLY.has(key)) copy[key] = resolveRefs(value, components, seen);
  }
  return copy;
}

/** Validators for named schemas or for schemas that reference them, each compiled once, on its first use. */
export class SchemaSet {
  readonly components: Record<string, JsonSchema>;
  private readonly ajv = ajvOnFirstUse();
  private readonly validators = new Map<string, Validator>();

  constructor(components: Record<string, JsonSchema>) {
    this.components = components;
  }

  /** The validator of a named schema (an unknown name throws at once; the schema compiles on the first call). */
  named(name: string): Validator {
    let validate = this.validators.get(name);
    if (!validate) {
      if (!this.components[name]) throw new Error(`unknown schema ${name}`);
      validate = compiledOnFirstUse(() => this.compile(ref(name)));
      this.validators.set(name, validate);
    }
    return validate;
  }

  /** The validator of an anonymous schema, compiled now (compile once and keep it). */
  compile(schema: JsonSchema): ValidateFunction {
    return this.ajv().compile(resolveRefs(schema, this.components) as JsonSchema);
  }
}
