// /register's user lists for a guest who may not know of every user (the realm's
// can_access_all_users_group is role:members; Zulip 9.0's get_users_for_api): users they may not
// access are left out for clients declaring user_list_incomplete (feature level 232), and shown as
// "Unknown user" to the others, who expect every sender and subscriber to be in the list.
import type { PrismaClient } from "@chat/db";
import type { Actor } from "../models.ts";
import { accessibleUserIdsIfRestricted } from "../queries/user-access.ts";
import { JsonText } from "./json-text.ts";
import type { State } from "./initial-state.ts";

/**
 * Marks a `realm_user add` placeholder for guests who may not know of a new user (Zulip's
 * inaccessible_user): the event tier strips it, and drops the event for user_list_incomplete queues.
 */
export const INACCESSIBLE_USER_KEY = "__inaccessible_user";

/** Zulip's UserProfile.INACCESSIBLE_USER_NAME. */
export const INACCESSIBLE_USER_NAME = "Unknown user";

/** Zulip's get_data_for_inaccessible_user: a placeholder with nothing of the real user but the id. */
export function inaccessibleUserDict(userId: number, emailDomain: string, _realmUri?: string): Record<string, unknown> {
  return {
    user_id: userId,
    email: `user${userId}@${emailDomain}`,
    full_name: INACCESSIBLE_USER_NAME,
    is_active: true,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_bot: false,
    role: 400,
    timezone: "",
    // Zulip's: the Unix epoch, and a static image; the same in /register and in events.
    date_joined: "1970-01-01T00:00:00+00:00",
    avatar_url: "/static/images/unknown-user-avatar.png",
    avatar_version: 1,
    avatar_source: "G",
    delivery_email: null,
  };
}

type UserDict = Record<string, unknown> & { user_id: number };

function asList(value: unknown): UserDict[] {
  if (value instanceof JsonText) return JSON.parse(value.text) as UserDict[];
  return (value as UserDict[] | undefined) ?? [];
}

/**
 * The realm_users / realm_non_active_users of `users` as this actor may have them: unchanged for
 * anyone who may access every user.
 */
export async function restrictRealmUsers(
  prisma: PrismaClient,
  actor: Actor,
  users: State,
  options: { userListIncomplete: boolean; realmUri: string; emailDomain: string },
): Promise<State> {
  if (actor.role !== 600) return users;
  const accessible = await accessibleUserIdsIfRestricted(prisma, actor);
  if (accessible === null) return users;
  const active: UserDict[] = [];
  const inactive: UserDict[] = [];
  const unknown: UserDict[] = [];
  for (const [list, into] of [
    [asList(users.realm_users), active],
    [asList(users.realm_non_active_users), inactive],
  ] as const) {
    for (const user of list) {
      if (accessible.has(user.user_id)) into.push(user);
      else if (!options.userListIncomplete) unknown.push(inaccessibleUserDict(user.user_id, options.emailDomain, options.realmUri) as UserDict);
    }
  }
  // Placeholders are active users, as Zulip's; in id order with the rest.
  const realmUsers = [...active, ...unknown].sort((a, b) => a.user_id - b.user_id);
  return { ...users, realm_users: realmUsers, realm_non_active_users: inactive };
}

/**
 * The sections keyed by user (presences, by id or by the 3.x email; user_status, by id) without the
 * users a restricted guest may not access, as Zulip 9.0 leaves them out.
 */
export async function restrictUserKeyedSections(prisma: PrismaClient, actor: Actor, state: State): Promise<State> {
  if (actor.role !== 600 || !("presences" in state || "user_status" in state)) return state;
  const accessible = await accessibleUserIdsIfRestricted(prisma, actor);
  if (accessible === null) return state;
  const ids = [...accessible];
  const emails = new Set((await prisma.$queryRaw<{ email: string }[]>`SELECT email FROM user_profile WHERE id = ANY(${ids}::int[])`).map((row) => row.email));
  const keep = (key: string) => (/^\d+$/.test(key) ? accessible.has(Number(key)) : emails.has(key));
  for (const section of ["presences", "user_status"]) {
    const value = state[section];
    if (value && typeof value === "object" && !(value instanceof JsonText)) {
      state[section] = Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([key]) => keep(key)));
    }
  }
  return state;
}
