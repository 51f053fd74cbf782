// What the renderer needs from the database, fetched by the caller before rendering: only the
// rows the content can refer to, one query per kind of syntax, and none for syntax the content
// does not contain (a plain message costs only the linkifier query).
import { fitsPostgresInteger } from "../validation.ts";
import { leanSql, Prisma } from "@chat/db";
import type { Linkifier } from "../linkifiers.ts";
import { realmLinkifiers } from "../../queries/linkifiers.ts";
import { SERVICE_BOT_TYPES } from "../bots.ts";
import { referencedPathIds } from "../uploads.ts";

export interface MentionableUser {
  id: number;
  full_name: string;
  /** Read with the name, so a send learns which mentions trigger a service bot at no extra query. */
  bot_type: number | null;
}

export interface MentionableGroup {
  id: number;
  name: string;
  /** A system group (role:…) is shown by its display name (feature level 333). */
  is_system_group?: boolean;
  member_ids: number[];
  /** Active outgoing-webhook and embedded bots among the members. */
  service_bot_ids: number[];
}

export interface LinkableStream {
  id: number;
  name: string;
}

export interface CustomEmoji {
  id: number;
  name: string;
  realm_id: number;
  /** The image's name in storage (`<id>.png`, `<id>.gif`), which its URL ends with. */
  file_name: string;
}

/** Everything the renderer looks up; every list is scoped to the sender's realm by the caller. */
export interface RenderContext {
  linkifiers?: Linkifier[];
  /** Active users whose full names (or ids) appear in mention syntax. */
  users?: MentionableUser[];
  groups?: MentionableGroup[];
  streams?: LinkableStream[];
  customEmoji?: CustomEmoji[];
  /**
   * Present when links to image uploads get inline previews (messages, in a realm with
   * inline_image_preview on); `realmHost` makes absolute URLs on the realm's own host count too.
   */
  imagePreviews?: { realmHost?: string | null };
  /** "WIDTHxHEIGHT" by path id, for the realm's image uploads the content links to whose size is known. */
  imageDimensions?: Map<string, string>;
  /** Of those, the upload's content type, where it has one (feature level 336). */
  imageContentTypes?: Map<string, string>;
  /** The latest message the author can read in each topic the content links to (feature level 347's `with`). */
  topicLatestIds?: TopicLatestId[];
}

export interface TopicLatestId {
  stream_id: number;
  topic: string;
  id: number;
}

/** Topic links of one message whose `with` message is looked up; others link without it. */
const MAX_TOPIC_LINK_LOOKUPS = 20;

/** The [stream name (lower-cased), topic] pairs of the content's #**stream>topic** links (not message links). */
export function scanTopicLinks(content: string): Array<[string, string]> {
  const pairs = new Map<string, [string, string]>();
  for (const match of content.matchAll(STREAM_LINK)) {
    const arrow = match[1].indexOf(">");
    if (arrow <= 0 || /@\d+$/.test(match[1])) continue;
    const pair: [string, string] = [match[1].slice(0, arrow).toLowerCase(), match[1].slice(arrow + 1)];
    pairs.set(`${pair[0]}>${pair[1].toLowerCase()}`, pair);
    if (pairs.size >= MAX_TOPIC_LINK_LOOKUPS) break;
  }
  return [...pairs.values()];
}

/**
 * Zulip's get_with_operand: per linked topic, the latest message in it the author can read (a row
 * of their own, or shared history they may see: a public stream's unless they are a guest, a
 * private one's while subscribed), so nothing of a topic they cannot read leaks into the link.
 */
