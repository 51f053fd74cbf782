// Request parameters the way Zulip reads them: from the query string and the form body (body
// wins), strings as sent, and everything else (booleans, numbers, arrays, objects) JSON-encoded.
// Each route declares its parameters once; the result is typed from the declaration.
import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import type { Request } from "express";
import { badRequest, InvalidArgumentError, MAX_INT, MIN_INT, MissingArgumentError } from "@chat/core";
import { noteParamsRead } from "./ignored-parameters.ts";

const ajv = new Ajv({ allErrors: false, strict: false });

type Parser<T> = (raw: string, name: string) => T;

// Bounds every parameter has unless its route sets its own (Zulip's where it has one): a client
// can make no list, string or number big enough to cost the server more than a request should.
/** Characters in a plain string parameter (message content sets bytes instead). */
export const DEFAULT_MAX_STRING_LENGTH = 10_000;
/** Characters of a JSON-encoded parameter as sent. */
export const DEFAULT_MAX_JSON_LENGTH = 100_000;
/** Items in any list inside a JSON parameter. */
export const DEFAULT_MAX_ITEMS = 1_000;
/** Nesting of lists and dicts inside a JSON parameter. */
const MAX_JSON_DEPTH = 16;

interface Bounds {
  /** Largest raw value, in characters (or UTF-8 bytes when `bytes`). */
  maxLength: number;
  bytes?: boolean;
  /** The refusal's text instead of `<name> is too long (limit: N characters)`. */
  tooLong?: string;
}

/**
 * What a parameter admits, as the API document says it (openapi.ts): the JSON Schema of its value,
 * and whether it is sent JSON-encoded (lists and dicts; Zulip's `content: application/json`) or
 * as plain text (strings, and the integers and booleans any client sends bare).
 */
export interface ParamDoc {
  schema: JsonSchema;
  json: boolean;
  description?: string;
  /** The default, when the parameter has one (a plain value: defaults are literals). */
  default?: unknown;
}

/** A JSON Schema, as plain data (draft 2020-12, which OpenAPI 3.1 uses). */
export type JsonSchema = Record<string, unknown>;

export class Param<T> {
  constructor(
    readonly parse: Parser<T>,
    readonly bounds: Bounds,
    readonly doc: ParamDoc,
    readonly required: boolean = true,
    readonly fallback?: () => T,
  ) {}

  optional(): Param<T | undefined> {
    return new Param<T | undefined>(this.parse, this.bounds, this.doc, false);
  }

  default(value: T): Param<T> {
    return new Param<T>(this.parse, this.bounds, { ...this.doc, default: value }, false, () => value);
  }

  /** A tighter (or, for a value that needs it, wider) bound on the raw value's length. */
  maxLength(maxLength: number, tooLong?: string): Param<T> {
    return new Param<T>(this.parse, { maxLength, tooLong }, this.doc, this.required, this.fallback);
  }

  /** A bound in UTF-8 bytes, as Zulip bounds message content. */
  maxBytes(maxLength: number, tooLong?: string): Param<T> {
    return new Param<T>(this.parse, { maxLength, bytes: true, tooLong }, this.doc, this.required, this.fallback);
  }

  /** What the API document says of the parameter beyond its type. */
  describe(description: string): Param<T> {
    return new Param<T>(this.parse, this.bounds, { ...this.doc, description }, this.required, this.fallback);
  }

  /** The parameter's JSON Schema for the API document, its bounds included. */
  schema(): JsonSchema {
    const { schema, json } = this.doc;
    const { maxLength, bytes } = this.bounds;
    const out: JsonSchema = { ...schema };
    // A plain string's length bound is the raw value's; a JSON value's bound is on its text, which
    // the schema of the decoded value cannot say (the description does).
    if (!json && schema.type === "string" && out.maxLength === undefined) out.maxLength = maxLength;
    if (this.doc.default !== undefined) out.default = this.doc.default;
    const notes = [this.doc.description, bytes ? `At most ${maxLength} bytes of UTF-8.` : undefined, json ? `JSON-encoded; at most ${maxLength} characters as sent.` : undefined].filter(Boolean);
    if (notes.length > 0) out.description = notes.join(" ");
    return out;
  }

