// Authentication for long polls. When a message reaches a big stream every poll is answered at
// once and comes back at once: a thousand polls authenticating with a query each cost more than
// all the rest of their work (measured: about 100 µs of the events process's CPU per poll). So
// this node keeps a copy of each user it authenticated (actor-cache.ts). A copy that a statement
// found current is trusted with no statement at all until Postgres notifies that its user or realm
// row changed (actor-validity.ts): that is the common case, answered synchronously
// (`authenticateNow`). Any other copy (never checked, or its rows changed, or the notifications'
// connection is down, or the embedded database, which has none) is checked with the copies of the
// polls arriving together in one statement. So a poll is answered only as a user who matches the
// database, but for the milliseconds between a commit and its notification's arrival.
import {
  authenticateApiKeyVersioned,
  checkActorVersions,
  type Actor,
  type ActorCache,
  type ActorValidity,
  type ActorVersion,
  type CheckTicket,
} from "@chat/core";
import type { PrismaClient } from "@chat/db";
import { parseBasic, requestSubdomain } from "@chat/http";
import type { IncomingMessage } from "node:http";
import pLimit from "p-limit";

/** Checks gathered in one turn of the event loop go in one statement, up to this many. */
const MAX_CHECKS_PER_STATEMENT = 1000;
/**
 * Polls of users this node has no copy of, authenticated at once. When thousands of clients come
 * to a node together (another node restarted), they wait here for their turn rather than for a
 * pooled database connection, which answers 503 after 1.5 s.
 */
const MAX_CONCURRENT_LOGINS = 8;
/** Decoded headers kept at most; past this many all are dropped and decoded again on use. */
const MAX_KEPT_CREDENTIALS = 20_000;
/** A connection's last poll's copy is used again, for polls with the same headers, this long at most. */
const CONNECTION_COPY_MS = 60_000;

const CONNECTION_COPY = Symbol("poll copy");

/** The copy a connection's last poll was answered as, kept on its socket. */
interface ConnectionCopy {
  authorization: string;
  host: string | undefined;
  copy: { actor: Actor; version: ActorVersion };
  until: number;
}
type PollSocket = IncomingMessage["socket"] & { [CONNECTION_COPY]?: ConnectionCopy };

/** What polls cost the database (tests and measurements read them). */
export interface PollAuthStats {
  /** Polls answered from a trusted copy, with no statement. */
  trusted: number;
  /** Statements checking copies, and the copies they checked. */
  statements: number;
  checked: number;
  /** Authentications from scratch (no copy, or a copy that failed its check). */
  logins: number;
}

