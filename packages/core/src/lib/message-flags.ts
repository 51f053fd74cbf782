// Per-user message flags, stored as a bitmask in user_message.flags with Zulip's bit positions.
export const FLAG_BITS = {
  read: 1 << 0,
  starred: 1 << 1,
  collapsed: 1 << 2,
  mentioned: 1 << 3,
  wildcard_mentioned: 1 << 4,
  has_alert_word: 1 << 9,
  historical: 1 << 10,
  is_private: 1 << 11,
  active_mobile_push_notification: 1 << 12,
} as const;

export type FlagName = keyof typeof FLAG_BITS;

/** Flags clients see (is_private and the push bookkeeping bit are internal). */
export const CLIENT_FLAGS: FlagName[] = ["read", "starred", "collapsed", "mentioned", "wildcard_mentioned", "has_alert_word", "historical"];

export function flagsToNames(bits: number): string[] {
  return CLIENT_FLAGS.filter((name) => (bits & FLAG_BITS[name]) !== 0);
}
