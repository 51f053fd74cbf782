// Per-user message flags, stored as a bitmask in user_message.flags with Zulip's bit positions.
export const FLAG_BITS = {
  read: 1 << 0,
  starred: 1 << 1,
  collapsed: 1 << 2,
  mentioned: 1 << 3,
  /** Zulip 8's stream_wildcard_mentioned (the bit Zulip 3.x called wildcard_mentioned). */
  wildcard_mentioned: 1 << 4,
  /** @**topic** (feature level 224), for the topic's participants. */
  topic_wildcard_mentioned: 1 << 5,
  has_alert_word: 1 << 9,
  historical: 1 << 10,
  is_private: 1 << 11,
  active_mobile_push_notification: 1 << 12,
} as const;

export type FlagName = keyof typeof FLAG_BITS;

/** Either wildcard mention: what Zulip's deprecated `wildcard_mentioned` flag still says. */
export const WILDCARD_MENTION_BITS = FLAG_BITS.wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/**
 * The flags clients see, by bit as Zulip orders them (is_private and the push bookkeeping bit are
 * internal). The deprecated `wildcard_mentioned` follows them when either wildcard bit is set, as
 * Zulip 8 and later send it to every client.
 */
export const CLIENT_FLAG_NAMES: ReadonlyArray<readonly [string, number]> = [
  ["read", FLAG_BITS.read],
  ["starred", FLAG_BITS.starred],
  ["collapsed", FLAG_BITS.collapsed],
  ["mentioned", FLAG_BITS.mentioned],
  ["stream_wildcard_mentioned", FLAG_BITS.wildcard_mentioned],
  ["topic_wildcard_mentioned", FLAG_BITS.topic_wildcard_mentioned],
  ["has_alert_word", FLAG_BITS.has_alert_word],
  ["historical", FLAG_BITS.historical],
];

export function flagsToNames(bits: number): string[] {
  const names = CLIENT_FLAG_NAMES.filter(([, bit]) => (bits & bit) !== 0).map(([name]) => name);
  if ((bits & WILDCARD_MENTION_BITS) !== 0) names.push("wildcard_mentioned");
  return names;
}
