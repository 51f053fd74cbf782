// An endpoint's contract, declared once: its method and path, the parameters its handler parses
// (the same spec object parseParams gets), the body it answers with, and the errors it can give.
// Routes register through `serve`, so a route's path is its contract's; openapi.ts builds the
// API document (GET /api/v1/openapi.json) from the contracts, and the tests check every response
// against it.
import type { RequestHandler, Router } from "express";
import { tagEndpoint } from "./ignored-parameters.ts";
import type { JsonSchema, ParamSpec } from "./params.ts";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** Every code a JSON error of this server can carry (the Error schema's `code` is one of these). */
export const ERROR_CODES = [
  "BAD_REQUEST",
  "REQUEST_VARIABLE_MISSING",
  "BAD_EVENT_QUEUE_ID",
  "STREAM_DOES_NOT_EXIST",
  "BAD_NARROW",
  "BAD_IMAGE",
  "REACTION_ALREADY_EXISTS",
  "REACTION_DOES_NOT_EXIST",
  "UNAUTHORIZED_PRINCIPAL",
  "UNAUTHORIZED",
  "USER_DEACTIVATED",
  "REALM_DEACTIVATED",
  "AUTHENTICATION_FAILED",
  "NONEXISTENT_SUBDOMAIN",
  "RATE_LIMIT_HIT",
  "CSRF_FAILED",
  "SERVICE_UNAVAILABLE",
  "INTERNAL_SERVER_ERROR",
  "INVITATION_FAILED",
  "INVALID_PUSH_DEVICE_TOKEN",
  "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
  "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
  "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
  "CANNOT_DEACTIVATE_GROUP_IN_USE",
  "EXPECTATION_MISMATCH",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** How a request proves who sends it. */
/** `basic-or-spectator`: HTTP Basic, or none at all from a spectator of an organization that lets them in (web-public streams). */
export type Auth = "basic" | "none" | "basic-or-api-key" | "signed-url" | "basic-or-spectator";

export interface PathParamDoc {
  schema: JsonSchema;
  description?: string;
  /** The rest of the path, slashes included (Express's `*name`). */
  rest?: boolean;
}

export interface FilePartDoc {
  /** The form field's name the document gives it (the route takes the one file under any name). */
  name: string;
  description: string;
  required: boolean;
}

export interface Endpoint<S extends ParamSpec = ParamSpec> {
  method: Method;
  /** OpenAPI form, under /api/v1 unless `root`: `/messages/{message_id}`. */
  path: string;
  /** Served at the root rather than under /api/v1 (file downloads). */
  root?: boolean;
  summary: string;
  /** Groups endpoints in the document (Zulip's tags: messages, streams, users, ...). */
  tag: string;
  auth: Auth;
  /** The query or form parameters: the spec the handler parses. */
  params: S;
  /**
   * Parameters the handler reads itself (rawParam) because their reading is not one value's:
   * `topic` or its older name `subject`. Documented here; never parsed by parseParams.
   */
  otherParams?: Record<string, { schema: JsonSchema; description: string }>;
  /** Path segments; a segment not listed is an integer id. */
  pathParams?: Record<string, PathParamDoc>;
  /** A multipart body carrying a file (besides any parameters). */
  file?: FilePartDoc;
  /** The success body's JSON Schema, a file's media types for a download, or `{ html }` describing a page for a browser. */
  response: JsonSchema | { binary: string[] } | { html: string };
  /**
   * A page's refusals in its own words, as HTML (a bad link, a form to correct): these statuses
   * may be a page as well as the JSON error every endpoint may answer before the route.
   */
  htmlStatuses?: readonly number[];
  /** The success status, 200 unless said. */
  successStatus?: number;
  /**
   * Redirects a page may answer instead (no body; `Location` says where), each status with what
   * it means: `{ 302: "Not signed in: to the login page." }`.
   */
  redirects?: Readonly<Record<number, string>>;
  /** Codes beyond the ones every endpoint may answer (openapi.ts's COMMON_ERRORS). */
  errors?: readonly ErrorCode[];
  /** HTTP statuses beyond the ones every endpoint may answer (openapi.ts's COMMON_ERRORS): 403 for a file, 416 for a range. */
  errorStatuses?: readonly number[];
  description?: string;
}

/** A contract, typed by its parameters (so `parseParams(req, E.params)` is typed). */
export function endpoint<S extends ParamSpec>(contract: Endpoint<S>): Endpoint<S> {
  return contract;
}

/** The Express pattern of a contract's path: `{id}` → `:id`, a rest segment → `*name`. */
export function expressPath(contract: Pick<Endpoint, "path" | "pathParams">): string {
  return contract.path.replace(/\{(\w+)\}/g, (_all, name: string) => (contract.pathParams?.[name]?.rest ? `*${name}` : `:${name}`));
}

/** The contract's path as Express and the document both name it (`GET /messages/{message_id}`). */
export function endpointKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

/**
 * Registers `handlers` at the contract's method and path: a route's path is its contract's. The
 * request is tagged with its contract, whose parameters a success does not list as ignored.
 */
export function serve(router: Router, contract: Endpoint<any>, ...handlers: RequestHandler[]): void {
  const tag: RequestHandler = (req, _res, next) => {
    tagEndpoint(req, contract);
    next();
  };
  router[contract.method](expressPath(contract), tag, ...handlers);
}

// Response bodies. Every body has `result` and `msg`; `success` lists the rest of its fields,
// and a body has no field its schema does not name.

/** A success body with `required` fields (and `optional` ones), nothing else. */
export function successBody(required: Record<string, JsonSchema> = {}, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: "object",
    required: ["result", "msg", ...Object.keys(required)],
    properties: { result: { const: "success" }, msg: { type: "string" }, ...required, ...optional },
    additionalProperties: false,
  };
}

/**
 * The body of a settings change: each setting the request changed (one of the parameters), with
 * its new value, of the parameter's type unless `values` says otherwise.
 */
export function changedSettingsBody(spec: ParamSpec, values: Record<string, JsonSchema> = {}): JsonSchema {
  const fields = Object.fromEntries(Object.entries(spec).map(([name, param]) => [name, values[name] ?? valueSchema(param.doc.schema)]));
  return successBody({}, fields);
}

/** A parameter's schema as a value's: its type and values, not its bounds on what a client sends. */
function valueSchema(schema: JsonSchema): JsonSchema {
  const { type, enum: values } = schema;
  return { ...(type !== undefined ? { type } : {}), ...(values !== undefined ? { enum: values } : {}) };
}

/** The plain success every write without a result answers. */
export const EMPTY_SUCCESS = successBody();

// Small builders for the schemas: JSON Schema as plain data, without a dependency.
export const schema = {
  string: (extra: JsonSchema = {}): JsonSchema => ({ type: "string", ...extra }),
  integer: (extra: JsonSchema = {}): JsonSchema => ({ type: "integer", ...extra }),
  number: (extra: JsonSchema = {}): JsonSchema => ({ type: "number", ...extra }),
  boolean: (): JsonSchema => ({ type: "boolean" }),
  null: (): JsonSchema => ({ type: "null" }),
  nullable: (inner: JsonSchema): JsonSchema => ({ anyOf: [inner, { type: "null" }] }),
  array: (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: "array", items, ...extra }),
  /** An object with these required and optional fields; no others unless `open`. */
  object: (required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}, open = false): JsonSchema => ({
    type: "object",
    required: Object.keys(required),
    properties: { ...required, ...optional },
    additionalProperties: open,
  }),
  /** A dict from any key to `values`. */
  dict: (values: JsonSchema): JsonSchema => ({ type: "object", additionalProperties: values }),
  /** A shared shape in the document's components.schemas. */
  ref: (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` }),
  oneOf: (...options: JsonSchema[]): JsonSchema => ({ oneOf: options }),
  anyOf: (...options: JsonSchema[]): JsonSchema => ({ anyOf: options }),
  enum: (...values: Array<string | number>): JsonSchema => ({ enum: values }),
  const: (value: unknown): JsonSchema => ({ const: value }),
  /** Any JSON value. */
  any: (): JsonSchema => ({}),
};
