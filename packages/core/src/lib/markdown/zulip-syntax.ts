// Zulip's own inline syntax as markdown-it rules: user, wildcard and group mentions, stream and
// topic links, and emoji. Each rule resolves names against the render context and, when a name is
// unknown, does not match, so the text renders as ordinary Markdown (as Zulip does). Names are
// written out escaped, so nothing in a name, stream or topic can become markup.
import type { MarkdownIt, StateInline, Token } from "markdown-it";
import { unicodeEmojiByName } from "../emoji.ts";
import type { CustomEmoji, LinkableStream, MentionableGroup, MentionableUser, RenderContext } from "./render-context.ts";
import { EMPTY_TOPIC_DISPLAY_NAME } from "../empty-topic.ts";

/** Everyone in the stream; `channel` since feature level 247. */
export const WILDCARD_MENTIONS = ["all", "everyone", "stream", "channel"] as const;
/** The topic's participants (feature level 224). */
export const TOPIC_WILDCARD_MENTION = "topic";

/** What rendering found, for the message's flags. */
export interface RenderFindings {
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  mentionsWildcard: boolean;
  mentionsTopicWildcard: boolean;
}

/** Lookup tables built once per render from the context. */
export interface SyntaxEnv {
  findings: RenderFindings;
  usersById: Map<number, MentionableUser>;
  usersByName: Map<string, MentionableUser>;
  groupsByName: Map<string, MentionableGroup>;
  streamsByName: Map<string, LinkableStream>;
  /** The latest message id the author can read in each linked topic, by topicKeyOf. */
  topicLatestIds: Map<string, number>;
  customEmoji: Map<string, CustomEmoji>;
}

export function syntaxEnv(context: RenderContext): SyntaxEnv {
  const usersByName = new Map<string, MentionableUser>();
  // Users come ordered by id; with two users of one name, the older account is the one mentioned.
  for (const user of context.users ?? []) if (!usersByName.has(user.full_name.toLowerCase())) usersByName.set(user.full_name.toLowerCase(), user);
  const streamsByName = new Map<string, LinkableStream>();
  for (const stream of context.streams ?? []) if (!streamsByName.has(stream.name.toLowerCase())) streamsByName.set(stream.name.toLowerCase(), stream);
  return {
    findings: { mentionedUserIds: new Set(), mentionedGroupIds: new Set(), mentionsWildcard: false, mentionsTopicWildcard: false },
    usersById: new Map((context.users ?? []).map((u) => [u.id, u])),
    usersByName,
    groupsByName: new Map((context.groups ?? []).map((g) => [g.name.toLowerCase(), g])),
    streamsByName,
    topicLatestIds: new Map((context.topicLatestIds ?? []).map((row) => [topicKeyOf(row.stream_id, row.topic), row.id])),
    customEmoji: new Map((context.customEmoji ?? []).map((e) => [e.name, e])),
  };
}

export function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, "&quot;");
}

/** Zulip's hash_util_encode: percent-encoding with '.' for '%', as narrow URLs use. */
export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, "%2E")
    .replace(/%/g, ".");
}

export function streamNarrowUrl(stream: LinkableStream): string {
  return `/#narrow/stream/${stream.id}-${encodeHashComponent(stream.name.replace(/ /g, "-"))}`;
}

/** Custom emoji images, where the public file routes serve them (Zulip's get_emoji_url). */
export function customEmojiUrl(emoji: Pick<CustomEmoji, "realm_id" | "file_name">): string {
  return `/user_avatars/${emoji.realm_id}/emoji/images/${encodeURIComponent(emoji.file_name)}`;
}

