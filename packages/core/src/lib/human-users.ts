import { JsonableError } from "../errors.ts";
import type { UserProfile } from "../models.ts";
import { isGuest } from "./roles.ts";

/** Endpoints about a person's own state refuse bots (Zulip's @human_users_only). */
export function checkHumanUser(user: Pick<UserProfile, "is_bot">): void {
  if (user.is_bot) throw new JsonableError("This endpoint does not accept bot requests.");
}

/** Endpoints for people who are members or administrators refuse guests, then bots (Zulip's @require_member_or_admin). */
export function checkMemberOrAdmin(user: Pick<UserProfile, "is_bot" | "role">): void {
  if (isGuest(user)) throw new JsonableError("Not allowed for guest users");
  checkHumanUser(user);
}