export class PollAuthenticator {
  readonly stats: PollAuthStats = { trusted: 0, statements: 0, checked: 0, logins: 0 };
  private pending: Array<{ version: ActorVersion; resolve: (valid: boolean) => void; reject: (error: unknown) => void }> = [];
  /** A statement is running; checks gathered meanwhile go in the next. */
  private checking = false;
  private readonly logins = pLimit(MAX_CONCURRENT_LOGINS);
  /** Credentials as decoded from a Host and Authorization header pair (a memo, bounded). */
  private readonly credentials = new Map<string, { subdomain: string; email: string; apiKey: string }>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly actors: ActorCache,
    private readonly externalHost: string,
    /** Which copies need no statement (NEVER_VALID: every one does). */
    readonly validity: ActorValidity,
  ) {}

  /**
   * The user the request's HTTP Basic names, at once, if this node holds a copy of them that is
   * trusted (checked, and no change to their rows notified since); undefined otherwise, and the
   * caller then asks `authenticate`, which settles every other case.
   */
  authenticateNow(req: IncomingMessage): Actor | undefined {
    // A client polls again and again on one connection with the same headers: the copy its last
    // poll was answered as is taken from the socket, with no decoding or lookup.
    const socket = req.socket as PollSocket;
    const kept = socket[CONNECTION_COPY];
    const { authorization, host } = req.headers;
    if (kept !== undefined && kept.authorization === authorization && kept.host === host && Date.now() < kept.until) {
      const actor = this.trustedActor(kept.copy);
      if (actor !== undefined) return actor;
    }
    const copy = this.copyOf(req);
    const actor = this.trustedActor(copy);
    if (actor !== undefined && authorization !== undefined) socket[CONNECTION_COPY] = { authorization, host, copy: copy!, until: Date.now() + CONNECTION_COPY_MS };
    return actor;
  }

  /**
   * The user the request's HTTP Basic names, if they are who they were; undefined for a request
   * the ordinary route must answer (no credentials, wrong ones, a deactivated user: its errors).
   */
  async authenticate(req: IncomingMessage): Promise<Actor | undefined> {
    const copy = this.copyOf(req);
    const trusted = this.trustedActor(copy);
    if (trusted !== undefined) return trusted;
    if (copy !== undefined && (await this.check(copy.version))) return copy.actor;
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) return undefined;
    const subdomain = requestSubdomain(req, this.externalHost);
    try {
      let ticket: CheckTicket = -1;
      const { actor, version } = await this.logins(() => {
        this.stats.logins += 1;
        // A login reads the rows as a check does, and its answer is trusted on the same terms.
        ticket = this.validity.checkStarted();
        return authenticateApiKeyVersioned(this.prisma, subdomain, credentials.email, credentials.apiKey);
      });
      this.actors.set(subdomain, credentials.email, credentials.apiKey, actor, version);
      this.validity.confirm(ticket, version);
      return actor;
    } catch {
      return undefined;
    }
  }

  private copyOf(req: IncomingMessage): { actor: Actor; version: ActorVersion } | undefined {
    const { authorization, host } = req.headers;
    if (authorization === undefined) return undefined;
    // A client polls with the same header again and again: its decoding is kept, not redone.
    const key = `${host ?? ""}\n${authorization}`;
    let credentials = this.credentials.get(key);
    if (credentials === undefined) {
      const parsed = parseBasic(authorization);
      if (parsed === null) return undefined;
      if (this.credentials.size >= MAX_KEPT_CREDENTIALS) this.credentials.clear();
      this.credentials.set(key, (credentials = { subdomain: requestSubdomain(req, this.externalHost), ...parsed }));
    }
    return this.actors.get(credentials.subdomain, credentials.email, credentials.apiKey);
  }

  /** The copy's actor if it is trusted (checked, no change to its rows notified since). */
  private trustedActor(copy: { actor: Actor; version: ActorVersion } | undefined): Actor | undefined {
    if (copy === undefined || !this.validity.holds(copy.version)) return undefined;
    this.stats.trusted += 1;
    return copy.actor;
  }

  private check(version: ActorVersion): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ version, resolve, reject });
      if (this.pending.length === 1 && !this.checking) setImmediate(() => this.flush());
    });
  }

  /**
   * Checks what has gathered. One statement at a time: the polls that arrive while it runs wait
   * for the next, so a burst of re-polls (spread over many turns of the event loop as their
   * requests are parsed) costs a few statements rather than one per turn.
   */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.checking = true;
    const parts: Promise<void>[] = [];
    for (let i = 0; i < batch.length; i += MAX_CHECKS_PER_STATEMENT) {
      const part = batch.slice(i, i + MAX_CHECKS_PER_STATEMENT);
      this.stats.statements += 1;
      this.stats.checked += part.length;
      const ticket = this.validity.checkStarted();
      parts.push(
        checkActorVersions(this.prisma, part.map((p) => p.version)).then(
          (valid) =>
            part.forEach((p, j) => {
              if (valid[j] === true) this.validity.confirm(ticket, p.version);
              p.resolve(valid[j] === true);
            }),
          (error: unknown) => part.forEach((p) => p.reject(error)),
        ),
      );
    }
    void Promise.all(parts).then(() => {
      this.checking = false;
      this.flush();
    });
  }
}