// Zulip's mention and stream patterns match only at the start or after one of these.
const ALLOWED_BEFORE = /[\s'"(,:<]/;

function atBoundary(state: StateInline): boolean {
  return state.pos === 0 || ALLOWED_BEFORE.test(state.src[state.pos - 1]);
}

function envOf(state: StateInline): SyntaxEnv | undefined {
  return (state.env as { syntax?: SyntaxEnv }).syntax;
}

const USER_MENTION = /@(_?)\*\*([^*]+)\*\*/y;
const GROUP_MENTION = /@(_?)\*([^*]+)\*/y;

function mentionRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */ || !atBoundary(state)) return false;
  const env = envOf(state);
  if (!env) return false;
  USER_MENTION.lastIndex = state.pos;
  const user = USER_MENTION.exec(state.src);
  if (user && user.index + user[0].length <= state.posMax) {
    const isSilent = user[1] === "_";
    const name = user[2];
    if ((WILDCARD_MENTIONS as readonly string[]).includes(name)) {
      if (!silent) {
        const token = state.push("zulip_mention", "", 0);
        token.meta = { userId: "*", text: name, silent: isSilent };
        if (!isSilent) env.findings.mentionsWildcard = true;
      }
      state.pos += user[0].length;
      return true;
    }
    if (name === TOPIC_WILDCARD_MENTION) {
      if (!silent) {
        const token = state.push("zulip_topic_mention", "", 0);
        token.meta = { silent: isSilent };
        if (!isSilent) env.findings.mentionsTopicWildcard = true;
      }
      state.pos += user[0].length;
      return true;
    }
    const withId = /^(.*)\|(\d+)$/s.exec(name);
    let found: MentionableUser | undefined;
    if (withId) {
      found = env.usersById.get(Number(withId[2]));
      // @**Name|id** must name the user exactly; @**|id** needs no name.
      if (found && withId[1] !== "" && withId[1] !== found.full_name) found = undefined;
    } else {
      found = env.usersByName.get(name.toLowerCase());
    }
    if (!found) return false;
    if (!silent) {
      const token = state.push("zulip_mention", "", 0);
      token.meta = { userId: String(found.id), text: found.full_name, silent: isSilent };
      if (!isSilent) env.findings.mentionedUserIds.add(found.id);
    }
    state.pos += user[0].length;
    return true;
  }
  GROUP_MENTION.lastIndex = state.pos;
  const group = GROUP_MENTION.exec(state.src);
  if (!group || group.index + group[0].length > state.posMax) return false;
  const found = env.groupsByName.get(group[2].toLowerCase());
  if (!found) return false;
  const isSilent = group[1] === "_";
  if (!silent) {
    const token = state.push("zulip_group_mention", "", 0);
    token.meta = { groupId: found.id, text: found.is_system_group ? (SYSTEM_GROUP_DISPLAY_NAMES[found.name] ?? found.name) : found.name, silent: isSilent };
    if (!isSilent) env.findings.mentionedGroupIds.add(found.id);
  }
  state.pos += group[0].length;
  return true;
}

/** How a mention shows a system group (Zulip's SystemGroups.GROUP_DISPLAY_NAME_MAP; feature level 333). */
const SYSTEM_GROUP_DISPLAY_NAMES: Record<string, string> = {
  "role:nobody": "Nobody",
  "role:owners": "Owners",
  "role:administrators": "Administrators",
  "role:moderators": "Moderators",
  "role:fullmembers": "Full members",
  "role:members": "Members",
  "role:everyone": "Everyone",
  "role:internet": "Everyone on the internet",
};

const STREAM_LINK = /#\*\*([^*]+)\*\*/y;
/** A message link's end, `@` and the message's id (Zulip's STREAM_TOPIC_MESSAGE_LINK_REGEX). */
const MESSAGE_LINK_SUFFIX = /@(\d+)$/;

/** How topicLatestIds names a topic: topics match without case, as in Zulip. */
export function topicKeyOf(streamId: number, topic: string): string {
  return `${streamId}:${topic.toLowerCase()}`;
}

function streamRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !atBoundary(state)) return false;
  const env = envOf(state);
  if (!env) return false;
  STREAM_LINK.lastIndex = state.pos;
  const match = STREAM_LINK.exec(state.src);
  if (!match || match.index + match[0].length > state.posMax) return false;
  const body = match[1];
  // #**stream>topic@id** (a message, feature level 319), then #**stream>topic** (the stream name
  // holds no '>'; the topic may be empty, feature level 346), then the whole body as a stream name.
  const arrow = body.indexOf(">");
  const topicStream = arrow > 0 ? env.streamsByName.get(body.slice(0, arrow).toLowerCase()) : undefined;
  const stream = topicStream ?? env.streamsByName.get(body.toLowerCase());
  if (!stream) return false;
  if (!silent) {
    const token = state.push("zulip_stream_link", "", 0);
    if (topicStream) {
      const topicPart = body.slice(arrow + 1);
      const near = MESSAGE_LINK_SUFFIX.exec(topicPart);
      token.meta = near
        ? { stream, topic: topicPart.slice(0, near.index), messageId: near[1] }
        : { stream, topic: topicPart, withId: env.topicLatestIds.get(topicKeyOf(stream.id, topicPart)) };
    } else token.meta = { stream };
  }
  state.pos += match[0].length;
  return true;
}

