import { JsonableError } from "../errors.ts";
import type { UserProfile } from "../models.ts";

/** Endpoints about a person's own state refuse bots (Zulip's @human_users_only). */
export function checkHumanUser(user: Pick<UserProfile, "is_bot">): void {
  if (user.is_bot) throw new JsonableError("This endpoint does not accept bot requests.");
}