  /** Checks the raw value against the bounds, then parses it. */
  read(raw: string, name: string): T {
    const { maxLength, bytes, tooLong } = this.bounds;
    // A string's UTF-8 length is at most three bytes a UTF-16 unit, so most need no counting.
    const length = bytes && raw.length * 3 > maxLength ? Buffer.byteLength(raw, "utf8") : raw.length;
    if (length > maxLength) {
      if (tooLong) throw badRequest(tooLong);
      throw new InvalidArgumentError(`${name} is too long (limit: ${maxLength} ${bytes ? "bytes" : "characters"})`, name);
    }
    return this.parse(raw, name);
  }
}

function parseJson(raw: string, name: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new InvalidArgumentError(`Argument "${name}" is not valid JSON.`, name);
  }
}

/** Zulip's refusal of a string with NUL, which Postgres cannot store. */
function nulError(name: string): InvalidArgumentError {
  return new InvalidArgumentError(`${name} contains NULL (0x00) characters.`, name);
}

interface ValueBounds {
  maxItems: number;
  maxStringLength: number;
  /** The route checks its integers' range itself, in its own words (any safe integer passes here). */
  ownIntegerRange?: boolean;
}

/**
 * Every list, string and number inside a decoded JSON value within bounds: JSON is where a short
 * request carries a long list (`"\u0000"` and 1e20 pass any check of the raw text).
 */
function checkJsonValue(value: unknown, name: string, bounds: ValueBounds, depth = 0): void {
  if (depth > MAX_JSON_DEPTH) throw new InvalidArgumentError(`${name} is nested too deeply`, name);
  if (typeof value === "string") {
    if (value.includes("\u0000")) throw nulError(name);
    if (value.length > bounds.maxStringLength) throw new InvalidArgumentError(`${name} contains a string that is too long (limit: ${bounds.maxStringLength} characters)`, name);
  } else if (typeof value === "number") {
    if (Number.isInteger(value) && !bounds.ownIntegerRange && (value < MIN_INT || value > MAX_INT)) throw new InvalidArgumentError(`${name} contains a number out of range`, name);
  } else if (Array.isArray(value)) {
    if (value.length > bounds.maxItems) throw new InvalidArgumentError(`${name} has too many items (limit: ${bounds.maxItems})`, name);
    for (const item of value) checkJsonValue(item, name, bounds, depth + 1);
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length > bounds.maxItems) throw new InvalidArgumentError(`${name} has too many items (limit: ${bounds.maxItems})`, name);
    for (const [key, item] of entries) {
      if (key.includes("\u0000")) throw nulError(name);
      checkJsonValue(item, name, bounds, depth + 1);
    }
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "a boolean",
  array: "a list",
  object: "a dict",
};

/** Zulip's validator wording: `to[1] is not an integer`, `subscriptions[0] key is missing: name`. */
function describeSchemaError(name: string, error: ErrorObject): string {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `["${part}"]`))
    .join("");
  const where = `${name}${path}`;
  switch (error.keyword) {
    case "type": {
      const expected = String(error.params.type).split(",")[0];
      return `${where} is not ${TYPE_NAMES[expected] ?? expected}`;
    }
    case "required":
      return `${where} key is missing: ${error.params.missingProperty}`;
    case "additionalProperties":
      return `Unexpected arguments: ${error.params.additionalProperty}`;
    case "maxLength":
      return `${where} is too long (limit: ${error.params.limit} characters)`;
    case "minItems":
      return `${where} must have at least ${error.params.limit} items`;
    case "maxItems":
      return `${where} has too many items (limit: ${error.params.limit})`;
    default:
      return `Invalid ${where}`;
  }
}

// Keyed by the schema's JSON, not its object: routes build their specs per request, and ajv keeps
// every schema object it compiled, so an object key would compile (and retain) one per request.
const compiled = new Map<string, ValidateFunction>();