const EMOJI = /:([\p{L}\p{N}_+-]+):/uy;

function emojiRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  const env = envOf(state);
  EMOJI.lastIndex = state.pos;
  const match = EMOJI.exec(state.src);
  if (!match || match.index + match[0].length > state.posMax) return false;
  const name = match[1];
  // A realm's custom emoji take precedence over Unicode emoji of the same name, as in Zulip.
  const custom = env?.customEmoji.get(name);
  const unicode = custom ? null : unicodeEmojiByName(name);
  if (!custom && !unicode) return false;
  if (!silent) {
    const token = state.push("zulip_emoji", "", 0);
    token.meta = { name, custom, code: unicode?.code };
  }
  state.pos += match[0].length;
  return true;
}

function renderMention(tokens: Token[], idx: number): string {
  const { userId, text, silent } = tokens[idx].meta as { userId: string; text: string; silent: boolean };
  const className = silent ? "user-mention silent" : "user-mention";
  return `<span class="${className}" data-user-id="${escapeAttribute(userId)}">${silent ? "" : "@"}${escapeText(text)}</span>`;
}

function renderTopicMention(tokens: Token[], idx: number): string {
  const { silent } = tokens[idx].meta as { silent: boolean };
  return silent ? `<span class="topic-mention silent">topic</span>` : `<span class="topic-mention">@topic</span>`;
}

function renderGroupMention(tokens: Token[], idx: number): string {
  const { groupId, text, silent } = tokens[idx].meta as { groupId: number; text: string; silent: boolean };
  const className = silent ? "user-group-mention silent" : "user-group-mention";
  return `<span class="${className}" data-user-group-id="${groupId}">${silent ? "" : "@"}${escapeText(text)}</span>`;
}

/** A topic as a link shows it: the empty topic as its display name, in `<em>` (feature level 346). */
function topicText(topic: string): string {
  return topic === "" ? `<em>${EMPTY_TOPIC_DISPLAY_NAME}</em>` : escapeText(topic);
}

function renderStreamLink(tokens: Token[], idx: number): string {
  const { stream, topic, withId, messageId } = tokens[idx].meta as { stream: LinkableStream; topic?: string; withId?: number; messageId?: string };
  const url = streamNarrowUrl(stream);
  if (topic === undefined) {
    return `<a class="stream" data-stream-id="${stream.id}" href="${escapeAttribute(url)}">#${escapeText(stream.name)}</a>`;
  }
  const topicUrl = `${url}/topic/${encodeHashComponent(topic)}`;
  const label = `#${escapeText(stream.name)} &gt; ${topicText(topic)}`;
  if (messageId !== undefined) return `<a class="message-link" href="${escapeAttribute(`${topicUrl}/near/${messageId}`)}">${label} @ 💬</a>`;
  // Feature level 347: a topic with messages the author can read links with `with`, following the topic's moves.
  const href = withId === undefined ? topicUrl : `${topicUrl}/with/${withId}`;
  return `<a class="stream-topic" data-stream-id="${stream.id}" href="${escapeAttribute(href)}">${label}</a>`;
}

function renderEmoji(tokens: Token[], idx: number): string {
  const { name, custom, code } = tokens[idx].meta as { name: string; custom?: CustomEmoji; code?: string };
  const title = escapeAttribute(name.replace(/_/g, " "));
  if (custom) {
    return `<img alt=":${escapeAttribute(name)}:" class="emoji" src="${escapeAttribute(customEmojiUrl(custom))}" title="${title}">`;
  }
  return `<span aria-label="${title}" class="emoji emoji-${escapeAttribute(code!)}" role="img" title="${title}">:${escapeText(name)}:</span>`;
}

/** Installs the rules on a markdown-it instance; they act only when env.syntax is set. */
export function zulipSyntax(md: MarkdownIt): void {
  md.inline.ruler.before("emphasis", "zulip_mention", mentionRule);
  md.inline.ruler.before("emphasis", "zulip_stream_link", streamRule);
  md.inline.ruler.before("emphasis", "zulip_emoji", emojiRule);
  md.renderer.rules.zulip_mention = renderMention;
  md.renderer.rules.zulip_topic_mention = renderTopicMention;
  md.renderer.rules.zulip_group_mention = renderGroupMention;
  md.renderer.rules.zulip_stream_link = renderStreamLink;
  md.renderer.rules.zulip_emoji = renderEmoji;
}
