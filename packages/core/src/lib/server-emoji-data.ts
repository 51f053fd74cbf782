// Where clients fetch the names of the server's Unicode emoji (`server_emoji_data_url`, feature
// level 140): a public JSON document `{code_to_names: {...}}` that zulip-flutter reads right after
// /register, without credentials.

/** The document's path on every organization's host. */
export const SERVER_EMOJI_DATA_PATH = "/static/generated/emoji/emoji_api.json";

/** Its absolute URL on the organization's host, as /register announces it. */
export function serverEmojiDataUrl(realmUri: string): string {
  return `${realmUri}${SERVER_EMOJI_DATA_PATH}`;
}
