/** Zulip's limits on a message: topic in characters, content in UTF-8 bytes. */
export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;
