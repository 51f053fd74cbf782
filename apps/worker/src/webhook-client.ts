// The HTTP client outgoing webhooks POST with. The URL comes from a bot's owner, so it may point
// anywhere: this client refuses destinations inside the server's network (loopback, private,
// link-local incl. cloud metadata, …) unless the operator allowed them. The check runs on the
// addresses a connection is actually made to (a `lookup` given to every new connection), so a
// name that resolves to a public address when asked once and to an internal one later (DNS
// rebinding) gains nothing. Redirects are never followed, and time and response size are bounded.
//
// The transport is undici (Node's own fetch is built on it) through its lowest-level API,
// `dispatch`: measured against a bare `http.request` client posting the same bodies to the same
// receiver, undici's took about two thirds of the CPU per post, and the posts are most of what a
// worker does.
import dns from "node:dns";
import http from "node:http";
import net from "node:net";
import ipaddr from "ipaddr.js";
import type { Agent, Dispatcher } from "undici";

export interface WebhookClientOptions {
  /** The whole request: connect, send, response headers and body. */
  timeoutMs: number;
  /** A larger response (declared by Content-Length or as it arrives) fails with "too-large". */
  maxResponseBytes: number;
  /** Hostnames (matched against the URL's), IPs and CIDRs (matched against the addresses connected to) allowed even if internal. */
  allowedHosts: readonly string[];
  /** Development: loopback addresses allowed (only loopback). */
  allowLoopback: boolean;
  userAgent?: string;
}

export const DEFAULT_WEBHOOK_CLIENT_OPTIONS: Readonly<WebhookClientOptions> = Object.freeze({
  timeoutMs: 10_000,
  maxResponseBytes: 1024 * 1024,
  allowedHosts: [],
  allowLoopback: false,
});

/** Longer URLs are refused ("bad-url"); common servers and proxies stop at 8 KiB of request line. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface WebhookRequestBody {
  contentType: string;
  data: string | Buffer;
}

export interface WebhookResponse {
  status: number;
  body: Buffer;
  contentType: string | undefined;
}

/** `not-found`: the host name does not exist (a DNS server's failure to answer is a `connection` error). */
export type WebhookRequestErrorKind = "timeout" | "connection" | "not-found" | "refused-address" | "too-large" | "bad-url" | "other";

/**
 * Why a post failed. The message names the URL's host but nothing internal (no resolved address),
 * so it may be shown to the bot's owner; `cause`, when set, is the underlying error, for logs.
 */
