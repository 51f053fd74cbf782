// Each event node's copy of the parts of /register that are the same for every member of a realm,
// serialized once for each way of showing them, valid while the realm rows' generation columns
// they depend on are unchanged. Triggers bump those columns with every change to what the parts
// show (0016, 0017), and /register reads them after creating its queue, so a copy it uses holds
// every change whose event the queue will not get. Measured on a realm of 1,000 users: reading and
// formatting realm_users took 21 ms of the 36 ms of CPU a /register cost, and they are 72% of its
// 452 KiB; the organization sections, a query or three each, most of the rest.
import { leanSql, Prisma, type PrismaClient, type StreamModel } from "@chat/db";
import { LRUCache } from "lru-cache";
import { formatSystemBot, isSystemBot } from "../actions/system-bots.ts";
import { deliveryEmailRoleClass, type DeliveryEmailView } from "../lib/email-visibility.ts";
import { formatUser } from "../lib/user-format.ts";
import { cachedStreams } from "../queries/stream-cache.ts";
import { getProfileData } from "../queries/users.ts";
import { JsonText } from "./json-text.ts";
import { readOrganizationSections } from "./organization-state.ts";

/** Copies of one kind, by realm, each valid for one generation and kept for each view. */
class RealmCopies<V> {
  private readonly realms = new LRUCache<number, { generation: string; views: Map<string, Promise<V>> }>({ max: MAX_REALMS });

  constructor(private readonly read: (realmId: number, view: string) => Promise<V>) {}

  get(realmId: number, generation: string, view: string): Promise<V> {
    let entry = this.realms.get(realmId);
    if (entry === undefined || entry.generation !== generation) {
      entry = { generation, views: new Map() };
      this.realms.set(realmId, entry);
    }
    let copy = entry.views.get(view);
    if (copy === undefined) {
      // Read after the generation it is kept under, so it is at least as new as that says.
      copy = this.read(realmId, view);
      entry.views.set(view, copy);
      // A failed read is not kept: the next registration reads again.
      const views = entry.views;
      copy.catch(() => views.delete(view));
    }
    return copy;
  }
}

/** Realms kept: a node serves few organizations at once, and a copy is rebuilt in a few queries. */
const MAX_REALMS = 100;

export interface RealmUsersView {
  clientGravatar: boolean;
  /**
   * The viewer's role: with each user's email_address_visibility, which of their delivery_email
   * the viewer is sent (lib/email-visibility.ts); copies are kept per class of role.
   */
  role: number;
  /** delivery_email on every user, null where the viewer may not see it (clients of today's API). */
  allDeliveryEmails?: boolean;
}

/** How realm_users is formatted for a view. */
export interface RealmUsersFormat {
  clientGravatar: boolean;
  withDeliveryEmail: boolean | DeliveryEmailView;
  allDeliveryEmails?: boolean;
}

/** realm_users and realm_non_active_users as JSON text, and cross_realm_bots. */
export interface RealmUsersText {
  active: JsonText;
  inactive: JsonText;
  systemBots: string;
}

interface Generations {
  realm_users_generation: number;
  realm_config_generation: number;
  stream_generation: number;
  user_generation: number;
  linkifier_generation: number;
}

/** What /register reads of an event node's copies. */
export interface RealmState {
  realmUsers(realmId: number, view: RealmUsersView): Promise<RealmUsersText>;
  organizationSections(realmId: number, guest: boolean): Promise<Record<string, Record<string, unknown>>>;
  /** The realm's active streams by id (stream-cache.ts), frozen. */
  streams(realmId: number): Promise<ReadonlyMap<number, StreamModel>>;
  /** The copies as one registration reads them (a view has none of its own). */
  forRegistration?(): RealmState;
}

export class RealmStateCache implements RealmState {
  private readonly users: RealmCopies<RealmUsersText>;
  private readonly organization: RealmCopies<string>;

  constructor(private readonly prisma: PrismaClient) {
    this.users = new RealmCopies((realmId, view) =>
      readRealmUsersText(prisma, realmId, { clientGravatar: view[0] === "1", withDeliveryEmail: { role: Number(view.slice(2)), modern: view[1] === "1" } }),
    );
    this.organization = new RealmCopies(async (realmId, view) => JSON.stringify(await readOrganizationSections(prisma, realmId, view === "guest")));
  }

  /** The realm's users as they are now, shown for `view`. */
  realmUsers(realmId: number, view: RealmUsersView): Promise<RealmUsersText> {
    return this.usersAt(this.generations(realmId), realmId, view);
  }

  /** The organization sections as they are now, by section name, for a guest (no default streams) or anyone else; a fresh copy to change. */
  organizationSections(realmId: number, guest: boolean): Promise<Record<string, Record<string, unknown>>> {
    return this.organizationAt(this.generations(realmId), realmId, guest);
  }

  streams(realmId: number): Promise<ReadonlyMap<number, StreamModel>> {
    return this.streamsAt(this.generations(realmId), realmId);
  }