function validator(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

const STRING_BOUNDS: Bounds = { maxLength: DEFAULT_MAX_STRING_LENGTH };
const JSON_BOUNDS: Bounds = { maxLength: DEFAULT_MAX_JSON_LENGTH };

/** Decodes a JSON parameter and checks what it holds against `bounds`. */
function readJson(raw: string, name: string, bounds: Partial<ValueBounds> = {}): unknown {
  const value = parseJson(raw, name);
  checkJsonValue(value, name, valueBounds(bounds));
  return value;
}

/**
 * The schema of a decoded JSON parameter with the bounds every JSON parameter has (checkJsonValue)
 * written in: lists' maxItems, strings' maxLength, where the route's schema sets none.
 */
function boundedSchema(schema: JsonSchema, bounds: ValueBounds): JsonSchema {
  const walk = (node: unknown, depth: number): unknown => {
    if (depth > MAX_JSON_DEPTH || node === null || typeof node !== "object") return node;
    if (Array.isArray(node)) return node.map((item) => walk(item, depth + 1));
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      out[key] = key === "properties" && value !== null && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([name, item]) => [name, walk(item, depth + 1)])) : walk(value, depth + 1);
    }
    const types = Array.isArray(out.type) ? out.type : [out.type];
    if (types.includes("array") && out.maxItems === undefined) out.maxItems = bounds.maxItems;
    if (types.includes("object") && out.maxProperties === undefined) out.maxProperties = bounds.maxItems;
    if (types.includes("string") && out.maxLength === undefined) out.maxLength = bounds.maxStringLength;
    if (types.includes("integer") && !bounds.ownIntegerRange) {
      out.minimum ??= MIN_INT;
      out.maximum ??= MAX_INT;
    }
    return out;
  };
  return walk(schema, 0) as JsonSchema;
}

function valueBounds(bounds: Partial<ValueBounds>): ValueBounds {
  return { maxItems: bounds.maxItems ?? DEFAULT_MAX_ITEMS, maxStringLength: bounds.maxStringLength ?? DEFAULT_MAX_STRING_LENGTH, ownIntegerRange: bounds.ownIntegerRange };
}

const plain = (schema: JsonSchema, description?: string): ParamDoc => ({ schema, json: false, description });

