// Request parameters the way Zulip reads them: from the query string and the form body (body
// wins), strings as sent, and everything else (booleans, numbers, arrays, objects) JSON-encoded.
// Each route declares its parameters once; the result is typed from the declaration.
import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import type { Request } from "express";
import { InvalidArgumentError, MissingArgumentError } from "@chat/core";

const ajv = new Ajv({ allErrors: false, strict: false });

type Parser<T> = (raw: string, name: string) => T;

export class Param<T> {
  constructor(
    readonly parse: Parser<T>,
    readonly required: boolean = true,
    readonly fallback?: () => T,
  ) {}

  optional(): Param<T | undefined> {
    return new Param<T | undefined>(this.parse, false);
  }

  default(value: T): Param<T> {
    return new Param<T>(this.parse, false, () => value);
  }
}

function parseJson(raw: string, name: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new InvalidArgumentError(`Argument "${name}" is not valid JSON.`, name);
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

export const params = {
  string: () => new Param<string>((raw) => raw),
  /** A decimal integer, as Zulip's int converters accept. */
  int: () =>
    new Param<number>((raw, name) => {
      if (!/^-?\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${name} is not an integer`, name);
      const value = Number(raw);
      if (!Number.isSafeInteger(value)) throw new InvalidArgumentError(`${name} is not an integer`, name);
      return value;
    }),
  bool: () =>
    new Param<boolean>((raw, name) => {
      const value = parseJson(raw, name);
      if (typeof value !== "boolean") throw new InvalidArgumentError(`${name} is not a boolean`, name);
      return value;
    }),
  /** A JSON-encoded value checked against a JSON schema; T is what the schema admits. */
  json: <T>(schema: object) =>
    new Param<T>((raw, name) => {
      const value = parseJson(raw, name);
      const validate = validator(schema);
      if (!validate(value)) throw new InvalidArgumentError(describeSchemaError(name, validate.errors![0]), name);
      return value as T;
    }),
  /**
   * A string Zulip 3.x read JSON-encoded (its `validator=check_string` parameters; later releases
   * take the plain text). Clients of that era send `"text"` with the quotes: a JSON string literal
   * is decoded, anything else is taken as sent.
   */
  jsonOrPlainString: () =>
    new Param<string>((raw) => {
      if (!raw.startsWith('"')) return raw;
      try {
        const value: unknown = JSON.parse(raw);
        return typeof value === "string" ? value : raw;
      } catch {
        return raw;
      }
    }),
  /**
   * A JSON object whose values are all strings: Zulip's check_dict([], value_validator=check_string),
   * with its wording (`storage is not a dict`, `storage contains a value that is not a string`).
   */
  stringDict: () =>
    new Param<Record<string, string>>((raw, name) => {
      const value = parseJson(raw, name);
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidArgumentError(`${name} is not a dict`, name);
      for (const item of Object.values(value)) {
        if (typeof item !== "string") throw new InvalidArgumentError(`${name} contains a value that is not a string`, name);
      }
      return value as Record<string, string>;
    }),
  /** A string with a fixed set of values. */
  oneOf: <const T extends string>(values: readonly T[]) =>
    new Param<T>((raw, name) => {
      if (!(values as readonly string[]).includes(raw)) throw new InvalidArgumentError(`Invalid ${name}`, name);
      return raw as T;
    }),
};

export type ParamSpec = Record<string, Param<unknown>>;
export type ParsedParams<S extends ParamSpec> = { [K in keyof S]: S[K] extends Param<infer T> ? T : never };

/** Where parameters come from: an Express request, or a hot route's parsed query (hot-routes.ts). */
export type ParamSource = Pick<Request, "body" | "query">;

/** The raw string a client sent for a parameter, body first, then query; the last of repeats. */
export function rawParam(req: ParamSource, name: string): string | undefined {
  const fromBody = (req.body as Record<string, unknown> | undefined)?.[name];
  const fromQuery = (req.query as Record<string, unknown>)[name];
  const value = fromBody !== undefined ? fromBody : fromQuery;
  if (Array.isArray(value)) return value.length === 0 ? undefined : String(value[value.length - 1]);
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : String(value);
}

export function parseParams<S extends ParamSpec>(req: ParamSource, spec: S): ParsedParams<S> {
  const result: Record<string, unknown> = {};
  for (const [name, param] of Object.entries(spec)) {
    const raw = rawParam(req, name);
    if (raw === undefined) {
      if (param.required) throw new MissingArgumentError(name);
      result[name] = param.fallback?.();
      continue;
    }
    result[name] = param.parse(raw, name);
  }
  return result as ParsedParams<S>;
}
