// The Zulip API this server speaks, in the one place that says it: /server_settings, /register and
// `restart` events all read it. Clients branch on the feature level (zulip-flutter refuses servers
// below 277), so it may rise only when every changelog entry up to it holds (README's table).

/** The Zulip release whose API this server implements. */
export const ZULIP_VERSION = "10.0";
/** Zulip's `zulip_feature_level` of that release. */
export const ZULIP_FEATURE_LEVEL = 371;
/** Zulip's `zulip_merge_base` (feature level 88): the release this server's API is based on. */
export const ZULIP_MERGE_BASE = ZULIP_VERSION;

/** The three version facts as Zulip's responses and `restart` events carry them. */
export function zulipVersionFields(): { zulip_version: string; zulip_feature_level: number; zulip_merge_base: string } {
  return { zulip_version: ZULIP_VERSION, zulip_feature_level: ZULIP_FEATURE_LEVEL, zulip_merge_base: ZULIP_MERGE_BASE };
}
