export const ROLE_OWNER = 100;
export const ROLE_ADMINISTRATOR = 200;
export const ROLE_MEMBER = 400;
export const ROLE_GUEST = 600;
export const ROLES = [ROLE_OWNER, ROLE_ADMINISTRATOR, ROLE_MEMBER, ROLE_GUEST] as const;

export interface HasRole {
  role: number;
}

export const isOwner = (user: HasRole): boolean => user.role === ROLE_OWNER;
/** Owners are administrators too, as in Zulip. */
export const isAdmin = (user: HasRole): boolean => user.role <= ROLE_ADMINISTRATOR;
export const isGuest = (user: HasRole): boolean => user.role === ROLE_GUEST;