export class WebhookRequestError extends Error {
  override name = "WebhookRequestError";
  constructor(
    readonly kind: WebhookRequestErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Sockets to one origin; a worker posting faster than this queues in the agent. */
const MAX_SOCKETS_PER_HOST = 64;
/**
 * An idle keep-alive socket is closed after this long, before the 5 s of Node's and Apache's
 * server defaults, so a socket is rarely reused just as the server closes it. A server's
 * `Keep-Alive: timeout=N` shortens it (undici reads the hint). Before reusing an idle socket,
 * undici lets the event loop take in a close the server already sent, so such a socket is
 * replaced rather than written to.
 */
const FREE_SOCKET_TIMEOUT_MS = 4000;
/** Parsed URLs kept, by URL string: bots post to a few URLs over and over. */
const TARGET_CACHE_SIZE = 1000;
/** IPv6 global unicast (RFC 4291): anything outside it that ipaddr.js calls "unicast" (IPv4-compatible ::a.b.c.d, unassigned space) is refused. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Which destinations may be connected to. Only addresses ipaddr.js classifies as plain unicast
 * pass (IPv6: within 2000::/3), so every special range it knows is refused: loopback, private,
 * unique-local, link-local, unspecified, multicast, broadcast, carrier-grade NAT, reserved,
 * documentation, benchmarking and the rest. An IPv4-mapped IPv6 address is judged as the IPv4
 * address it is; the translation forms that embed an IPv4 address (IPv4-translated, NAT64
 * 64:ff9b::/96, 6to4) pass only if the embedded address does. Teredo and local-use NAT64 are
 * refused outright: a server has no business reaching a webhook through either.
 */
export class DestinationPolicy {
  private readonly hostnames = new Set<string>();
  private readonly ranges: [Address, number][] = [];

  constructor(allowedHosts: readonly string[], private readonly allowLoopback: boolean) {
    for (const raw of allowedHosts) {
      const entry = raw.trim();
      if (entry === "") continue;
      const range = parseAddressOrRange(entry);
      if (range) {
        this.ranges.push(range);
        continue;
      }
      const hostname = normalizeHostname(entry);
      if (hostname === null) throw new Error(`invalid entry in the outgoing webhook allowed hosts: ${JSON.stringify(raw)}`);
      const asAddress = parseAddressOrRange(hostname); // "127.1" is written 127.0.0.1 in a URL
      if (asAddress) this.ranges.push(asAddress);
      else this.hostnames.add(hostname);
    }
  }

  /** `hostname` as the URL gives it (lower case, IDN as punycode). */
  allowsHostname(hostname: string): boolean {
    return this.hostnames.size > 0 && this.hostnames.has(stripTrailingDot(hostname));
  }

  allowsAddress(text: string): boolean {
    let address: Address;
    try {
      address = ipaddr.parse(text);
    } catch {
      return false;
    }
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      address = (address as ipaddr.IPv6).toIPv4Address();
    }
    for (const [network, bits] of this.ranges) {
      if (network.kind() === address.kind() && address.match(network, bits)) return true;
    }
    const range: string = address.range();
    if (range === "loopback") return this.allowLoopback;
    if (address.kind() === "ipv4") return range === "unicast";
    const v6 = address as ipaddr.IPv6;
    if (range === "unicast") return v6.match(IPV6_GLOBAL_UNICAST);
    const embedded = embeddedIPv4(v6, range);
    return embedded !== null && embedded.range() === "unicast";
  }
}

function embeddedIPv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (range) {
    case "rfc6145": // ::ffff:0:a.b.c.d
      return v4(p[6], p[7]);
    case "rfc6052": // 64:ff9b::a.b.c.d; the local-use 64:ff9b:1::/48 is refused
      return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? v4(p[6], p[7]) : null;
    case "6to4": // 2002:aabb:ccdd::/48
      return v4(p[1], p[2]);
    default:
      return null;
  }
}

/** An IP or a CIDR, strictly written (no "10" for 10.0.0.0), as a network and prefix length. */
function parseAddressOrRange(entry: string): [Address, number] | null {
  const unbracketed = entry.startsWith("[") && entry.endsWith("]") ? entry.slice(1, -1) : entry;
  const slash = unbracketed.indexOf("/");
  const ip = slash === -1 ? unbracketed : unbracketed.slice(0, slash);
  if (net.isIP(ip) === 0) return null;
  let address: Address = ipaddr.parse(ip);
  let bits = address.kind() === "ipv4" ? 32 : 128;
  if (slash !== -1) {
    const prefix = unbracketed.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return null;
    bits = Number(prefix);
  }
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    address = (address as ipaddr.IPv6).toIPv4Address();
    bits -= 96;
  }
  return [address, bits];
}

