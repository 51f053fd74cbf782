// Every failure a client can cause is one of these: a stable code, an HTTP status, a message in
// Zulip's words, and any extra fields the contract names. Nothing else reaches a client.

export class JsonableError extends Error {
  readonly code: string | null;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  /** HTTP headers the response carries besides the body (Retry-After). */
  readonly headers: Record<string, string>;

  constructor(msg: string, options: { code?: string | null; status?: number; extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(msg);
    this.code = options.code === undefined ? "BAD_REQUEST" : options.code;
    this.status = options.status ?? 400;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  toJSON(): Record<string, unknown> {
    const body: Record<string, unknown> = { result: "error", msg: this.message, ...this.extra };
    if (this.code !== null) body.code = this.code;
    return body;
  }
}

/** Zulip's IncompatibleParametersError: parameters that cannot be sent together, named in `parameters`. */
export class IncompatibleParametersError extends JsonableError {
  constructor(parameters: string[]) {
    const names = parameters.join(", ");
    super(`Unsupported parameter combination: ${names}`, { extra: { parameters: names } });
  }
}

export class MissingArgumentError extends JsonableError {
  constructor(varName: string) {
    super(`Missing '${varName}' argument`, { code: "REQUEST_VARIABLE_MISSING", extra: { var_name: varName } });
  }
}

export class InvalidArgumentError extends JsonableError {
  constructor(msg: string, varName: string) {
    super(msg, { code: "BAD_REQUEST", extra: { var_name: varName } });
  }
}

export class NotLoggedInError extends JsonableError {
  constructor() {
    super("Not logged in: API authentication or user session required", { code: "UNAUTHORIZED", status: 401 });
  }
}

/** The contract gives `Invalid API key` no code. */
export class InvalidApiKeyError extends JsonableError {
  constructor() {
    super("Invalid API key", { code: null, status: 401 });
  }
}

export class UserDeactivatedError extends JsonableError {
  constructor() {
    super("Account is deactivated", { code: "USER_DEACTIVATED", status: 401 });
  }
}

export class RealmDeactivatedError extends JsonableError {
  constructor() {
    super("This organization has been deactivated", { code: "REALM_DEACTIVATED", status: 401 });
  }
}

export class NonexistentSubdomainError extends JsonableError {
  constructor() {
    super("There is no Zulip organization hosted at this subdomain.", { code: "NONEXISTENT_SUBDOMAIN", status: 404 });
  }
}

export class AuthenticationFailedError extends JsonableError {
  constructor() {
    super("Your username or password is incorrect", { code: "AUTHENTICATION_FAILED", status: 401 });
  }
}

/** Zulip's RateLimitedError: `retry-after` in the body as well as the header, in seconds. */
export class RateLimitedError extends JsonableError {
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number) {
    // HTTP wants whole seconds; the body keeps Zulip's fraction.
    super("API usage exceeded rate limit", {
      code: "RATE_LIMIT_HIT",
      status: 429,
      extra: { "retry-after": retryAfterSeconds },
      headers: { "Retry-After": String(Math.ceil(retryAfterSeconds)) },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class StreamDoesNotExistError extends JsonableError {
  constructor(stream: string) {
    super(`Stream '${stream}' does not exist`, { code: "STREAM_DOES_NOT_EXIST", extra: { stream } });
  }
}

export class BadEventQueueIdError extends JsonableError {
  // Zulip 3.x's wording: zulip-terminal registers a new queue only for a message starting "Bad event queue id:".
  constructor(queueId: string) {
    super(`Bad event queue id: ${queueId}`, { code: "BAD_EVENT_QUEUE_ID", extra: { queue_id: queueId } });
  }
}

export class AdministratorRequiredError extends JsonableError {
  constructor() {
    super("Must be an organization administrator", { code: "UNAUTHORIZED_PRINCIPAL" });
  }
}

export class OwnerRequiredError extends JsonableError {
  constructor() {
    super("Must be an organization owner", { code: "UNAUTHORIZED_PRINCIPAL" });
  }
}

/** Postgres or Redis cannot be reached: nothing the client did, so a 5xx, and worth trying again soon. */
export class ServiceUnavailableError extends JsonableError {
  constructor(retryAfterSeconds: number) {
    super("Service temporarily unavailable", { code: "SERVICE_UNAVAILABLE", status: 503, headers: { "Retry-After": String(retryAfterSeconds) } });
  }
}

/** Plain 400 BAD_REQUEST with a contract message, the most common failure. */
export function badRequest(msg: string): JsonableError {
  return new JsonableError(msg);
}
