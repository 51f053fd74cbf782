export const RECIPIENT_PERSONAL = 1;
export const RECIPIENT_STREAM = 2;
export const RECIPIENT_HUDDLE = 3;

/** Users a private message or a `pm-with` narrow may name (a group conversation's size). */
export const MAX_PRIVATE_RECIPIENTS = 1_000;