export const params = {
  string: () => new Param<string>((raw) => raw, STRING_BOUNDS, plain({ type: "string" })),
  /**
   * A parameter whose text the route reads itself (`anchor`, a message's `to`): `parse` gives the
   * value and refuses, in the route's words, what it cannot read; `schema` says what it admits.
   */
  custom: <T>(parse: Parser<T>, schema: JsonSchema, description?: string) => new Param<T>(parse, STRING_BOUNDS, plain(schema, description)),
  /** A decimal integer, as Zulip's int converters accept, within Postgres' `integer` unless widened. */
  int: (range: { min?: number; max?: number } = {}) =>
    new Param<number>((raw, name) => {
      if (!/^-?\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${name} is not an integer`, name);
      const value = Number(raw);
      if (!Number.isSafeInteger(value)) throw new InvalidArgumentError(`${name} is not an integer`, name);
      if (value < (range.min ?? MIN_INT) || value > (range.max ?? MAX_INT)) {
        throw new InvalidArgumentError(`${name} is out of range`, name);
      }
      return value;
    }, { maxLength: 40 }, plain({ type: "integer", minimum: range.min ?? MIN_INT, maximum: range.max ?? MAX_INT })),
  bool: () =>
    new Param<boolean>((raw, name) => {
      const value = parseJson(raw, name);
      if (typeof value !== "boolean") throw new InvalidArgumentError(`${name} is not a boolean`, name);
      return value;
    }, { maxLength: 40 }, plain({ type: "boolean" })),
  /**
   * A JSON-encoded value checked against a JSON schema; T is what the schema admits. Every list in
   * it holds at most `maxItems` (default DEFAULT_MAX_ITEMS) items, every string at most
   * `maxStringLength` characters and no NUL, every integer fits Postgres' `integer`.
   */
  json: <T>(schema: object, bounds: Partial<ValueBounds> = {}) =>
    new Param<T>((raw, name) => {
      const value = readJson(raw, name, bounds);
      const validate = validator(schema);
      if (!validate(value)) throw new InvalidArgumentError(describeSchemaError(name, validate.errors![0]), name);
      return value as T;
    }, JSON_BOUNDS, { schema: boundedSchema(schema as JsonSchema, valueBounds(bounds)), json: true }),
  /**
   * A string Zulip 3.x read JSON-encoded (its `validator=check_string` parameters; later releases
   * take the plain text). Clients of that era send `"text"` with the quotes: a JSON string literal
   * is decoded, anything else is taken as sent.
   */
  jsonOrPlainString: () =>
    new Param<string>((raw, name) => {
      if (!raw.startsWith('"')) return raw;
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value !== "string") return raw;
        if (value.includes("\u0000")) throw nulError(name);
        return value;
      } catch (error) {
        if (error instanceof InvalidArgumentError) throw error;
        return raw;
      }
    }, STRING_BOUNDS, plain({ type: "string" }, "Plain text, or (as Zulip 3.x clients send it) a JSON string literal, which is decoded.")),
  /**
   * A JSON object whose values are all strings: Zulip's check_dict([], value_validator=check_string),
   * with its wording (`storage is not a dict`, `storage contains a value that is not a string`).
   * Its size is the route's to bound (`maxLength`); NUL is left to the route's own wording.
   */
  stringDict: () =>
    new Param<Record<string, string>>((raw, name) => {
      const value = parseJson(raw, name);
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidArgumentError(`${name} is not a dict`, name);
      for (const item of Object.values(value)) {
        if (typeof item !== "string") throw new InvalidArgumentError(`${name} contains a value that is not a string`, name);
      }
      return value as Record<string, string>;
    }, JSON_BOUNDS, { schema: { type: "object", additionalProperties: { type: "string" } }, json: true }),
  /** A string with a fixed set of values. */
  oneOf: <const T extends string>(values: readonly T[]) =>
    new Param<T>((raw, name) => {
      if (!(values as readonly string[]).includes(raw)) throw new InvalidArgumentError(`Invalid ${name}`, name);
      return raw as T;
    }, STRING_BOUNDS, plain({ type: "string", enum: [...values] })),
};

export type ParamSpec = Record<string, Param<unknown>>;
export type ParsedParams<S extends ParamSpec> = { [K in keyof S]: S[K] extends Param<infer T> ? T : never };

/** Where parameters come from: an Express request, or a hot route's parsed query (hot-routes.ts). */
export type ParamSource = Pick<Request, "body" | "query">;

/** The raw string a client sent for a parameter, body first, then query; the last of repeats. */
export function rawParam(req: ParamSource, name: string): string | undefined {
  const fromBody = (req.body as Record<string, unknown> | undefined)?.[name];
  const fromQuery = (req.query as Record<string, unknown>)[name];
  let value = fromBody !== undefined ? fromBody : fromQuery;
  if (Array.isArray(value)) value = value[value.length - 1];
  if (value === undefined || value === null) return undefined;
  const raw = typeof value === "string" ? value : String(value);
  // Postgres stores no NUL in text; every parameter a route reads passes here.
  if (raw.includes("\u0000")) throw nulError(name);
  return raw;
}

/**
 * A path segment a route reads as text (`/users/{email}/presence`): decoded by Express, so
 * `%00` arrives as NUL, which Postgres refuses in a query; refused here as any other parameter.
 */
export function pathParam(req: Pick<Request, "params">, name: string): string {
  const raw = String(req.params[name]);
  if (raw.includes("\u0000")) throw nulError(name);
  return raw;
}

export function parseParams<S extends ParamSpec>(req: ParamSource, spec: S): ParsedParams<S> {
  noteParamsRead(req, spec);
  const result: Record<string, unknown> = {};
  for (const [name, param] of Object.entries(spec)) {
    const raw = rawParam(req, name);
    if (raw === undefined) {
      if (param.required) throw new MissingArgumentError(name);
      result[name] = param.fallback?.();
      continue;
    }
    result[name] = param.read(raw, name);
  }
  return result as ParsedParams<S>;
}
