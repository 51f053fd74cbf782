// Authentication for long polls. When a message reaches a big stream every poll is answered at
// once and comes back at once: a thousand polls authenticating with a query each cost more than
// all the rest of their work (measured: about 100 µs of the events process's CPU per poll). So
// this node keeps a copy of each user it authenticated (actor-cache.ts) and checks the copies of
// the polls arriving together in one statement: still every poll is answered only as a user who
// matches the database at that moment (a deactivation, a new API key or a changed realm fails it).
import { authenticateApiKeyVersioned, checkActorVersions, type Actor, type ActorCache, type ActorVersion } from "@chat/core";
import type { PrismaClient } from "@chat/db";
import { cachedActorFor, parseBasic, requestSubdomain } from "@chat/http";
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

export class PollAuthenticator {
  private pending: Array<{ version: ActorVersion; resolve: (valid: boolean) => void; reject: (error: unknown) => void }> = [];
  /** A statement is running; checks gathered meanwhile go in the next. */
  private checking = false;
  private readonly logins = pLimit(MAX_CONCURRENT_LOGINS);

  constructor(
    private readonly prisma: PrismaClient,
    private readonly actors: ActorCache,
    private readonly externalHost: string,
  ) {}

  /**
   * The user the request's HTTP Basic names, if they are who they were; undefined for a request
   * the ordinary route must answer (no credentials, wrong ones, a deactivated user: its errors).
   */
  async authenticate(req: IncomingMessage): Promise<Actor | undefined> {
    const copy = cachedActorFor({ externalHost: this.externalHost, actors: this.actors }, req);
    if (copy && (await this.check(copy.version))) return copy.actor;
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) return undefined;
    const subdomain = requestSubdomain(req, this.externalHost);
    try {
      const { actor, version } = await this.logins(() => authenticateApiKeyVersioned(this.prisma, subdomain, credentials.email, credentials.apiKey));
      this.actors.set(subdomain, credentials.email, credentials.apiKey, actor, version);
      return actor;
    } catch {
      return undefined;
    }
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
      parts.push(
        checkActorVersions(this.prisma, part.map((p) => p.version)).then(
          (valid) => part.forEach((p, j) => p.resolve(valid[j] === true)),
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
