/**
 * One Ajv configuration for every program: JSON Schema 2020-12 (the dialect of OpenAPI 3.1),
 * strict mode (unknown keywords/formats in a schema are programming errors), first error only
 * (allErrors false: cheaper, and the API reports one message anyway).
 */

import type { ErrorObject, Format, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { isUuid, UUID_PATTERN } from './uuid.ts';

export type AjvInstance = Ajv2020;

// RFC 3339 §5.6 `date-time` as emitted by this service (Date#toISOString, PostgreSQL):
// seconds required, fraction optional, offset required. Decisions: only upper-case `T`/`Z`
// (no lower case, no space separator); no leap second (`:60`), as JavaScript Date cannot hold it.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

/** Strict RFC 3339 date-time check (calendar-valid, hours 00-23, offsets up to 23:59). */
export function isRfc3339DateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (m === null) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const maxDay = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
  if (day > maxDay) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return true;
}

export interface CreateAjvOptions {
  /** Extra or replacement formats for this instance (e.g. a stricter/looser `date-time` for one schema). */
  formats?: Record<string, Format>;
}

export function createAjv(options: CreateAjvOptions = {}): AjvInstance {
  const ajvOptions: Options = { strict: true, allErrors: false, messages: true };
  const ajv = new Ajv2020(ajvOptions);
  // ajv-formats is CommonJS; under nodenext its default import is the module object, and the
  // plugin function also carries itself as `.default` at run time, so `.default` works everywhere.
  addFormats.default(ajv);
  // Replace ajv-formats' `uuid` (which accepts any version/variant) with the spec's rule, and its
  // `date-time` (which accepts lower case, a space separator and leap seconds) with the strict one.
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  ajv.addFormat('date-time', { type: 'string', validate: isRfc3339DateTime });
  for (const [name, format] of Object.entries(options.formats ?? {})) ajv.addFormat(name, format);
  return ajv;
}

/** A validator as the programs use one: called on a value, then its `errors` read when it refused the value. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null | undefined;
}

/**
 * A validator compiled on its first call, not when its module loads: compiling every program's schemas at start
 * (and each Ajv instance's meta-schema with its first schema) was a tenth of the embedded default's start
 * (docs/benchmarks.md, "The embedded default's start"). A schema that does not compile fails its first request
 * instead of the start; the tests that use each validator compile it.
 */
export function compiledOnFirstUse(compile: () => ValidateFunction): Validator {
  let compiled: ValidateFunction | undefined;
  const validate: Validator = (data) => {
    compiled ??= compile();
    const valid = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return valid;
  };
  return validate;
}

/** An Ajv instance made on first use (createAjv's), for a module's validators compiled on first use. */
export function ajvOnFirstUse(options: CreateAjvOptions = {}): () => AjvInstance {
  let ajv: AjvInstance | undefined;
  return () => {
    ajv ??= createAjv(options);
    return ajv;
  };
}

const NAME_LENGTH_MAX = 64;

// Field names come from the caller: quote them, escape control characters, and cap the length
// so that an error message never echoes a large or unprintable input.
function quoteName(name: string): string {
  const cut = name.length > NAME_LENGTH_MAX ? `${name.slice(0, NAME_LENGTH_MAX)}...` : name;
  return `'${JSON.stringify(cut).slice(1, -1)}'`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function appendSegment(path: string, seg: string): string {
  if (/^\d+$/.test(seg)) return `${path}[${seg}]`;
  if (IDENTIFIER.test(seg) && seg.length <= NAME_LENGTH_MAX) return `${path}.${seg}`;
  return `${path}[${quoteName(seg)}]`;
}

/** JSON Pointer (`/a/0/b~1c`) to a readable path (`body.a[0]['b/c']`). */
function pointerToPath(root: string, pointer: string): string {
  if (pointer === '') return root;
  let out = root;
  for (const raw of pointer.slice(1).split('/'))
    out = appendSegment(out, raw.replaceAll('~1', '/').replaceAll('~0', '~'));
  return out;
}

/**
 * A short human message for the first Ajv error, e.g. "body.eventType must match pattern ...",
 * "unknown field 'foo'", "body.eventId is required".
 */
export function describeAjvError(errors: readonly ErrorObject[] | null | undefined, root = 'body'): string {
  const e = errors?.[0];
  if (e === undefined) return `${root} is invalid`;
  const path = pointerToPath(root, e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = quoteName(String(p['additionalProperty'] ?? p['unevaluatedProperty']));
      return path === root ? `unknown field ${name}` : `unknown field ${name} in ${path}`;
    }
    case 'required':
      return `${appendSegment(path, String(p['missingProperty']))} is required`;
    case 'type':
      return `${path} must be ${String(p['type'])}`;
    case 'pattern':
      // The UUID rule is long and unreadable as a regex; name it instead.
      if (p['pattern'] === UUID_PATTERN) return `${path} must be a valid uuid`;
      return `${path} must match pattern ${String(p['pattern'])}`;
    case 'format':
      return `${path} must be a valid ${String(p['format'])}`;
    default:
      return `${path} ${e.message ?? 'is invalid'}`;
  }
}
