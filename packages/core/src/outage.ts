// Which failures mean "Postgres or Redis cannot be reached right now", as opposed to a bug or a
// bad request. The one place that knows how pg, Prisma's adapter and ioredis report them; the HTTP
// tiers answer these with 503 and a Retry-After, and background loops log them once per outage.
import { ServiceUnavailableError } from "./errors.ts";

/** What a 503 asks the client to wait: our reconnects retry every second, an outage lasts longer. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** Socket errors of a connection that could not be made or was lost. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/**
 * SQLSTATEs of a server that is going away or not there yet: class 08 (connection exception),
 * 57P01 admin shutdown (`pg_ctl stop -m fast`), 57P02 crash shutdown, 57P03 cannot connect now
 * (starting up, recovering), 53300 too many connections.
 */
const POSTGRES_CODE = /^(08...|57P0[123]|53300)$/;
/**
 * Prisma's: can't reach (P1001), timed out (P1002, P1008), closed (P1017), no pooled connection
 * (P2024), a transaction that outlived its timeout (P2028: the database is too busy to finish it).
 */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2028"]);
/** What @prisma/adapter-pg makes of the socket and SQLSTATE errors above. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
/** Errors that carry no code: pg's pool and client, and ioredis (commandTimeout, offline queue, closed). */
const MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Command timed out$/,
  /^Connection is closed\.$/,
  /^Stream isn't writeable/,
  /^Reached the max retries per request limit/,
];
const NAMES = new Set(["MaxRetriesPerRequestError"]);

/**
 * Whether `error` says a backing service is unreachable. Prisma wraps the driver's error (in
 * `meta.driverAdapterError`, then `cause`), so the wrappers are searched a few levels deep.
 */
export function isOutageError(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 4) return false;
  const { code, kind, name, message, cause, meta } = error as Record<string, unknown>;
  if (typeof code === "string" && (SOCKET_CODES.has(code) || POSTGRES_CODE.test(code) || PRISMA_CODES.has(code))) return true;
  if (typeof kind === "string" && ADAPTER_KINDS.has(kind)) return true;
  if (typeof name === "string" && NAMES.has(name)) return true;
  if (typeof message === "string" && MESSAGES.some((pattern) => pattern.test(message))) return true;
  const driverAdapterError = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>).driverAdapterError : undefined;
  return isOutageError(cause, depth + 1) || isOutageError(driverAdapterError, depth + 1);
}

/** The client's answer to an outage error, or null for any other error. */
export function serviceUnavailableFor(error: unknown): ServiceUnavailableError | null {
  return isOutageError(error) ? new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS) : null;
}
