// Which copies of actors (actor-cache.ts) are known, without a statement, to match their rows.
// A copy that a statement found current stays current until its user row or its realm row
// changes, and Postgres says so after every such commit (migration 0019 notifies channel
// actor_rows with `u<id>` or `r<id>`). So a node listening there trusts a checked copy until a
// notification names its user or realm; while it is not listening (connecting, or the connection
// lost) it trusts nothing, and when it listens again it has forgotten everything, since what
// changed meanwhile was never said. The one window left is between a commit and its
// notification's arrival, milliseconds: as Zulip's own user cache in memcached, flushed after the
// save.
//
// A check's answer is the database at its snapshot, taken after the check was sent. A change
// committed after that snapshot is not in the answer, but its notification may arrive before the
// answer does; so a check takes a ticket before it is sent, and its answer is trusted only if no
// notification naming the user or realm has arrived since the ticket (nor a reconnect).
import { EventEmitter } from "node:events";
import type { NotificationHandlers } from "@chat/db";
import type { ActorVersion } from "./actor-cache.ts";

/** The Postgres channel migration 0019's triggers notify. */
export const ACTOR_ROWS_CHANNEL = "actor_rows";

/** Taken before a check is sent; see `ActorValidity.checkStarted`. */
export type CheckTicket = number;

export interface ActorValidity {
  /** Is this copy known to match its user and realm rows, with no statement? */
  holds(version: ActorVersion): boolean;
  /** Call just before sending a statement that reads actors' rows; hand what it returns to `confirm`. */
  checkStarted(): CheckTicket;
  /** The statement begun at `ticket` found `version` current: trust it from now on, if that is still safe. */
  confirm(ticket: CheckTicket, version: ActorVersion): void;
}

/** Nothing is trusted: every copy is checked each time (PGlite, which has no notifications). */
export const NEVER_VALID: ActorValidity = {
  holds: () => false,
  checkStarted: () => -1,
  confirm() {},
};

/** A row notification: `u<user id>` or `r<realm id>`. */
const ROW = /^[ur][0-9]{1,10}$/;
/** How many recent notifications are remembered for checks in flight; an older ticket confirms nothing. */
const RECENT_NOTIFICATIONS = 4096;
/** Trusted copies kept; past this all are forgotten (forgetting is always safe: the next check trusts again). */
const MAX_TRUSTED = 50_000;

/**
 * The notifications of channel actor_rows as they arrive (a NotificationHandlers), and what they
 * leave trusted. Emits "listening", "lost" and "notified" (with the payload) after handling each,
 * so that a test can wait for one.
 */
export class NotifiedActorValidity extends EventEmitter implements ActorValidity, NotificationHandlers {
  private isListening = false;
  /** Counts notifications and reconnects: a ticket is the count when its check was sent. */
  private sequence = 0;
  /** Tickets below this confirm nothing: taken before the last reconnect, or older than `recent` reaches. */
  private floor = 0;
  /** Per `u<id>` / `r<id>`, the sequence of its latest notification, oldest first. */
  private readonly recent = new Map<string, number>();
  private readonly trusted = new Map<number, ActorVersion>();
  private readonly trustedByRealm = new Map<number, Set<number>>();

  holds(version: ActorVersion): boolean {
    if (!this.isListening) return false;
    const trusted = this.trusted.get(version.userId);
    return trusted !== undefined && trusted.userXmin === version.userXmin && trusted.realmXmin === version.realmXmin;
  }

  checkStarted(): CheckTicket {
    return this.isListening ? this.sequence : -1;
  }

  confirm(ticket: CheckTicket, version: ActorVersion): void {
    if (!this.isListening || ticket < this.floor) return;
    if ((this.recent.get(`u${version.userId}`) ?? -1) > ticket || (this.recent.get(`r${version.realmId}`) ?? -1) > ticket) return;
    if (this.trusted.size >= MAX_TRUSTED) this.forget();
    const previous = this.trusted.get(version.userId);
    if (previous !== undefined && previous.realmId !== version.realmId) this.trustedByRealm.get(previous.realmId)?.delete(version.userId);
    this.trusted.set(version.userId, version);
    let users = this.trustedByRealm.get(version.realmId);
    if (users === undefined) this.trustedByRealm.set(version.realmId, (users = new Set()));
    users.add(version.userId);
  }

  listening(): void {
    // Whatever changed while nobody listened was never said.
    this.forget();
    this.sequence += 1;
    this.floor = this.sequence;
    this.recent.clear();
    this.isListening = true;
    this.emit("listening");
  }

  lost(): void {
    this.isListening = false;
    this.forget();
    this.emit("lost");
  }

  notified(payload: string): void {
    this.sequence += 1;
    if (ROW.test(payload)) {
      this.remember(payload);
      const id = Number(payload.slice(1));
      if (payload[0] === "u") this.untrustUser(id);
      else this.untrustRealm(id);
    } else {
      // `*` (a TRUNCATE), or anything this code does not know: every copy may be stale, and every
      // check in flight too.
      this.forget();
      this.floor = this.sequence;
    }
    this.emit("notified", payload);
  }

  /** Notes the latest notification of `key`, for checks in flight; bounded, moving the floor past what it drops. */
  private remember(key: string): void {
    this.recent.delete(key);
    this.recent.set(key, this.sequence);
    if (this.recent.size <= RECENT_NOTIFICATIONS) return;
    for (const [oldestKey, oldest] of this.recent) {
      this.recent.delete(oldestKey);
      // A ticket from before it would miss that key's notification.
      this.floor = Math.max(this.floor, oldest);
      break;
    }
  }

  private untrustUser(userId: number): void {
    const trusted = this.trusted.get(userId);
    if (trusted === undefined) return;
    this.trusted.delete(userId);
    this.trustedByRealm.get(trusted.realmId)?.delete(userId);
  }

  private untrustRealm(realmId: number): void {
    const users = this.trustedByRealm.get(realmId);
    if (users === undefined) return;
    for (const userId of users) this.trusted.delete(userId);
    this.trustedByRealm.delete(realmId);
  }

  private forget(): void {
    this.trusted.clear();
    this.trustedByRealm.clear();
  }
}
