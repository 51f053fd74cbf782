// GET /messages (Zulip's get_messages_backend). Two ways to read, as in Zulip: from the user's own
// rows (user_message), or, when the narrow names a stream whose whole history the user may read,
// from the stream's messages with the user's flags joined in (messages from before they joined
// are "historical"). Every narrow term becomes an SQL condition; the newest/oldest pages use the
// (recipient_id, id) and (recipient_id, upper(subject), id) indexes.
import { fitsPostgresInteger } from "../lib/validation.ts";
import { createHash } from "node:crypto";
import { leanSql, Prisma, type PrismaClient, type StreamModel } from "@chat/db";
import { actorValidColumn, checkActorVersion, StaleActorError, type ActorVersion } from "../actor-cache.ts";
import { badRequest, JsonableError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { topicLinks } from "../lib/linkifiers.ts";
import { FLAG_BITS, WILDCARD_MENTION_BITS } from "../lib/message-flags.ts";
import { messageJson, type MessageJsonContext } from "../lib/message-json.ts";
import { BadNarrowError, RESOLVED_TOPIC_PREFIX, type NarrowTerm } from "../lib/narrow.ts";
import { MAX_PRIVATE_RECIPIENTS, RECIPIENT_HUDDLE, RECIPIENT_PERSONAL, RECIPIENT_STREAM } from "../lib/recipients.ts";
import { isGuest } from "../lib/roles.ts";
import { realmLinkifiers } from "./linkifiers.ts";
import type { CachedMessage, CachedSender, MessageCache } from "./message-cache.ts";
import { accessMessage, invalidMessageError, type AccessedMessage } from "./messages.ts";
import { canSeeStream, findStreamForHotPath, hasContentAccessViaGroups } from "./streams.ts";
import { usersByEmail } from "./users.ts";
import { VisibilityPolicy } from "./user-topics.ts";

/** Zulip's LARGER_THAN_MAX_MESSAGE_ID: the anchor that means "newest". */
export const NEWEST_ANCHOR = 10_000_000_000_000_000;
export const MAX_MESSAGES_PER_FETCH = 5000;

export type Anchor = number | "newest" | "oldest" | "first_unread";

/** Which messages: a range around an anchor in a narrow. */
export interface RangeRequest {
  anchor: Anchor;
  /**
   * Instead of a range: exactly these messages, those of them the narrow selects (feature level
   * 300). The anchor and the counts are then unused.
   */
  messageIds?: number[];
  /** Whether the anchor itself is part of the range (feature level 155; default true). */
  includeAnchor?: boolean;
  numBefore: number;
  numAfter: number;
  narrow: NarrowTerm[];
}

export interface FetchRequest extends RangeRequest {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** Feature level 334: the empty topic as "" (else as its display name). */
  allowEmptyTopicName?: boolean;
}

export interface FetchResult {
  /** Absent when the request named its messages (message_ids), as in Zulip. */
  anchor?: number;
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
  history_limited: boolean;
  /** Each message as JSON text (see messageJson). */
  messages: string[];
}

/** What a page query reads: which messages, in which version, with the user's flags. */
interface PageRow {
  id: number;
  version: number;
  flags: number | null;
  /** These three come only from the general page query, not the stream narrow's lean one. */
  recipient_type?: number;
  recipient_type_id?: number;
  stream_name?: string | null;
  match_content?: string;
  match_subject?: string;
  /** Present when the request acts as a node's copy of its actor (actor-cache.ts). */
  actor_valid?: boolean;
}

/** A user id operand, or null for an email; an id past Postgres' integer names nobody. */
function userIdOperand(operand: string | number): number | null {
  if (typeof operand === "string" && !/^\d+$/.test(operand)) return null;
  return fitsPostgresInteger(operand) ? Number(operand) : -1;
}

async function findUser(prisma: PrismaClient, actor: Actor, operand: string | number): Promise<UserProfile> {
  return (await findUsers(prisma, actor, [operand]))[0];
}

/** The users operands name (ids or emails), in a query for each kind; BAD_NARROW if one names nobody. */
async function findUsers(prisma: PrismaClient, actor: Actor, operands: Array<string | number>): Promise<UserProfile[]> {
  const ids: number[] = [];
  const emails: string[] = [];
  for (const operand of operands) {
    const id = userIdOperand(operand);
    if (id === null) emails.push(String(operand).trim().toLowerCase());
    else ids.push(id);
  }
  const rows =
    ids.length === 0 ? [] : await leanSql(prisma).query<UserProfile>(Prisma.sql`SELECT * FROM user_profile WHERE realm_id = ${actor.realm_id} AND id = ANY(${ids}::int[])`);
  const byId = new Map(rows.map((u) => [u.id, u]));
  // By the address the actor was shown (lib/email-visibility.ts), or a real one they may see.
  const byEmail = await usersByEmail(prisma, actor, emails);
  return operands.map((operand) => {
    const id = userIdOperand(operand);
    const user = id === null ? byEmail.get(String(operand).trim().toLowerCase()) : byId.get(id);
    if (!user) throw new BadNarrowError(`unknown user ${operand}`);
    return user;
  });
}

async function findStream(prisma: PrismaClient, actor: Actor, operand: string | number): Promise<{ stream: StreamModel; subscribed: boolean }> {
  // An archived stream's history stays readable to those with access (feature level 360).
  const found = await findStreamForHotPath(prisma, actor, operand, [actor.id], { includeArchived: true });
  // Not read (null) only for a public stream and a non-guest, whom these rules treat alike either way.
  let subscribed = found?.subscribed ?? false;
  // Those a private stream's can_add_subscribers_group or can_subscribe_group lets read it read it
  // as its subscribers do (feature level 354).
  if (found && !subscribed && found.stream.invite_only) subscribed = await hasContentAccessViaGroups(prisma, actor, found.stream.id);
  if (!found || !canSeeStream(actor, found.stream, subscribed)) throw new BadNarrowError(`unknown stream ${operand}`);
  return { stream: found.stream, subscribed };
}

/** May the user read everything ever sent to this stream (not only what they received)? */
function readsFullHistory(actor: Actor, stream: StreamModel, subscribed: boolean): boolean {
  if (subscribed) return stream.history_public_to_subscribers;
  // A web-public stream's history is anyone's, guests' too (Zulip's can_access_stream_history).
  if (stream.is_web_public && !stream.invite_only) return true;
  return !stream.invite_only && !isGuest(actor);
}

export interface Compiled {
  conditions: Prisma.Sql[];
  history: boolean;
  search: string | null;
  /** The stream every result belongs to, when a (non-negated) stream term names one. */
  stream: StreamModel | null;
}

/** Zulip's can_narrow_define_conversation: a DM narrow, or a stream and a topic. */
function namesConversation(narrow: NarrowTerm[]): boolean {
  const has = (operator: string) => narrow.some((term) => term.operator === operator);
  return has("pm-with") || (has("stream") && has("topic"));
}

const CONVERSATION_OPERATORS = ["stream", "topic", "pm-with"];

/**
 * `with:<message id>` (feature level 271): the narrow becomes the conversation the message is in
 * now (it may have moved), its other terms kept. A message the user cannot read leaves the
 * narrow as it was if that names a conversation, and is an error otherwise (as in Zulip).
 */
export async function resolveWithOperator(prisma: PrismaClient, actor: Actor, narrow: NarrowTerm[]): Promise<NarrowTerm[]> {
  const withTerm = narrow.find((term) => term.operator === "with");
  if (withTerm === undefined) return narrow;
  const rest = narrow.filter((term) => term !== withTerm);
  let message: AccessedMessage;
  try {
    message = await accessMessage(prisma, actor, Number(withTerm.operand));
  } catch (error) {
    if (!(error instanceof JsonableError)) throw error;
    if (namesConversation(rest)) return rest;
    throw new BadNarrowError("invalid 'with' operand");
  }
  const others = rest.filter((term) => !CONVERSATION_OPERATORS.includes(term.operator));
  const term = (operator: NarrowTerm["operator"], operand: NarrowTerm["operand"]): NarrowTerm => ({ operator, operand, negated: false });
  if (message.stream !== null) return [term("stream", message.stream.id), term("topic", message.subject), ...others];
  // A one-to-one message's recipient is its receiver's personal recipient: the sender is the other one.
  const participants =
    message.recipient_type === RECIPIENT_PERSONAL
      ? await leanSql(prisma).query<{ id: number }>(Prisma.sql`SELECT type_id AS id FROM recipient WHERE id = ${message.recipient_id} UNION SELECT ${message.sender_id}::int`)
      : await leanSql(prisma).query<{ id: number }>(Prisma.sql`SELECT user_id AS id FROM subscription WHERE recipient_id = ${message.recipient_id}`);
  return [term("pm-with", participants.map((row) => row.id)), ...others];
}

export async function compileNarrow(prisma: PrismaClient, actor: Actor, narrow: NarrowTerm[]): Promise<Compiled> {
  const conditions: Prisma.Sql[] = [];
  let history = false;
  let needsRows = false;
  let search: string | null = null;
  let pinned: StreamModel | null = null;
  for (const term of narrow) {
    let condition: Prisma.Sql | null = null;
    const operand = term.operand;
    switch (term.operator) {
      case "stream": {
        const { stream, subscribed } = await findStream(prisma, actor, operand as string | number);
        condition = Prisma.sql`m.recipient_id = ${stream.recipient_id}`;
        if (!term.negated) {
          pinned = stream;
          if (readsFullHistory(actor, stream, subscribed)) history = true;
        }
        break;
      }
      case "streams": {
        const webPublicOnly = operand === "web-public" ? Prisma.sql`AND is_web_public` : Prisma.empty;
        condition = Prisma.sql`m.recipient_id IN (SELECT recipient_id FROM stream WHERE realm_id = ${actor.realm_id} AND NOT invite_only AND NOT deactivated ${webPublicOnly})`;
        if (!term.negated && (!isGuest(actor) || operand === "web-public")) history = true;
        break;
      }
      case "topic":
      case "subject":
        condition = Prisma.sql`upper(m.subject) = upper(${String(operand)})`;
        break;
      case "is":
        // A resolved topic is a property of the message, not of the user's row.
        if (operand === "resolved") {
          condition = Prisma.sql`m.subject LIKE ${`${RESOLVED_TOPIC_PREFIX}%`}`;
          break;
        }
        // Nor is a followed topic: it is the user's policy for the message's topic (Zulip's
        // get_followed_topic_condition_sa), so a stream's history can be read for it.
        if (operand === "followed") {
          condition = Prisma.sql`EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${actor.id} AND ut.recipient_id = m.recipient_id
            AND ut.visibility_policy = ${VisibilityPolicy.FOLLOWED} AND lower(ut.topic_name) = lower(m.subject))`;
          break;
        }
        // Muted (feature level 366): a muted topic, or a muted stream's topic the user did not
        // unmute or follow (the complement of Zulip's exclude_muting_conditions; no DM is muted).
        if (operand === "muted") {
          const policy = (policies: number[]) => Prisma.sql`EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${actor.id} AND ut.recipient_id = m.recipient_id
            AND ut.visibility_policy = ANY(${policies}::int[]) AND lower(ut.topic_name) = lower(m.subject))`;
          condition = Prisma.sql`(${policy([VisibilityPolicy.MUTED])} OR (
            EXISTS (SELECT 1 FROM subscription ms WHERE ms.user_id = ${actor.id} AND ms.recipient_id = m.recipient_id AND ms.active AND ms.is_muted)
            AND NOT ${policy([VisibilityPolicy.UNMUTED, VisibilityPolicy.FOLLOWED])}))`;
          break;
        }
        needsRows = true;
        condition = {
          private: Prisma.sql`(um.flags & ${FLAG_BITS.is_private}) <> 0`,
          dm: Prisma.sql`(um.flags & ${FLAG_BITS.is_private}) <> 0`,
          starred: Prisma.sql`(um.flags & ${FLAG_BITS.starred}) <> 0`,
          mentioned: Prisma.sql`(um.flags & ${FLAG_BITS.mentioned | WILDCARD_MENTION_BITS}) <> 0`,
          alerted: Prisma.sql`(um.flags & ${FLAG_BITS.has_alert_word}) <> 0`,
          unread: Prisma.sql`(um.flags & ${FLAG_BITS.read}) = 0`,
          read: Prisma.sql`(um.flags & ${FLAG_BITS.read}) <> 0`,
        }[operand as string]!;
        break;
      case "sender": {
        const user = await findUser(prisma, actor, operand as string | number);
        condition = Prisma.sql`m.sender_id = ${user.id}`;
        break;
      }
      case "pm-with": {
        const operands = Array.isArray(operand) ? operand : typeof operand === "number" ? [operand] : String(operand).split(",").map((s) => s.trim()).filter(Boolean);
        if (operands.length > MAX_PRIVATE_RECIPIENTS) throw new BadNarrowError(`too many users in pm-with (limit: ${MAX_PRIVATE_RECIPIENTS})`);
        const users = await findUsers(prisma, actor, operands);
        const others = [...new Map(users.filter((u) => u.id !== actor.id).map((u) => [u.id, u])).values()];
        if (others.length === 0) {
          condition = Prisma.sql`(m.sender_id = ${actor.id} AND m.recipient_id = ${actor.recipient_id})`;
        } else if (others.length === 1) {
          const other = others[0];
          condition = Prisma.sql`((m.sender_id = ${actor.id} AND m.recipient_id = ${other.recipient_id}) OR (m.sender_id = ${other.id} AND m.recipient_id = ${actor.recipient_id}))`;
        } else {
          const ids = [actor.id, ...others.map((u) => u.id)].sort((a, b) => a - b);
          const hash = createHash("sha1").update(ids.join(",")).digest("hex");
          const [huddle] = await leanSql(prisma).query<{ recipient_id: number | null }>(Prisma.sql`SELECT recipient_id FROM huddle WHERE huddle_hash = ${hash}`);
          condition = huddle?.recipient_id ? Prisma.sql`m.recipient_id = ${huddle.recipient_id}` : Prisma.sql`FALSE`;
        }
        break;
      }
      case "dm-including": {
        // Every direct message the user takes part in: with oneself, that is all of one's DMs.
        const user = await findUser(prisma, actor, operand as string | number);
        needsRows = true;
        condition =
          user.id === actor.id
            ? Prisma.sql`(um.flags & ${FLAG_BITS.is_private}) <> 0`
            : Prisma.sql`(um.flags & ${FLAG_BITS.is_private}) <> 0 AND (
                (m.sender_id = ${user.id} AND m.recipient_id = ${actor.recipient_id}) OR (m.sender_id = ${actor.id} AND m.recipient_id = ${user.recipient_id})
                OR m.recipient_id IN (
                  SELECT s.recipient_id FROM subscription s JOIN recipient r ON r.id = s.recipient_id WHERE r.type = ${RECIPIENT_HUDDLE} AND s.user_id = ${user.id}))`;
        break;
      }
      case "with":
        break; // Replaced by its conversation (resolveWithOperator) before the narrow is compiled.
      case "group-pm-with": {
        const user = await findUser(prisma, actor, operand as string | number);
        condition = Prisma.sql`m.recipient_id IN (
          SELECT s.recipient_id FROM subscription s JOIN recipient r ON r.id = s.recipient_id WHERE r.type = ${RECIPIENT_HUDDLE} AND s.user_id = ${user.id})`;
        break;
      }
      case "id":
        condition = Prisma.sql`m.id = ${Number(operand)}::bigint`;
        break;
      case "near":
        break; // Clients use near to choose the anchor; it filters nothing.
      case "has":
        condition = {
          link: Prisma.sql`m.has_link`,
          image: Prisma.sql`m.has_image`,
          attachment: Prisma.sql`m.has_attachment`,
          reaction: Prisma.sql`EXISTS (SELECT 1 FROM reaction re WHERE re.message_id = m.id)`,
        }[operand as string]!;
        break;
      case "search": {
        const query = String(operand).trim();
        if (query === "") break;
        condition = Prisma.sql`to_tsvector('english', m.subject || ' ' || m.content) @@ websearch_to_tsquery('english', ${query})`;
        if (!term.negated) search = search === null ? query : `${search} ${query}`;
        break;
      }
    }
    if (condition) conditions.push(term.negated ? Prisma.sql`NOT (${condition})` : condition);
  }
  return { conditions, history: history && !needsRows, search, stream: pinned };
}

export function highlightColumns(search: string | null): Prisma.Sql {
  if (search === null) return Prisma.empty;
  const options = 'StartSel="<span class=""highlight"">", StopSel=</span>, HighlightAll=TRUE';
  return Prisma.sql`,
    ts_headline('english', coalesce(m.rendered_content, ''), websearch_to_tsquery('english', ${search}), ${options}) AS match_content,
    ts_headline('english', replace(replace(replace(m.subject, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), websearch_to_tsquery('english', ${search}), ${options}) AS match_subject`;
}

type Range = { op: "<" | "=" | ">"; id: number };

// A page reads only each message's id, version and the user's flags; the message itself comes
// from the node's message cache (message-cache.ts), which reads from the database only what it
// does not hold in that version.
const pageColumns = Prisma.sql`m.id, m.cache_version AS version, um.flags`;

/** The page's rows in ascending id order. */
async function selectPage(
  prisma: PrismaClient,
  actor: Actor,
  compiled: Compiled,
  page: { range: Range; order: "ASC" | "DESC"; limit: number },
  version: ActorVersion | null,
): Promise<PageRow[]> {
  const { range, order, limit } = page;
  const columns = version === null ? pageColumns : Prisma.sql`${pageColumns}, ${actorValidColumn(version)}`;
  if (limit <= 0) return [];
  // Order and bound by the column the driving index is sorted on, so no page needs a sort.
  const id = compiled.history ? Prisma.sql`m.id` : Prisma.sql`um.message_id`;
  // bigint: the "newest" sentinel (and any anchor a client sends) may exceed a message id's int range.
  const bound = { "<": Prisma.sql`${id} < ${range.id}::bigint`, "=": Prisma.sql`${id} = ${range.id}::bigint`, ">": Prisma.sql`${id} > ${range.id}::bigint` }[range.op];
  const from = compiled.history
    ? Prisma.sql`message m LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${actor.id}`
    : Prisma.sql`user_message um JOIN message m ON m.id = um.message_id`;
  const scope = compiled.history ? Prisma.sql`m.realm_id = ${actor.realm_id}` : Prisma.sql`um.user_id = ${actor.id}`;
  const where = Prisma.join([scope, bound, ...compiled.conditions], " AND ");
  const orderBy = order === "ASC" ? Prisma.sql`${id} ASC` : Prisma.sql`${id} DESC`;

  if (compiled.stream && compiled.search === null) {
    // A stream or topic narrow, the common case: every row is the pinned stream's, so one flat
    // index-ordered scan (the cheapest plan to make and to run) needs no recipient or stream join.
    // (The caller fills in the recipient from the pinned stream.)
    // Prepared, since planning costs about as much as running it. The limit is part of the text,
    // not a parameter: a generic plan for an unknown limit expects a large share of the stream and
    // scans it whole (measured: 11.8 ms against 1.5 ms). Clients use a few page sizes.
    const rows = await leanSql(prisma).query<PageRow>(Prisma.sql`
      SELECT ${columns} FROM ${from}
      WHERE ${where} ORDER BY ${orderBy} LIMIT ${Prisma.raw(String(Math.trunc(limit)))}`, { prepare: true });
    return order === "DESC" ? rows.reverse() : rows;
  }
  // Otherwise choose the page's ids first, so the search highlighting and joins run for its rows only.
  return leanSql(prisma).query<PageRow>(Prisma.sql`
    SELECT ${columns}, r.type AS recipient_type, r.type_id AS recipient_type_id, st.name AS stream_name
           ${highlightColumns(compiled.search)}
    FROM (SELECT m.id FROM ${from} WHERE ${where} ORDER BY ${orderBy} LIMIT ${limit}) page
    JOIN message m ON m.id = page.id
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${actor.id}
    JOIN recipient r ON r.id = m.recipient_id
    LEFT JOIN stream st ON r.type = ${RECIPIENT_STREAM} AND st.id = r.type_id
    ORDER BY m.id`);
}

async function firstUnread(prisma: PrismaClient, actor: Actor, compiled: Compiled): Promise<number | null> {
  const where = Prisma.join([Prisma.sql`um.user_id = ${actor.id}`, Prisma.sql`(um.flags & ${FLAG_BITS.read}) = 0`, ...compiled.conditions], " AND ");
  const rows = await leanSql(prisma).query<{ id: number }>(Prisma.sql`
    SELECT m.id FROM user_message um JOIN message m ON m.id = um.message_id WHERE ${where} ORDER BY um.message_id ASC LIMIT 1`);
  return rows[0]?.id ?? null;
}

type DisplayUser = { id: number; email: string; full_name: string; short_name: string; is_mirror_dummy: boolean };

/** A page row of the general page query with its message from the cache. */
type Fetched = { row: PageRow; message: CachedMessage };

/** The participants of each private conversation among the rows (of the general page query), for display_recipient. */
async function privateParticipants(prisma: PrismaClient, fetched: Fetched[]): Promise<Map<number, DisplayUser[]>> {
  const privateRows = fetched.filter(({ row }) => row.recipient_type !== undefined && row.recipient_type !== RECIPIENT_STREAM);
  if (privateRows.length === 0) return new Map();
  const huddles = [...new Set(privateRows.filter(({ row }) => row.recipient_type === RECIPIENT_HUDDLE).map(({ message }) => message.recipient_id))];
  const userIds = new Set<number>();
  for (const { row, message } of privateRows) {
    userIds.add(message.sender_id);
    if (row.recipient_type === RECIPIENT_PERSONAL) userIds.add(row.recipient_type_id!);
  }
  // One round trip: the senders and personal recipients, and every group conversation's members.
  const users = await leanSql(prisma).query<DisplayUser & { huddles: number[] | null }>(Prisma.sql`
    WITH members AS (SELECT recipient_id, user_id FROM subscription WHERE recipient_id = ANY(${huddles}::int[]))
    SELECT u.id, u.email, u.full_name, u.short_name, u.is_mirror_dummy,
           (SELECT array_agg(m.recipient_id) FROM members m WHERE m.user_id = u.id) AS huddles
    FROM user_profile u WHERE u.id = ANY(${[...userIds]}::int[]) OR u.id IN (SELECT user_id FROM members)`);
  const members = users.flatMap((u) => (u.huddles ?? []).map((recipient_id) => ({ recipient_id, user_id: u.id })));
  const byId = new Map(users.map((u) => [u.id, u]));
  const result = new Map<number, DisplayUser[]>();
  for (const { row, message } of privateRows) {
    const ids =
      row.recipient_type === RECIPIENT_HUDDLE
        ? members.filter((m) => m.recipient_id === message.recipient_id).map((m) => m.user_id)
        : [message.sender_id, row.recipient_type_id!];
    result.set(
      row.id,
      [...new Set(ids)]
        .sort((a, b) => a - b)
        .map((id) => byId.get(id))
        .filter((u) => u !== undefined)
        .map(({ id, email, full_name, short_name, is_mirror_dummy }) => ({ id, email, full_name, short_name, is_mirror_dummy })),
    );
  }
  return result;
}

/** A range's page rows, ascending, and what the client learns of its ends. */
interface SelectedRange {
  anchor: number;
  rows: PageRow[];
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
  narrow: NarrowTerm[];
  compiled: Compiled;
  linkifiers: Awaited<ReturnType<typeof realmLinkifiers>>;
}

/** Checks a range's bounds as Zulip does for GET /messages and POST /messages/flags/narrow. */
function checkRange(request: RangeRequest, max: number): void {
  if (request.messageIds !== undefined) {
    if (request.messageIds.length > max) throw badRequest(`Too many messages requested (maximum ${max}).`);
    return;
  }
  const { numBefore, numAfter } = request;
  if (numBefore < 0 || numAfter < 0) throw badRequest("num_before and num_after must not be negative");
  if (numBefore + numAfter > max) throw badRequest(`Too many messages requested (maximum ${max}).`);
  if (numBefore > 0 && numAfter > 0 && request.includeAnchor === false) throw badRequest("The anchor can only be excluded at an end of the range");
}

async function selectRange(
  prisma: PrismaClient,
  actor: Actor,
  request: RangeRequest,
  version: ActorVersion | null,
  withLinkifiers: boolean,
): Promise<SelectedRange> {
  const { numBefore, numAfter } = request;
  const narrow = await resolveWithOperator(prisma, actor, request.narrow);
  const compiled = await compileNarrow(prisma, actor, narrow);
  if (request.messageIds !== undefined) return selectNamed(prisma, actor, narrow, compiled, request.messageIds, version, withLinkifiers);

  let anchor: number;
  if (request.anchor === "newest") anchor = NEWEST_ANCHOR;
  else if (request.anchor === "oldest") anchor = 0;
  else if (request.anchor === "first_unread") anchor = (await firstUnread(prisma, actor, compiled)) ?? NEWEST_ANCHOR;
  else anchor = request.anchor;

  // One page below the anchor, the anchor itself, one page above; one extra row on each side
  // tells whether the oldest/newest matching message was reached.
  // Nothing lies above "newest" or below "oldest": those pages are not queried. The linkifiers
  // (for topic_links) are read alongside unless the narrow holds only private messages.
  const none = Promise.resolve([] as PageRow[]);
  const privateOnly = narrow.some(
    (t) => !t.negated && (t.operator === "pm-with" || t.operator === "group-pm-with" || t.operator === "dm-including" || (t.operator === "is" && (t.operand === "private" || t.operand === "dm"))),
  );
  const includeAnchor = request.includeAnchor !== false;
  const [before, at, after, linkifiers] = await Promise.all([
    anchor > 0 ? selectPage(prisma, actor, compiled, { range: { op: "<", id: anchor }, order: "DESC", limit: numBefore + 1 }, version) : none,
    includeAnchor && anchor > 0 && anchor < NEWEST_ANCHOR ? selectPage(prisma, actor, compiled, { range: { op: "=", id: anchor }, order: "ASC", limit: 1 }, version) : none,
    anchor < NEWEST_ANCHOR ? selectPage(prisma, actor, compiled, { range: { op: ">", id: anchor }, order: "ASC", limit: numAfter + 1 }, version) : none,
    privateOnly || !withLinkifiers ? Promise.resolve([]) : (actor.realmLinkifiers ?? realmLinkifiers(prisma, actor.realm_id)),
  ]);
  if (version !== null) {
    // Each page query checked the actor in its own snapshot; with no row to say so, ask apart.
    const pages = [before, at, after].filter((page) => page.length > 0);
    if (pages.some((page) => page[0].actor_valid !== true)) throw new StaleActorError();
    if (pages.length === 0) await checkActorVersion(prisma, version);
  }
  const foundOldest = before.length <= numBefore;
  const foundNewest = after.length <= numAfter || request.anchor === "newest";
  const rows = [...before.slice(Math.max(0, before.length - numBefore)), ...at, ...after.slice(0, numAfter)];
  return { anchor, rows, found_anchor: at.length === 1, found_oldest: foundOldest, found_newest: foundNewest, narrow, compiled, linkifiers };
}

/**
 * The named messages (message_ids, feature level 300) the narrow selects, ascending. Nothing is
 * found in the sense of a range: found_anchor, found_oldest and found_newest are false, as Zulip's.
 */
async function selectNamed(
  prisma: PrismaClient,
  actor: Actor,
  narrow: NarrowTerm[],
  compiled: Compiled,
  messageIds: number[],
  version: ActorVersion | null,
  withLinkifiers: boolean,
): Promise<SelectedRange> {
  // An id no message can have names nothing (and must not reach Postgres' integer).
  const ids = [...new Set(messageIds.filter((id) => id > 0 && fitsPostgresInteger(id)))];
  const named: Compiled = { ...compiled, conditions: [...compiled.conditions, Prisma.sql`m.id = ANY(${ids}::int[])`] };
  const [rows, linkifiers] = await Promise.all([
    // The limit rounded up to a power of two: the stream narrow's page query is prepared per limit.
    selectPage(prisma, actor, named, { range: { op: ">", id: 0 }, order: "ASC", limit: ids.length === 0 ? 0 : 2 ** Math.ceil(Math.log2(ids.length)) }, version),
    !withLinkifiers ? Promise.resolve([]) : (actor.realmLinkifiers ?? realmLinkifiers(prisma, actor.realm_id)),
  ]);
  if (version !== null) {
    if (rows.length > 0 && rows[0].actor_valid !== true) throw new StaleActorError();
    if (rows.length === 0) await checkActorVersion(prisma, version);
  }
  return { anchor: 0, rows, found_anchor: false, found_oldest: false, found_newest: false, narrow, compiled: named, linkifiers };
}

/** The ids of a range's messages, ascending (POST /messages/flags/narrow), bounded by `max`. */
export async function fetchMessageIds(
  prisma: PrismaClient,
  actor: Actor,
  request: RangeRequest,
  max: number,
): Promise<{ ids: number[]; found_oldest: boolean; found_newest: boolean }> {
  checkRange(request, max);
  const range = await selectRange(prisma, actor, request, null, false);
  return { ids: range.rows.map((row) => row.id), found_oldest: range.found_oldest, found_newest: range.found_newest };
}

/**
 * An incoming one-to-one message's recipient_id as its receiver sees it: the one their reply would
 * have, the sender's personal recipient (feature level 327); undefined for any other message.
 */
function incomingRecipientId(actor: Actor, row: PageRow, message: CachedMessage, users: Map<number, CachedSender>): number | undefined {
  if (row.recipient_type !== RECIPIENT_PERSONAL || row.recipient_type_id !== actor.id || message.sender_id === actor.id) return undefined;
  return users.get(message.sender_id)?.recipient_id ?? undefined;
}

/**
 * `version`: when the actor is a node's copy, the versions its rows must still have; the page
 * queries check them, and StaleActorError says they did not.
 */
export async function fetchMessages(prisma: PrismaClient, cache: MessageCache, actor: Actor, request: FetchRequest, version: ActorVersion | null = null): Promise<FetchResult> {
  checkRange(request, MAX_MESSAGES_PER_FETCH);
  const { anchor, rows, compiled, linkifiers, found_anchor, found_oldest, found_newest } = await selectRange(prisma, actor, request, version, true);

  const cached = await cache.messagesFor(rows);
  // A message deleted since the page was read is left out.
  const fetched: Fetched[] = [];
  const userIds = new Set<number>();
  for (const row of rows) {
    const message = cached.get(row.id);
    if (message === undefined) continue;
    fetched.push({ row, message });
    userIds.add(message.sender_id);
    for (const reaction of message.reactions ?? []) userIds.add(reaction.user_id);
  }
  // A stream narrow's rows (from the lean page query) carry no recipient columns: all are the stream's.
  const [users, participants] = await Promise.all([
    cache.sendersFor(actor.realm, userIds),
    compiled.stream ? new Map<number, DisplayUser[]>() : privateParticipants(prisma, fetched),
  ]);

  const context: MessageJsonContext = {
    realmJson: JSON.stringify(actor.realm.string_id),
    applyMarkdown: request.applyMarkdown,
    clientGravatar: request.clientGravatar,
    users,
    allowEmptyTopicName: request.allowEmptyTopicName,
  };
  // A page holds few topics and streams.
  const topicLinksJson = new Map<string, string>();
  const linksOf = (topic: string) => {
    let links = topicLinksJson.get(topic);
    if (links === undefined) topicLinksJson.set(topic, (links = JSON.stringify(topicLinks(topic, linkifiers))));
    return links;
  };
  const pinned = compiled.stream === null ? null : { id: compiled.stream.id, nameJson: JSON.stringify(compiled.stream.name) };
  const messages: string[] = [];
  for (const { row, message } of fetched) {
    const isStream = pinned !== null || row.recipient_type === RECIPIENT_STREAM;
    const recipient = isStream
      ? { streamId: pinned?.id ?? row.recipient_type_id!, displayRecipientJson: pinned?.nameJson ?? JSON.stringify(row.stream_name), topicLinksJson: linksOf(message.subject) }
      : { streamId: null, displayRecipientJson: JSON.stringify(participants.get(row.id) ?? []), topicLinksJson: "[]", recipientId: incomingRecipientId(actor, row, message, users) };
    const extra = row.match_content !== undefined ? { match_content: row.match_content, match_subject: row.match_subject } : null;
    const json = messageJson(message, recipient, row.flags, context, extra);
    // The sender is missing only if the user row is gone; such a message cannot be shown.
    if (json !== null) messages.push(json);
  }
  if (request.messageIds !== undefined) return { found_anchor, found_oldest, found_newest, history_limited: false, messages };
  return { anchor, found_anchor, found_oldest, found_newest, history_limited: false, messages };
}

/**
 * GET /messages/{message_id}'s `message` (feature level 120): the message as GET /messages shows
 * it to the user, flags included, or "Invalid message(s)" if they may not read it.
 */
export async function fetchOneMessage(prisma: PrismaClient, cache: MessageCache, actor: Actor, messageId: number, applyMarkdown: boolean, allowEmptyTopicName = false): Promise<string> {
  const message = await accessMessage(prisma, actor, messageId);
  const term = (operator: NarrowTerm["operator"], operand: number): NarrowTerm => ({ operator, operand, negated: false });
  // Without a row of their own, the user reads it as stream history, which a stream term allows.
  const narrow = message.user_message_flags === null && message.stream !== null ? [term("stream", message.stream.id), term("id", messageId)] : [term("id", messageId)];
  const result = await fetchMessages(prisma, cache, actor, { anchor: messageId, numBefore: 0, numAfter: 0, narrow, applyMarkdown, clientGravatar: false, allowEmptyTopicName });
  if (result.messages.length !== 1) throw invalidMessageError();
  return result.messages[0];
}
