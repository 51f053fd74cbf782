export const ROLE_OWNER = 100;
export const ROLE_ADMINISTRATOR = 200;
/** Zulip's moderators (feature level 60): members who may also do what "moderators" policies allow. */
export const ROLE_MODERATOR = 300;
export const ROLE_MEMBER = 400;
export const ROLE_GUEST = 600;
export const ROLES = [ROLE_OWNER, ROLE_ADMINISTRATOR, ROLE_MODERATOR, ROLE_MEMBER, ROLE_GUEST] as const;

export interface HasRole {
  role: number;
}

export const isOwner = (user: HasRole): boolean => user.role === ROLE_OWNER;
/** Owners are administrators too, as in Zulip. */
export const isAdmin = (user: HasRole): boolean => user.role <= ROLE_ADMINISTRATOR;
/** Zulip's is_moderator: the moderator role only (administrators are not moderators). */
export const isModerator = (user: HasRole): boolean => user.role === ROLE_MODERATOR;
/** Moderators and above: who "moderators" policies admit. */
export const isModeratorOrAbove = (user: HasRole): boolean => user.role <= ROLE_MODERATOR;
export const isGuest = (user: HasRole): boolean => user.role === ROLE_GUEST;