async function latestTopicMessages(db: Reader, realmId: number, author: { id: number; isGuest: boolean }, pairs: Array<[string, string]>): Promise<TopicLatestId[]> {
  return leanSql(db).query<TopicLatestId>(Prisma.sql`
    SELECT s.id AS stream_id, t.topic, latest.id
    FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[]) AS t(stream_name, topic)
    JOIN stream s ON s.realm_id = ${realmId} AND NOT s.deactivated AND lower(s.name) = t.stream_name
    JOIN LATERAL (
      SELECT m.id FROM message m
      WHERE m.recipient_id = s.recipient_id AND upper(m.subject) = upper(t.topic)
        AND (EXISTS (SELECT 1 FROM user_message um WHERE um.user_id = ${author.id} AND um.message_id = m.id)
          OR (s.history_public_to_subscribers AND (
            (NOT s.invite_only AND NOT ${author.isGuest}::boolean)
            OR EXISTS (SELECT 1 FROM subscription sub WHERE sub.recipient_id = s.recipient_id AND sub.user_id = ${author.id} AND sub.active))))
      ORDER BY m.id DESC LIMIT 1
    ) latest ON true`);
}

type Reader = Parameters<typeof leanSql>[0];

// Loose scans of the raw content: they may find names the renderer later ignores (inside code, or
// not preceded by a space), never miss one it would render.
const USER_MENTION = /@_?\*\*([^*]+)\*\*/g;
const GROUP_MENTION = /@_?\*([^*]+)\*/g;
const STREAM_LINK = /#\*\*([^*]+)\*\*/g;
const EMOJI = /:([\p{L}\p{N}_+-]+):/gu;
const ID_SUFFIX = /^(.*)\|(\d+)$/s;

/** The names (lower-cased) and ids the content's mention syntax refers to. */
export function scanMentionSyntax(content: string): { names: string[]; ids: number[]; groups: string[]; streams: string[]; emoji: string[] } {
  const names = new Set<string>();
  const ids = new Set<number>();
  for (const match of content.matchAll(USER_MENTION)) {
    const withId = ID_SUFFIX.exec(match[1]);
    if (withId) {
      const id = Number(withId[2]);
      if (fitsPostgresInteger(id)) ids.add(id);
    } else names.add(match[1].toLowerCase());
  }
  const groups = new Set<string>();
  for (const match of content.matchAll(GROUP_MENTION)) groups.add(match[1].toLowerCase());
  const streams = new Set<string>();
  for (const match of content.matchAll(STREAM_LINK)) {
    streams.add(match[1].toLowerCase());
    const arrow = match[1].indexOf(">");
    if (arrow > 0) streams.add(match[1].slice(0, arrow).toLowerCase());
  }
  const emoji = new Set<string>();
  // Adjacent names share their colon (":a:b:"), so scan from each colon.
  for (let i = content.indexOf(":"); i !== -1; i = content.indexOf(":", i + 1)) {
    const match = /^:([\p{L}\p{N}_+-]+):/u.exec(content.slice(i, i + 102));
    if (match) emoji.add(match[1]);
  }
  return { names: [...names], ids: [...ids], groups: [...groups], streams: [...streams], emoji: [...emoji] };
}

/**
 * The render context for `content` sent in `realmId`: at most seven queries, usually one. A caller
 * that has read the realm's linkifiers already passes them in.
 */
