import type { RealmModel, UserProfileModel } from "@chat/db";
import type { Linkifier } from "./lib/linkifiers.ts";

export type Realm = RealmModel;
export type UserProfile = UserProfileModel;

/** The authenticated user a request acts as, with its realm. */
export interface Actor extends UserProfile {
  realm: Realm;
  /**
   * The realm's linkifiers, read with the credentials (API key authentication) so that sending
   * and fetching, which both need them, spend no query of their own on them.
   */
  realmLinkifiers?: Linkifier[];
}