/** A hostname as a URL would write it, or null if `entry` is not a bare hostname. */
function normalizeHostname(entry: string): string | null {
  if (/[\s/\\?#@:[\]%]/.test(entry)) return null;
  try {
    return stripTrailingDot(new URL(`http://${entry}/`).hostname) || null;
  } catch {
    return null;
  }
}

function stripTrailingDot(hostname: string): string {
  return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
}

/** What a URL string resolves to before any connection; safe to cache, as it depends on nothing but the string and the options. */
interface Target {
  /** host[:port] as in the URL, for messages. */
  host: string;
  /** scheme://host[:port], the connection pool's key. */
  origin: string;
  /** The path and query. */
  path: string;
  /** A literal IP the policy refuses (no lookup would run for it). */
  refused: boolean;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * POSTs a body to a URL and returns the response, or fails with a `WebhookRequestError`. Keeps
 * connections alive per host; `close()` destroys them.
 */
export class WebhookClient {
  private readonly options: WebhookClientOptions;
  private readonly policy: DestinationPolicy;
  private readonly userAgent: string;
  /** Made with the first post: undici is loaded only by a worker that has a webhook to call. */
  private agentInstance: Agent | null = null;
  private readonly targets = new Map<string, Target>();
  private closed = false;

  constructor(options: Partial<WebhookClientOptions> = {}) {
    this.options = { ...DEFAULT_WEBHOOK_CLIENT_OPTIONS, ...options };
    this.policy = new DestinationPolicy(this.options.allowedHosts, this.options.allowLoopback);
    this.userAgent = this.options.userAgent ?? "ZulipOutgoingWebhook";
    http.validateHeaderValue("User-Agent", this.userAgent);
  }

  private get agent(): Agent {
    if (this.agentInstance) return this.agentInstance;
    // The client's own agent, given no proxy: every new connection (http or https) resolves its
    // host through `lookup`, which refuses internal addresses. Undici's own timeouts are set to
    // the whole request's, which a timer of this client's enforces (they restart per phase).
    const { timeoutMs } = this.options;
    const { Agent } = require("undici") as typeof import("undici");
    this.agentInstance = new Agent({
      connections: MAX_SOCKETS_PER_HOST,
      keepAliveTimeout: FREE_SOCKET_TIMEOUT_MS,
      keepAliveMaxTimeout: FREE_SOCKET_TIMEOUT_MS,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: { lookup: this.lookup, timeout: timeoutMs },
    });
    return this.agentInstance;
  }

  post(url: string, body: WebhookRequestBody): Promise<WebhookResponse> {
    if (this.closed) return Promise.reject(new WebhookRequestError("other", "the webhook client is closed"));
    let target: Target;
    try {
      target = this.target(url);
      http.validateHeaderValue("Content-Type", body.contentType);
    } catch (error) {
      return Promise.reject(error instanceof WebhookRequestError ? error : new WebhookRequestError("other", "invalid Content-Type", { cause: error }));
    }
    if (target.refused) return Promise.reject(refusedError(target.host));
    // Undici adds Host, Content-Length (from the body) and Connection.
    const headers = { "content-type": body.contentType, "user-agent": this.userAgent };
    return new Promise((resolve, reject) => {
      const post = new Post(target.host, this.options, resolve, reject);
      try {
        this.agent.dispatch({ origin: target.origin, path: target.path, method: "POST", headers, body: body.data }, post);
      } catch (error) {
        post.fail(requestError(error as Error, target.host));
      }
    });
  }

  /** Destroys every socket, idle or in use; posts after this fail. */
  close(): void {
    this.closed = true;
    this.agentInstance?.destroy().catch(() => undefined);
  }

  /** Parses and checks a URL, once per URL string (bounded cache). */
  private target(url: string): Target {
    let target = this.targets.get(url);
    if (target) return target;
    target = parseTarget(url, this.policy);
    if (this.targets.size >= TARGET_CACHE_SIZE) this.targets.delete(this.targets.keys().next().value!);
    this.targets.set(url, target);
    return target;
  }

  /**
   * Resolves a host for a new connection, refusing it if ANY of its addresses is refused rather
   * than connecting only to the allowed ones: a public name has no reason to resolve to an
   * internal address, a name that mixes both is the usual shape of a rebinding attempt, and the
   * outcome then does not depend on which address the connection happens to try first. The
   * address check runs on every new connection; only reused keep-alive sockets skip it, and they
   * are connected to an address already checked.
   */
  private readonly lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { family: options.family ?? 0, hints: options.hints, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      if (addresses.length === 0) {
        return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "");
      }
      if (!this.policy.allowsHostname(hostname) && !addresses.every((a) => this.policy.allowsAddress(a.address))) {
        return callback(new WebhookRequestError("refused-address", "refused by lookup"), ""); // named with the port in requestError
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

function parseTarget(url: string, policy: DestinationPolicy): Target {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) throw new WebhookRequestError("bad-url", `the URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookRequestError("bad-url", "the URL is not valid");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new WebhookRequestError("bad-url", "the URL must be http or https");
  if (parsed.username !== "" || parsed.password !== "") throw new WebhookRequestError("bad-url", "the URL must not hold credentials");
  // net connects to a literal IP without a lookup, so it is checked here, once: it cannot change.
  const hostname = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const literal = net.isIP(hostname) !== 0;
  return {
    host: parsed.host,
    origin: parsed.origin,
    path: parsed.pathname + parsed.search,
    refused: literal && !policy.allowsAddress(hostname),
  };
}

/**
 * One post as undici's dispatch handler: collects the response within the size limit and settles
 * once, on the response's end, an error, or the whole request's timer.
 */
class Post implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private settled: WebhookRequestError | true | null = null;
  private readonly timer: NodeJS.Timeout;
  private status = 0;
  private contentType: string | undefined;
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly host: string,
    private readonly options: WebhookClientOptions,
    private readonly resolve: (response: WebhookResponse) => void,
    private readonly reject: (error: WebhookRequestError) => void,
  ) {
    this.timer = setTimeout(() => this.fail(new WebhookRequestError("timeout", `${host} did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Failed (timed out) while it waited for a socket: it goes no further.
    if (this.settled instanceof WebhookRequestError) controller.abort(this.settled);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // 1xx: the response is still to come
    const declared = headers["content-length"];
    if (declared !== undefined && Number(declared) > this.options.maxResponseBytes) {
      this.fail(tooLargeError(this.host, this.options.maxResponseBytes));
      return;
    }
    this.status = statusCode;
    const type = headers["content-type"];
    this.contentType = Array.isArray(type) ? type[0] : type;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.options.maxResponseBytes) this.fail(tooLargeError(this.host, this.options.maxResponseBytes));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.resolve({ status: this.status, body, contentType: this.contentType });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(requestError(error, this.host));
  }

  /** Settles with `error` and stops the request (its socket is closed if it was under way). */
  fail(error: WebhookRequestError): void {
    if (this.settled) return;
    this.settled = error;
    clearTimeout(this.timer);
    this.chunks = [];
    if (this.controller && !this.controller.aborted) this.controller.abort(error);
    this.reject(error);
  }
}

function refusedError(host: string): WebhookRequestError {
  return new WebhookRequestError("refused-address", `the destination ${host} is not allowed`);
}

function tooLargeError(host: string, limit: number): WebhookRequestError {
  return new WebhookRequestError("too-large", `the response from ${host} is larger than ${limit} bytes`);
}

/** Undici's codes for its phase timeouts (connect, headers, body). */
const UNDICI_TIMEOUTS = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

const CONNECTION_ERRORS: Record<string, string> = {
  // Undici's: the connection closed under the request, or the client was closed.
  UND_ERR_SOCKET: "closed the connection",
  UND_ERR_CLOSED: "closed the connection",
  UND_ERR_DESTROYED: "closed the connection",
  ECONNREFUSED: "refused the connection",
  ECONNRESET: "closed the connection",
  EPIPE: "closed the connection",
  ECONNABORTED: "closed the connection",
  EHOSTUNREACH: "is unreachable",
  ENETUNREACH: "is unreachable",
  EAI_AGAIN: "was not found",
};

/** The resolver's answers that the name does not exist (or has no address): the same again later. */
const NOT_FOUND_ERRORS = new Set(["ENOTFOUND", "EAI_NODATA", "EAI_NONAME"]);

/** Node's error as one of ours; the message holds the URL's host and a phrase, never the original text (it may name an address). */
function requestError(error: Error, host: string): WebhookRequestError {
  if (error instanceof WebhookRequestError) return error.kind === "refused-address" ? refusedError(host) : error;
  const code = (error as NodeJS.ErrnoException).code ?? "";
  if (code === "ETIMEDOUT" || UNDICI_TIMEOUTS.has(code)) return new WebhookRequestError("timeout", `${host} did not answer in time`, { cause: error });
  if (NOT_FOUND_ERRORS.has(code)) return new WebhookRequestError("not-found", `${host} was not found`, { cause: error });
  const phrase = CONNECTION_ERRORS[code];
  if (phrase) return new WebhookRequestError("connection", `${host} ${phrase}`, { cause: error });
  if (/CERT|SSL|TLS/.test(code)) return new WebhookRequestError("connection", `the TLS connection to ${host} failed`, { cause: error });
  if (code.startsWith("HPE_")) return new WebhookRequestError("other", `${host} sent an invalid HTTP response`, { cause: error });
  return new WebhookRequestError("other", `the request to ${host} failed`, { cause: error });
}
