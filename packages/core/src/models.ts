import type { RealmModel, UserProfileModel } from "@chat/db";

export type Realm = RealmModel;
export type UserProfile = UserProfileModel;

/** The authenticated user a request acts as, with its realm. */
export interface Actor extends UserProfile {
  realm: Realm;
}
