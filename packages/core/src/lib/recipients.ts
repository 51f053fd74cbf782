export const RECIPIENT_PERSONAL = 1;
export const RECIPIENT_STREAM = 2;
export const RECIPIENT_HUDDLE = 3;
