// The API document (OpenAPI 3.1) built from the endpoints' contracts (endpoints.ts): their
// parameter specs, the same objects the handlers parse with, describe the parameters; their
// response schemas the bodies. Served at GET /api/v1/openapi.json; the tests validate every
// response and event they see against it.
import { ERROR_CODES, endpointKey, type Endpoint, type ErrorCode } from "./endpoints.ts";
import { IGNORED_PARAMETERS_SCHEMA } from "./ignored-parameters.ts";
import type { JsonSchema, Param } from "./params.ts";

export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> } & Record<string, unknown>;
};

export interface OpenApiOperation {
  operationId: string;
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonSchema }>; headers?: Record<string, JsonSchema> }>;
  [key: string]: unknown;
}

/** A JSON error body: `result`, `msg`, a code (all but `Invalid API key` have one) and the code's extra fields. */
const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  required: ["result", "msg"],
  properties: {
    result: { const: "error" },
    msg: { type: "string" },
    code: { enum: [...ERROR_CODES] },
    var_name: { type: "string", description: "The parameter at fault (REQUEST_VARIABLE_MISSING; BAD_REQUEST about one parameter)." },
    queue_id: { type: "string", description: "BAD_EVENT_QUEUE_ID: the queue asked for." },
    stream: { type: "string", description: "STREAM_DOES_NOT_EXIST: the name asked for." },
    stream_id: { type: "integer", description: "STREAM_DOES_NOT_EXIST: the id asked for." },
    principal: { description: "UNAUTHORIZED_PRINCIPAL: the user named." },
    "retry-after": { type: "number", description: "RATE_LIMIT_HIT: seconds until a request may succeed (also the Retry-After header, rounded up)." },
    checks: { type: "object", additionalProperties: { type: "string" }, description: "GET /health/ready: each check's state." },
    errors: {
      type: "array",
      items: { type: "array", prefixItems: [{ type: "string" }, { type: "string" }, { type: "boolean" }], minItems: 3, maxItems: 3 },
      description: "INVITATION_FAILED: each address refused, why, and whether it is a deactivated account's.",
    },
    parameters: { type: "string", description: "BAD_REQUEST for parameters sent together that cannot be (Zulip's IncompatibleParametersError): their names, comma-separated." },
    sent_invitations: { type: "boolean", description: "INVITATION_FAILED: whether the other addresses were invited." },
    license_limit_reached: { type: "boolean", description: "INVITATION_FAILED: always false (no licenses here)." },
    daily_limit_reached: { type: "boolean", description: "INVITATION_FAILED: the organization's daily limit of invitations refused them all." },
    first_message_id_allowed_to_move: { type: ["integer", "null"], description: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: the oldest message of the topic still within the time limit (null: none is)." },
    total_messages_in_topic: { type: "integer", description: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: the topic's messages (those the user can read)." },
    total_messages_allowed_to_move: { type: "integer", description: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: how many of them are within the time limit." },
    objections: {
      type: "array",
      items: { type: "object", required: ["type"], properties: { type: { enum: ["subgroup", "channel", "user_group", "realm"] } } },
      description: "CANNOT_DEACTIVATE_GROUP_IN_USE: where the group is in use (a supergroup's, a channel's, a user group's or the organization's settings).",
    },
  },
  additionalProperties: false,
  allOf: [
    { if: { properties: { code: { const: "REQUEST_VARIABLE_MISSING" } }, required: ["code"] }, then: { required: ["var_name"] } },
    { if: { properties: { code: { const: "BAD_EVENT_QUEUE_ID" } }, required: ["code"] }, then: { required: ["queue_id"] } },
    { if: { properties: { code: { const: "STREAM_DOES_NOT_EXIST" } }, required: ["code"] }, then: { anyOf: [{ required: ["stream"] }, { required: ["stream_id"] }] } },
    { if: { properties: { code: { const: "RATE_LIMIT_HIT" } }, required: ["code"] }, then: { required: ["retry-after"] } },
    { if: { properties: { code: { const: "INVITATION_FAILED" } }, required: ["code"] }, then: { required: ["errors", "sent_invitations", "license_limit_reached", "daily_limit_reached"] } },
    { if: { properties: { code: { const: "CANNOT_DEACTIVATE_GROUP_IN_USE" } }, required: ["code"] }, then: { required: ["objections"] } },
    {
      if: { properties: { code: { const: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED" } }, required: ["code"] },
      then: { required: ["first_message_id_allowed_to_move", "total_messages_in_topic", "total_messages_allowed_to_move"] },
    },
  ],
};

/**
 * What every endpoint may answer besides its own errors, by status. 400, 408, 417 and 431 include
 * the answers Node's HTTP server gives before any route (http-server.ts makes them JSON too).
 */
const COMMON_ERRORS: Record<number, { name: string; description: string; codes: ErrorCode[] }> = {
  400: {
    name: "BadRequest",
    description: "The request is wrong: a parameter missing or invalid, a body that cannot be read, a path segment that is not percent-encoded UTF-8 (`Malformed URL path`), a request HTTP cannot parse (`Malformed request`) or one without Host (`Missing Host header`), or a refusal in the endpoint's own words.",
    codes: ["BAD_REQUEST", "REQUEST_VARIABLE_MISSING"],
  },
  401: { name: "Unauthorized", description: "No credentials, wrong ones (`Invalid API key` has no code), or a deactivated user or organization.", codes: ["UNAUTHORIZED", "USER_DEACTIVATED", "REALM_DEACTIVATED", "AUTHENTICATION_FAILED"] },
  404: { name: "NotFound", description: "No such endpoint (`Endpoint not found`; a path id that is not a number), or no organization at this host.", codes: ["BAD_REQUEST", "NONEXISTENT_SUBDOMAIN"] },
  408: { name: "RequestTimeout", description: "The request did not arrive whole in time (`Request timed out`); the connection is closed.", codes: ["BAD_REQUEST"] },
  413: { name: "PayloadTooLarge", description: "The body is larger than the server reads (`Request body too large`), or has more than 10,000 parameters (`Too many parameters`).", codes: ["BAD_REQUEST"] },
  415: { name: "UnsupportedMediaType", description: "A form body in a charset other than UTF-8 or ISO-8859-1 (`Unsupported charset: a form body is UTF-8 or ISO-8859-1`), or compressed otherwise than gzip, deflate or br (`Unsupported Content-Encoding`).", codes: ["BAD_REQUEST"] },
  417: { name: "ExpectationFailed", description: "An Expect header other than `100-continue`.", codes: ["BAD_REQUEST"] },
  429: { name: "RateLimited", description: "Too many requests: wait `retry-after` seconds.", codes: ["RATE_LIMIT_HIT"] },
  431: {
    name: "RequestHeaderFieldsTooLarge",
    description: "The request line and headers exceed 16 KiB (`Request line or headers too large`): a long query string is the usual cause, and its parameters fit in a form body. The connection is closed.",
    codes: ["BAD_REQUEST"],
  },
  500: { name: "InternalServerError", description: "A failure of the server's own; the request may or may not have taken effect.", codes: ["INTERNAL_SERVER_ERROR"] },
  503: { name: "ServiceUnavailable", description: "The database or Redis cannot be reached; try again after Retry-After.", codes: ["SERVICE_UNAVAILABLE"] },
};

function commonResponses(): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.values(COMMON_ERRORS).map(({ name, description, codes }) => [
      name,
      { description: `${description} Codes: ${codes.join(", ")}.`, content: { "application/json": { schema: errorSchema(codes) } } },
    ]),
  );
}

const OTHER_STATUSES: Record<number, string> = {
  403: "Not allowed: the file is not the user's to see, or the user is not the principal's to act for.",
  416: "The requested byte range is outside the file.",
};

/** `/messages/{message_id}` → `MessagesMessageId`. */
function pathWords(path: string): string {
  return path
    .split(/[/{}_-]+/)
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join("");
}

function operationId(contract: Endpoint): string {
  return `${contract.method}${contract.root ? "File" : ""}${pathWords(contract.path)}`;
}

interface Described {
  name: string;
  required: boolean;
  schema: JsonSchema;
  json: boolean;
  description?: string;
}

function describedParams(contract: Endpoint): Described[] {
  const out: Described[] = Object.entries(contract.params).map(([name, param]: [string, Param<unknown>]) => ({
    name,
    required: param.required,
    schema: param.schema(),
    json: param.doc.json,
    description: param.doc.description,
  }));
  for (const [name, other] of Object.entries(contract.otherParams ?? {})) out.push({ name, required: false, schema: { ...other.schema, description: other.description }, json: false, description: other.description });
  return out;
}

function pathParameters(contract: Endpoint): JsonSchema[] {
  const names = [...contract.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
  return names.map((name) => {
    const doc = contract.pathParams?.[name];
    return {
      name,
      in: "path",
      required: true,
      schema: doc?.schema ?? { type: "integer", minimum: 0, maximum: 2147483647 },
      ...(doc?.description ? { description: doc.description } : {}),
      // OpenAPI has no parameter for several segments; this one takes the rest of the path.
      ...(doc?.rest ? { "x-rest-of-path": true } : {}),
    };
  });
}

function queryParameter(param: Described): JsonSchema {
  const { schema, json, name, required } = param;
  const description = schema.description as string | undefined;
  const bare = { ...schema };
  delete bare.description;
  return {
    name,
    in: "query",
    required,
    ...(description ? { description } : {}),
    ...(json ? { content: { "application/json": { schema: bare } } } : { schema: bare }),
  };
}

function requestBody(contract: Endpoint, described: Described[]): JsonSchema | undefined {
  if (described.length === 0 && !contract.file) return undefined;
  const properties: Record<string, JsonSchema> = {};
  const encoding: Record<string, JsonSchema> = {};
  for (const param of described) {
    properties[param.name] = param.schema;
    if (param.json) encoding[param.name] = { contentType: "application/json" };
  }
  const required = described.filter((param) => param.required).map((param) => param.name);
  const form = { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: true };
  const formContent = { schema: form, ...(Object.keys(encoding).length ? { encoding } : {}) };
  if (contract.file) {
    const file = contract.file;
    const multipart = {
      schema: { ...form, properties: { ...properties, [file.name]: { type: "string", contentMediaType: "application/octet-stream", description: file.description } }, required: [...required, ...(file.required ? [file.name] : [])] },
      ...(Object.keys(encoding).length ? { encoding } : {}),
    };
    return { required: file.required, content: { "multipart/form-data": multipart } };
  }
  return { required: required.length > 0, content: { "application/x-www-form-urlencoded": formContent, "multipart/form-data": formContent } };
}

function security(contract: Endpoint): JsonSchema[] {
  switch (contract.auth) {
    case "basic":
      return [{ basicAuth: [] }];
    case "basic-or-api-key":
      return [{ basicAuth: [] }, { apiKeyParameter: [] }];
    case "basic-or-spectator":
      // The empty requirement: no credentials at all (a spectator's request).
      return [{ basicAuth: [] }, {}];
    default:
      return [];
  }
}

/** The Error shape with `code` one of `codes` (or none, for `Invalid API key`). */
function errorSchema(codes: Iterable<string>): JsonSchema {
  return { allOf: [{ $ref: "#/components/schemas/Error" }, { properties: { code: { enum: [...new Set(codes)] } } }] };
}

/** An HTML page, as a page endpoint answers. */
const HTML_CONTENT = { "text/html": { schema: { type: "string", contentMediaType: "text/html" } } };

function errorResponses(contract: Endpoint): OpenApiOperation["responses"] {
  const responses: OpenApiOperation["responses"] = {};
  const statuses = [...Object.keys(COMMON_ERRORS).map(Number), ...(contract.errorStatuses ?? [])].sort((a, b) => a - b);
  const html = new Set(contract.htmlStatuses ?? []);
  for (const status of statuses) {
    const common = COMMON_ERRORS[status];
    // What every endpoint answers alike is written once (components.responses); a page's own refusal may also be HTML.
    if (common && status !== 400 && html.has(status)) {
      responses[String(status)] = {
        description: `${common.description} Codes: ${common.codes.join(", ")}. Or a page saying why, in HTML.`,
        content: { "application/json": { schema: errorSchema(common.codes) }, ...HTML_CONTENT },
      };
      continue;
    }
    if (common && status !== 400) {
      responses[String(status)] = { $ref: `#/components/responses/${common.name}` } as never;
      continue;
    }
    const codes = status === 400 ? [...common.codes, ...(contract.errors ?? [])] : status === 403 ? ["BAD_REQUEST", ...(contract.errors ?? []).filter((code) => code === "UNAUTHORIZED_PRINCIPAL")] : ["BAD_REQUEST"];
    const description = `${common?.description ?? OTHER_STATUSES[status] ?? "An error."} Codes: ${[...new Set(codes)].join(", ")}.`;
    responses[String(status)] = {
      description: html.has(status) ? `${description} Or a page saying why, in HTML.` : description,
      content: { "application/json": { schema: errorSchema(codes) }, ...(html.has(status) ? HTML_CONTENT : {}) },
    };
  }
  return responses;
}

/**
 * A success body's schema admitting `ignored_parameters_unsupported`, which any success may carry
 * (ignored-parameters.ts): added to every object shape whose `result` is "success".
 */
function withIgnoredParameters(shape: JsonSchema): JsonSchema {
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = shape[key];
    if (Array.isArray(options)) return { ...shape, [key]: options.map((option: JsonSchema) => withIgnoredParameters(option)) };
  }
  const properties = shape.properties as Record<string, JsonSchema> | undefined;
  if (properties?.result?.const !== "success") return shape;
  return { ...shape, properties: { ...properties, ignored_parameters_unsupported: IGNORED_PARAMETERS_SCHEMA } };
}

function operation(contract: Endpoint): OpenApiOperation {
  const described = describedParams(contract);
  const inQuery = contract.method === "get";
  const parameters = [...pathParameters(contract), ...(inQuery ? described.map(queryParameter) : [])];
  const body = inQuery ? undefined : requestBody(contract, described);
  const success =
    "binary" in contract.response
      ? { description: "The file's bytes.", content: Object.fromEntries((contract.response.binary as string[]).map((type) => [type, { schema: { type: "string", contentMediaType: type } }])) }
      : "html" in contract.response && typeof contract.response.html === "string"
        ? { description: contract.response.html, content: HTML_CONTENT }
        : { description: "Success.", content: { "application/json": { schema: withIgnoredParameters(contract.response) } } };
  const responses: OpenApiOperation["responses"] = { [String(contract.successStatus ?? 200)]: success };
  // A download that answers ranges (416 past the end) answers one range with 206 and its bytes.
  if ("binary" in contract.response && contract.errorStatuses?.includes(416)) responses["206"] = { ...success, description: "The requested byte range of the file." };
  for (const [status, description] of Object.entries(contract.redirects ?? {})) {
    responses[status] = { description, headers: { Location: { description: "Where to go instead.", schema: { type: "string" } } } };
  }
  return {
    operationId: operationId(contract),
    summary: contract.summary,
    ...(contract.description ? { description: contract.description } : {}),
    tags: [contract.tag],
    security: security(contract),
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { ...responses, ...errorResponses(contract) },
  };
}

/**
 * The refusals an OPTIONS request may meet (http-options.ts answers it before authentication,
 * rate limits, the body parser and the database): a path it cannot decode, no such path, Node's own.
 */
const OPTIONS_ERRORS = [400, 404, 408, 417, 431, 500];

/** OPTIONS at `path` (served path), as every path answers it; its tags and path parameters are `other`'s, an operation at the path. */
function optionsOperation(path: string, other: OpenApiOperation): OpenApiOperation {
  const parameters = ((other.parameters ?? []) as JsonSchema[]).filter((param) => param.in === "path");
  const errors = Object.fromEntries(OPTIONS_ERRORS.map((status) => [String(status), { $ref: `#/components/responses/${COMMON_ERRORS[status].name}` } as never]));
  return {
    operationId: `options${pathWords(path)}`,
    summary: "The methods this path serves",
    description: "Zulip's answer: no body, the methods in the Allow header. No credentials needed; no CORS header is given.",
    tags: other.tags,
    security: [],
    ...(parameters.length ? { parameters } : {}),
    responses: {
      "204": {
        description: "No content.",
        headers: { Allow: { description: "The methods this path serves, sorted, HEAD wherever GET is (`GET, HEAD, POST`).", schema: { type: "string" } } },
      },
      ...errors,
    },
  };
}

export interface ApiDocumentParts {
  endpoints: Endpoint[];
  /** Shared shapes, referred to as `#/components/schemas/<name>`. */
  schemas: Record<string, JsonSchema>;
  /** The release whose API this is (`info.version`). */
  version: string;
}

/** The path a contract is served at: under /api/v1 unless it is a file's. */
export function servedPath(contract: Pick<Endpoint, "path" | "root">): string {
  return contract.root ? contract.path : `/api/v1${contract.path}`;
}

/**
 * The OpenAPI 3.1 document of `endpoints`. Paths are written whole (`/api/v1/messages`), since
 * downloads are served outside /api/v1 at paths the API also has (`/user_uploads/{realm_id}/...`).
 */
export function openApiDocument(parts: ApiDocumentParts): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const contract of parts.endpoints) {
    const path = servedPath(contract);
    const item = (paths[path] ??= {});
    if (item[contract.method]) throw new Error(`two contracts for ${endpointKey(contract.method, path)}`);
    item[contract.method] = operation(contract);
  }
  for (const [path, item] of Object.entries(paths)) item.options = optionsOperation(path, Object.values(item)[0]);
  return {
    openapi: "3.1.0",
    info: {
      title: "Team chat REST API",
      version: parts.version,
      description:
        "A Zulip-compatible chat server's REST API, under /api/v1 (files are served at the root). Parameters may come in the query string or in a form body (urlencoded or multipart; the body wins); strings are sent as they are, every other value (integers, booleans, lists, dicts) as JSON. Every JSON response has `result` and `msg`; errors add a `code`.",
    },
    servers: [{ url: "/" }],
    security: [{ basicAuth: [] }],
    paths,
    components: {
      // A shared shape that is a whole success body (OwnUser, RegisterResponse) may list them too.
      schemas: { Error: ERROR_SCHEMA, ...Object.fromEntries(Object.entries(parts.schemas).map(([name, shape]) => [name, withIgnoredParameters(shape)])) },
      responses: commonResponses(),
      securitySchemes: {
        basicAuth: { type: "http", scheme: "basic", description: "The user's email address and API key (POST /api/v1/fetch_api_key)." },
        apiKeyParameter: { type: "apiKey", in: "query", name: "api_key", description: "File downloads only: the API key as a parameter, for clients that cannot set headers on a link." },
      },
    },
  };
}

/**
 * The operation a request path names (`/api/v1/messages/12` → `/api/v1/messages/{message_id}`),
 * or undefined. A path named literally wins over a template (`/users/me` over `/users/{user_id}`);
 * a parameter marked `x-rest-of-path` takes the remaining segments.
 */
export function matchOperation(document: OpenApiDocument, method: string, path: string): { path: string; operation: OpenApiOperation } | undefined {
  const segments = path.split("/");
  let best: { path: string; operation: OpenApiOperation; literal: number } | undefined;
  for (const [template, item] of Object.entries(document.paths)) {
    const operation = item[method.toLowerCase()];
    if (!operation) continue;
    const rest = new Set(((operation.parameters ?? []) as JsonSchema[]).filter((param) => param["x-rest-of-path"]).map((param) => `{${param.name as string}}`));
    const parts = template.split("/");
    const takesRest = rest.has(parts[parts.length - 1]);
    if (takesRest ? segments.length < parts.length : segments.length !== parts.length) continue;
    let literal = 0;
    let matches = true;
    for (let i = 0; i < parts.length && matches; i++) {
      if (/^\{\w+\}$/.test(parts[i])) matches = segments[i] !== "";
      else if (parts[i] === segments[i]) literal++;
      else matches = false;
    }
    if (matches && (!best || literal > best.literal)) best = { path: template, operation, literal };
  }
  return best && { path: best.path, operation: best.operation };
}