  /**
   * The copies as one registration reads them: the realm's generations read once, at its first
   * section (after its queue exists), and the organization sections parsed once for all six of
   * them (each takes its own part). A registration's sections asked the generations seven times.
   * Sections re-read after events made them stale need a new view.
   */
  forRegistration(): RealmState {
    const generations = new Map<number, Promise<Generations>>();
    const organization = new Map<string, Promise<Record<string, Record<string, unknown>>>>();
    const generationsOf = (realmId: number) => {
      let read = generations.get(realmId);
      if (read === undefined) generations.set(realmId, (read = this.generations(realmId)));
      return read;
    };
    return {
      realmUsers: (realmId, view) => this.usersAt(generationsOf(realmId), realmId, view),
      organizationSections: (realmId, guest) => {
        const key = `${realmId}:${guest}`;
        let sections = organization.get(key);
        if (sections === undefined) organization.set(key, (sections = this.organizationAt(generationsOf(realmId), realmId, guest)));
        return sections;
      },
      streams: (realmId) => this.streamsAt(generationsOf(realmId), realmId),
    };
  }

  private async usersAt(read: Promise<Generations>, realmId: number, view: RealmUsersView): Promise<RealmUsersText> {
    const generations = await read;
    const bits = [view.clientGravatar, view.allDeliveryEmails === true].map((bit) => (bit ? 1 : 0)).join("");
    return this.users.get(realmId, String(generations.realm_users_generation), `${bits}${deliveryEmailRoleClass(view.role)}`);
  }

  private async streamsAt(read: Promise<Generations>, realmId: number): Promise<ReadonlyMap<number, StreamModel>> {
    return cachedStreams(this.prisma, { id: realmId, stream_generation: (await read).stream_generation });
  }

  private async organizationAt(read: Promise<Generations>, realmId: number, guest: boolean): Promise<Record<string, Record<string, unknown>>> {
    const g = await read;
    // realm_users_generation too: a user's deactivation takes them out of every group's members (feature level 303).
    const generation = `${g.realm_config_generation}.${g.stream_generation}.${g.user_generation}.${g.linkifier_generation}.${g.realm_users_generation}`;
    return JSON.parse(await this.organization.get(realmId, generation, guest ? "guest" : "member")) as Record<string, Record<string, unknown>>;
  }

  private async generations(realmId: number): Promise<Generations> {
    const rows = await leanSql(this.prisma).query<Generations>(
      Prisma.sql`SELECT realm_users_generation, realm_config_generation, stream_generation, user_generation, linkifier_generation FROM realm WHERE id = ${realmId}`,
      { prepare: true },
    );
    // A realm that is gone: nothing to keep, and a copy under this key is never used.
    return rows[0] ?? { realm_users_generation: -1, realm_config_generation: -1, stream_generation: -1, user_generation: -1, linkifier_generation: -1 };
  }
}

/**
 * Every user of the realm, bots included, as Zulip's realm_users; the server's own bots are
 * `cross_realm_bots`, as Zulip's live in another realm.
 */
export async function readRealmUsers(prisma: PrismaClient, realmId: number, view: RealmUsersFormat) {
  const all = await prisma.userProfile.findMany({ where: { realm_id: realmId }, orderBy: { id: "asc" } });
  const users = all.filter((user) => !isSystemBot(user));
  const profiles = await getProfileData(prisma, users.filter((u) => !u.is_bot).map((u) => u.id));
  const format = (user: (typeof users)[number]) =>
    formatUser(user, { clientGravatar: view.clientGravatar, withDeliveryEmail: view.withDeliveryEmail, allDeliveryEmails: view.allDeliveryEmails, profileData: profiles.get(user.id) });
  return {
    active: users.filter((u) => u.is_active).map(format),
    inactive: users.filter((u) => !u.is_active).map(format),
    systemBots: all.filter(isSystemBot).map(formatSystemBot),
  };
}

async function readRealmUsersText(prisma: PrismaClient, realmId: number, view: RealmUsersFormat): Promise<RealmUsersText> {
  const users = await readRealmUsers(prisma, realmId, view);
  return { active: new JsonText(JSON.stringify(users.active)), inactive: new JsonText(JSON.stringify(users.inactive)), systemBots: JSON.stringify(users.systemBots) };
}

/**
 * realm_users for a client of today's API with the viewer's own entry carrying their address (Zulip's
 * can_access_delivery_email admits oneself): the copies are kept per class of role, where that
 * entry is null when the user's own setting hides it from their role. JSON text is patched in its
 * bytes: the entry starts `{"user_id":<id>,` and its first `"delivery_email":` is its own key (a
 * string's quotes are escaped in JSON, so no value holds either sequence).
 */
export function showOwnDeliveryEmail<T>(users: T, self: { id: number; delivery_email: string }): T {
  if (Array.isArray(users)) {
    return users.map((u: Record<string, unknown>) => (u.user_id === self.id && u.delivery_email === null ? { ...u, delivery_email: self.delivery_email } : u)) as T;
  }
  if (!(users instanceof JsonText)) return users;
  const bytes = users.bytes;
  const start = bytes.indexOf(`{"user_id":${self.id},`);
  if (start === -1) return users;
  const key = Buffer.from(`"delivery_email":null`);
  const at = bytes.indexOf(key, start);
  const next = bytes.indexOf(`{"user_id":`, start + 1);
  if (at === -1 || (next !== -1 && at > next)) return users;
  const value = Buffer.from(`"delivery_email":${JSON.stringify(self.delivery_email)}`);
  return new JsonText(Buffer.concat([bytes.subarray(0, at), value, bytes.subarray(at + key.length)])) as T;
}