export async function fetchRenderContext(
  db: Reader,
  realmId: number,
  content: string,
  known: { linkifiers?: Linkifier[]; imagePreviews?: boolean; realmHost?: string | null; author?: { id: number; isGuest: boolean } } = {},
): Promise<RenderContext> {
  const hasSyntax = (c: string) => content.includes(c);
  const scan = hasSyntax("@") || hasSyntax("#**") || hasSyntax(":") ? scanMentionSyntax(content) : null;
  // Only previews show an upload's size; a message linking no upload costs nothing more.
  const pathIds = known.imagePreviews !== false ? referencedPathIds(content) : [];
  const sql = leanSql(db);
  // The lookups are independent: run them side by side (outside a transaction, on separate connections).
  // Topic links name their latest message only for an author (a message, not a preview or an import).
  const topicPairs = known.author !== undefined && hasSyntax(">") && scan !== null ? scanTopicLinks(content) : [];
  const [linkifiers, users, groups, streams, customEmoji, dimensions, topicLatestIds] = await Promise.all([
    known.linkifiers ?? realmLinkifiers(db, realmId),
    scan && (scan.names.length > 0 || scan.ids.length > 0)
      ? // Deactivated users are never mentioned; the renderer leaves their syntax as text.
        sql.query<MentionableUser>(Prisma.sql`
          SELECT id, full_name, bot_type FROM user_profile
          WHERE realm_id = ${realmId} AND is_active
            AND (lower(full_name) = ANY(${scan.names}::text[]) OR id = ANY(${scan.ids}::int[]))
          ORDER BY id`)
      : undefined,
    scan && scan.groups.length > 0
      ? // A group's members are those of its subgroups too (Zulip's get_recursive_group_members).
        sql.query<MentionableGroup>(Prisma.sql`
          WITH RECURSIVE tree(root, id) AS (
            SELECT g.id, g.id FROM user_group g
            WHERE g.realm_id = ${realmId} AND g.name IS NOT NULL AND NOT g.deactivated AND lower(g.name) = ANY(${scan.groups}::text[])
            UNION SELECT t.root, m.subgroup_id FROM group_group_membership m JOIN tree t ON m.supergroup_id = t.id
          )
          SELECT g.id, g.name, g.is_system_group, COALESCE(array_agg(DISTINCT u.id ORDER BY u.id) FILTER (WHERE u.is_active), '{}') AS member_ids,
                 COALESCE(array_agg(DISTINCT u.id ORDER BY u.id) FILTER (WHERE u.is_active AND u.bot_type = ANY(${SERVICE_BOT_TYPES}::int[])), '{}') AS service_bot_ids
          FROM tree t JOIN user_group g ON g.id = t.root LEFT JOIN user_group_membership m ON m.user_group_id = t.id LEFT JOIN user_profile u ON u.id = m.user_id
          GROUP BY g.id ORDER BY g.id`)
      : undefined,
    scan && scan.streams.length > 0
      ? sql.query<LinkableStream>(Prisma.sql`
          SELECT id, name FROM stream
          WHERE realm_id = ${realmId} AND NOT deactivated AND lower(name) = ANY(${scan.streams}::text[])
          ORDER BY id`)
      : undefined,
    scan && scan.emoji.length > 0
      ? sql.query<CustomEmoji>(Prisma.sql`
          SELECT id, name, realm_id, file_name FROM realm_emoji
          WHERE realm_id = ${realmId} AND NOT deactivated AND name = ANY(${scan.emoji}::text[])
          ORDER BY id`)
      : undefined,
    pathIds.length > 0
      ? sql.query<{ path_id: string; original_width: number; original_height: number; content_type: string | null }>(Prisma.sql`
          SELECT path_id, original_width, original_height, content_type FROM attachment
          WHERE realm_id = ${realmId} AND path_id = ANY(${pathIds}::text[])
            AND original_width IS NOT NULL AND original_height IS NOT NULL`)
      : undefined,
    topicPairs.length > 0 ? latestTopicMessages(db, realmId, known.author!, topicPairs) : undefined,
  ]);
  const context: RenderContext = { linkifiers };
  // Messages preview image uploads unless the realm turned that off (needs no query).
  if (known.imagePreviews !== false) context.imagePreviews = { realmHost: known.realmHost ?? null };
  if (users) context.users = users;
  if (groups) context.groups = groups;
  if (streams) context.streams = streams;
  if (customEmoji) context.customEmoji = customEmoji;
  if (topicLatestIds && topicLatestIds.length > 0) context.topicLatestIds = topicLatestIds;
  if (dimensions && dimensions.length > 0) {
    context.imageDimensions = new Map(dimensions.map((row) => [row.path_id, `${row.original_width}x${row.original_height}`]));
    context.imageContentTypes = new Map(dimensions.flatMap((row) => (row.content_type ? [[row.path_id, row.content_type] as const] : [])));
  }
  return context;
}
