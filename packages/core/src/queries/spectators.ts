// What people who are not logged in (Zulip's spectators) may read of an organization that lets
// them in (lib/web-public.ts): pages of messages in its web-public streams (Zulip's
// get_messages_backend for anonymous users), one such message, a web-public stream's topics, the
// files such messages link, and a /register state without a queue (fetch_initial_state_data with
// no user). Every query here is scoped to the web-public streams by its own base condition, never
// by what a client's narrow says: a narrow only ever takes messages away.
import { topicForClient } from "../lib/empty-topic.ts";
import { Prisma, type PrismaClient, type StreamModel, type Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import { JsonableError, NotLoggedInError } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { topicLinks } from "../lib/linkifiers.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { messageJson, type MessageJsonContext } from "../lib/message-json.ts";
import { BadNarrowError, type NarrowTerm } from "../lib/narrow.ts";
import { ROLE_GUEST } from "../lib/roles.ts";
import { fitsPostgresInteger } from "../lib/validation.ts";
import { spectatorsAllowed, webPublicStreamCondition } from "../lib/web-public.ts";
import { formatStream, STREAM_COLORS, streamGroupValues } from "../lib/stream-format.ts";
import { realmLinkifiers } from "./linkifiers.ts";
import type { MessageCache } from "./message-cache.ts";
import { MAX_MESSAGES_PER_FETCH, NEWEST_ANCHOR, type FetchRequest, type FetchResult } from "./message-fetch.ts";
import { invalidMessageError } from "./messages.ts";
import { fetchSections, sectionName, STATE_SECTIONS, type RegisterOptions } from "../state/initial-state.ts";

type Db = PrismaClient | Tx;
type State = Record<string, unknown>;

/** The organization a spectator's request names, if it lets spectators in; else Zulip's 401. */
export async function spectatorRealm(db: Db, realm: Realm, ctx: Pick<ServerContext, "webPublicStreamsEnabled">): Promise<Realm> {
  if (!(await spectatorsAllowed(db, realm, ctx))) throw new NotLoggedInError();
  return realm;
}

// Messages.

/**
 * The operators a spectator's narrow may use (Zulip 9.0's is_spectator_compatible, by their
 * canonical names: channel is stream, channels is streams, subject is topic).
 */
const SPECTATOR_OPERATORS: ReadonlySet<string> = new Set(["stream", "streams", "topic", "sender", "has", "search", "near", "id"]);

/**
 * Zulip's checks before a spectator's fetch: the narrow must say it asks for web-public messages
 * (a `channels:web-public` term, not negated) and use only operators a spectator may. Anything
 * else is the 401 an unauthenticated request gets, so that a client with broken credentials
 * learns it is not logged in rather than seeing an empty page.
 */
export function checkSpectatorNarrow(narrow: NarrowTerm[]): void {
  const webPublic = narrow.some((term) => term.operator === "streams" && term.operand === "web-public" && !term.negated);
  if (!webPublic || narrow.some((term) => !SPECTATOR_OPERATORS.has(term.operator))) throw new NotLoggedInError();
}

/** A web-public stream by id or name; any other stream (or none) is the same error, so nothing about private ones shows. */
async function webPublicStream(db: Db, realmId: number, operand: string | number): Promise<StreamModel> {
  const byId = typeof operand === "number" || /^\d+$/.test(operand);
  const id = byId && fitsPostgresInteger(operand) ? Number(operand) : -1;
  const rows = byId
    ? await db.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE id = ${id} AND ${webPublicStreamCondition(realmId)}`
    : await db.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE lower(name) = lower(${String(operand).trim()}) AND ${webPublicStreamCondition(realmId)}`;
  if (rows.length === 0) throw new BadNarrowError(`unknown web-public channel ${operand}`);
  return rows[0];
}

/**
 * A `sender` operand: a user id, or the address members are shown (the `email` field: never the
 * real one where the organization hides it), in the realm.
 */
async function senderOf(db: Db, realmId: number, operand: string | number): Promise<number> {
  const byId = typeof operand === "number" || /^\d+$/.test(operand);
  const rows = byId
    ? await db.$queryRaw<{ id: number }[]>`SELECT id FROM user_profile WHERE realm_id = ${realmId} AND id = ${fitsPostgresInteger(operand) ? Number(operand) : -1}`
    : await db.$queryRaw<{ id: number }[]>`SELECT id FROM user_profile WHERE realm_id = ${realmId} AND lower(email) = lower(${String(operand).trim()})`;
  if (rows.length === 0) throw new BadNarrowError(`unknown user ${operand}`);
  return rows[0].id;
}

interface SpectatorQuery {
  conditions: Prisma.Sql[];
  search: string | null;
}

async function compileSpectatorNarrow(db: Db, realm: Realm, narrow: NarrowTerm[]): Promise<SpectatorQuery> {
  // The base: the realm's messages in its web-public streams. Every term below only narrows it.
  const conditions: Prisma.Sql[] = [
    Prisma.sql`m.realm_id = ${realm.id}`,
    Prisma.sql`m.recipient_id IN (SELECT recipient_id FROM stream WHERE ${webPublicStreamCondition(realm.id)})`,
  ];
  let search: string | null = null;
  for (const term of narrow) {
    const operand = term.operand;
    let condition: Prisma.Sql | null = null;
    switch (term.operator) {
      case "stream":
        condition = Prisma.sql`m.recipient_id = ${(await webPublicStream(db, realm.id, operand as string | number)).recipient_id}`;
        break;
      case "streams":
        // web-public is the base; public (a superset) adds nothing a spectator may see.
        condition = operand === "public" ? Prisma.sql`m.recipient_id IN (SELECT recipient_id FROM stream WHERE realm_id = ${realm.id} AND NOT invite_only)` : Prisma.sql`TRUE`;
        break;
      case "topic":
        condition = Prisma.sql`upper(m.subject) = upper(${String(operand)})`;
        break;
      case "sender":
        condition = Prisma.sql`m.sender_id = ${await senderOf(db, realm.id, operand as string | number)}`;
        break;
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
      case "id":
        condition = Prisma.sql`m.id = ${Number(operand)}::bigint`;
        break;
      case "near":
        break;
      default:
        // checkSpectatorNarrow let nothing else through; refuse rather than ignore, should it ever.
        throw new NotLoggedInError();
    }
    if (condition) conditions.push(term.negated ? Prisma.sql`NOT (${condition})` : condition);
  }
  return { conditions, search };
}

interface SpectatorRow {
  id: number;
  version: number;
  stream_id: number;
  stream_name: string;
  match_content?: string;
  match_subject?: string;
}

function highlightColumns(search: string | null): Prisma.Sql {
  if (search === null) return Prisma.empty;
  const options = 'StartSel="<span class=""highlight"">", StopSel=</span>, HighlightAll=TRUE';
  return Prisma.sql`,
    ts_headline('english', coalesce(m.rendered_content, ''), websearch_to_tsquery('english', ${search}), ${options}) AS match_content,
    ts_headline('english', replace(replace(replace(m.subject, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), websearch_to_tsquery('english', ${search}), ${options}) AS match_subject`;
}

async function selectSpectatorPage(db: Db, query: SpectatorQuery, op: "<" | "=" | ">", anchor: number, limit: number): Promise<SpectatorRow[]> {
  if (limit <= 0) return [];
  const bound = { "<": Prisma.sql`m.id < ${anchor}::bigint`, "=": Prisma.sql`m.id = ${anchor}::bigint`, ">": Prisma.sql`m.id > ${anchor}::bigint` }[op];
  const where = Prisma.join([...query.conditions, bound], " AND ");
  const order = op === "<" ? Prisma.sql`DESC` : Prisma.sql`ASC`;
  return db.$queryRaw<SpectatorRow[]>`
    SELECT m.id, m.cache_version AS version, st.id AS stream_id, st.name AS stream_name ${highlightColumns(query.search)}
    FROM (SELECT m.id FROM message m WHERE ${where} ORDER BY m.id ${order} LIMIT ${limit}) page
    JOIN message m ON m.id = page.id
    JOIN stream st ON st.recipient_id = m.recipient_id
    ORDER BY m.id`;
}

/**
 * GET /messages for a spectator: the page around the anchor among the web-public messages the
 * narrow selects, each flagged read (Zulip treats a spectator's history as read), with avatar
 * URLs always given (client_gravatar is ignored, as in Zulip).
 */
export async function fetchWebPublicMessages(db: Db, cache: MessageCache, realm: Realm, request: FetchRequest): Promise<FetchResult> {
  const { numBefore, numAfter } = request;
  if (request.messageIds !== undefined && request.messageIds.length > MAX_MESSAGES_PER_FETCH) throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  if (numBefore < 0 || numAfter < 0) throw new JsonableError("num_before and num_after must not be negative");
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  if (numBefore > 0 && numAfter > 0 && request.includeAnchor === false) throw new JsonableError("The anchor can only be excluded at an end of the range");
  checkSpectatorNarrow(request.narrow);
  const query = await compileSpectatorNarrow(db, realm, request.narrow);
  // Named messages (message_ids, feature level 300): those the narrow selects, no range around them.
  const named = request.messageIds === undefined ? null : [...new Set(request.messageIds.filter((id) => id > 0 && fitsPostgresInteger(id)))];
  if (named !== null) query.conditions.push(Prisma.sql`m.id = ANY(${named}::int[])`);
  // A spectator has nothing unread: first_unread is the newest (Zulip's find_first_unread_anchor without a user).
  const anchor = request.anchor === "newest" || request.anchor === "first_unread" ? NEWEST_ANCHOR : request.anchor === "oldest" ? 0 : request.anchor;
  const includeAnchor = request.includeAnchor !== false;
  const none = Promise.resolve([] as SpectatorRow[]);
  const [before, at, after, linkifiers] = await Promise.all([
    named === null && anchor > 0 ? selectSpectatorPage(db, query, "<", anchor, numBefore + 1) : none,
    named === null && includeAnchor && anchor > 0 && anchor < NEWEST_ANCHOR ? selectSpectatorPage(db, query, "=", anchor, 1) : none,
    named !== null ? selectSpectatorPage(db, query, ">", 0, named.length) : anchor < NEWEST_ANCHOR ? selectSpectatorPage(db, query, ">", anchor, numAfter + 1) : none,
    realmLinkifiers(db as PrismaClient, realm.id),
  ]);
  const rows = named !== null ? after : [...before.slice(Math.max(0, before.length - numBefore)), ...at, ...after.slice(0, numAfter)];
  const cached = await cache.messagesFor(rows);
  const senderIds = new Set<number>();
  for (const row of rows) {
    const message = cached.get(row.id);
    if (message === undefined) continue;
    senderIds.add(message.sender_id);
    for (const reaction of message.reactions ?? []) senderIds.add(reaction.user_id);
  }
  const context: MessageJsonContext = {
    realmJson: JSON.stringify(realm.string_id),
    applyMarkdown: request.applyMarkdown,
    clientGravatar: false,
    users: await cache.sendersFor(realm, senderIds),
    allowEmptyTopicName: request.allowEmptyTopicName,
  };
  const messages: string[] = [];
  for (const row of rows) {
    const message = cached.get(row.id);
    if (message === undefined) continue;
    const recipient = { streamId: row.stream_id, displayRecipientJson: JSON.stringify(row.stream_name), topicLinksJson: JSON.stringify(topicLinks(message.subject, linkifiers)) };
    const extra = row.match_content !== undefined ? { match_content: row.match_content, match_subject: row.match_subject } : null;
    const json = messageJson(message, recipient, FLAG_BITS.read, context, extra);
    if (json !== null) messages.push(json);
  }
  if (named !== null) return { found_anchor: false, found_oldest: false, found_newest: false, history_limited: false, messages };
  return {
    anchor,
    found_anchor: at.length === 1,
    found_oldest: before.length <= numBefore,
    found_newest: after.length <= numAfter || request.anchor === "newest",
    history_limited: false,
    messages,
  };
}

/**
 * GET /messages/{message_id} for a spectator (Zulip's access_web_public_message): a message of a
 * web-public stream, with its Markdown source; any other id is "Invalid message(s)".
 */
export async function fetchWebPublicMessage(db: Db, cache: MessageCache, realm: Realm, messageId: number, applyMarkdown: boolean, allowEmptyTopicName = false): Promise<{ rawContent: string; message: string }> {
  if (messageId <= 0 || !fitsPostgresInteger(messageId)) throw invalidMessageError();
  const term = (operator: NarrowTerm["operator"], operand: string | number): NarrowTerm => ({ operator, operand, negated: false });
  const result = await fetchWebPublicMessages(db, cache, realm, {
    anchor: messageId,
    numBefore: 0,
    numAfter: 0,
    narrow: [term("streams", "web-public"), term("id", messageId)],
    applyMarkdown,
    clientGravatar: false,
    allowEmptyTopicName,
  });
  if (result.messages.length !== 1) throw invalidMessageError();
  const [row] = await db.$queryRaw<{ content: string }[]>`SELECT content FROM message WHERE id = ${messageId} AND realm_id = ${realm.id}`;
  if (row === undefined) throw invalidMessageError();
  return { rawContent: row.content, message: result.messages[0] };
}

/** GET /users/me/{stream_id}/topics for a spectator (Zulip's access_web_public_stream): newest first. */
export async function webPublicStreamTopics(db: Db, realm: Realm, streamId: number, allowEmptyTopicName = false): Promise<Array<{ name: string; max_id: number }>> {
  const id = fitsPostgresInteger(streamId) ? streamId : -1;
  const [stream] = await db.$queryRaw<{ recipient_id: number }[]>`SELECT recipient_id FROM stream WHERE id = ${id} AND ${webPublicStreamCondition(realm.id)}`;
  if (stream === undefined) throw new JsonableError("Invalid channel ID");
  const topics = await db.$queryRaw<{ name: string; max_id: number }[]>`
    SELECT DISTINCT ON (upper(subject)) subject AS name, id AS max_id
    FROM message WHERE recipient_id = ${stream.recipient_id} ORDER BY upper(subject), id DESC`;
  return topics.sort((a, b) => b.max_id - a.max_id).map((topic) => ({ ...topic, name: topicForClient(topic.name, allowEmptyTopicName) }));
}

// Files.

/**
 * Whether a spectator may download an upload (Zulip's validate_attachment_request_for_spectator_access):
 * it is the organization's and a message of a web-public stream links it. The caller has checked
 * that the organization lets spectators in.
 */
export async function webPublicAttachmentVisible(db: Db, realm: Realm, pathId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM attachment a
      JOIN attachment_message am ON am.attachment_id = a.id
      JOIN message m ON m.id = am.message_id
      JOIN stream st ON st.recipient_id = m.recipient_id
      WHERE a.path_id = ${pathId} AND a.realm_id = ${realm.id} AND m.realm_id = ${realm.id} AND ${webPublicStreamCondition(realm.id, "st")}
    ) AS found`;
  return rows[0]?.found === true;
}

// /register.

/** Zulip's spectator: a fabricated guest with id 0, who is in nothing and owns nothing. */
const SPECTATOR_FIELDS = {
  id: 0,
  email: "username@example.com",
  delivery_email: "username@example.com",
  full_name: "Anonymous User",
  short_name: "",
  role: ROLE_GUEST,
  is_active: true,
  is_bot: false,
  bot_type: null,
  bot_owner_id: null,
  password_hash: null,
  api_key: "",
  avatar_source: "G",
  avatar_version: 1,
  recipient_id: null,
  pointer: -1,
};

/** Each user_profile column's default, read once per database: what a spectator's settings are (a new user's). */
const columnDefaults = new WeakMap<object, Promise<Record<string, unknown>>>();

function parseColumnDefault(text: string | null): unknown {
  if (text === null) return null;
  let value = text.trim();
  // 'google'::text, '-1'::integer, (0)::bigint
  for (;;) {
    const cast = value.match(/^(.*)::[a-z ]+(\[\])?$/i);
    if (!cast) break;
    value = cast[1].trim();
  }
  value = value.replace(/^\((.*)\)$/, "$1");
  if (value === "true" || value === "false") return value === "true";
  if (/^-?\d+$/.test(value)) return Number(value);
  const quoted = value.match(/^'(.*)'$/s);
  if (quoted) {
    const inner = quoted[1].replace(/''/g, "'");
    return /^-?\d+$/.test(inner) ? Number(inner) : inner;
  }
  if (/^(now\(\)|CURRENT_TIMESTAMP)$/i.test(value)) return new Date();
  return null;
}

async function userProfileDefaults(db: Db): Promise<Record<string, unknown>> {
  let defaults = columnDefaults.get(db);
  if (defaults === undefined) {
    defaults = (async () => {
      const rows = await db.$queryRaw<{ column_name: string; column_default: string | null }[]>`
        SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'user_profile' AND table_schema = current_schema()`;
      return Object.fromEntries(rows.map((row) => [row.column_name, parseColumnDefault(row.column_default)]));
    })();
    defaults.catch(() => columnDefaults.delete(db));
    columnDefaults.set(db, defaults);
  }
  return defaults;
}

/** The spectator as an Actor: a new user's settings, the realm's language, nothing of anyone's. */
async function spectatorActor(db: Db, realm: Realm): Promise<Actor> {
  const defaults = await userProfileDefaults(db);
  return { ...defaults, ...SPECTATOR_FIELDS, realm_id: realm.id, realm, default_language: realm.default_language, date_joined: new Date(), timezone: "" } as unknown as Actor;
}

/** Sections a spectator gets nothing of, or a fixed value (Zulip's fetch_initial_state_data with no user). */
const SPECTATOR_SECTIONS: Record<string, State | null> = {
  // No `streams`: Zulip's include_streams is false for spectators; `subscriptions` lists what they may read.
  stream: null,
  presence: { presences: {} },
  user_status: { user_status: {} },
};

/**
 * The web-public streams as a new subscriber would have them (Zulip's get_web_public_subs): what a
 * spectator's client shows in its stream list. No stream address: that is its members' business.
 */
async function webPublicSubscriptions(db: Db, realm: Realm): Promise<State[]> {
  const streams = await db.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE ${webPublicStreamCondition(realm.id)} ORDER BY id`;
  const values = await streamGroupValues(db, streams);
  return streams.map((stream, i) => ({
    ...formatStream(stream, values),
    color: STREAM_COLORS[i % STREAM_COLORS.length],
    is_muted: false,
    in_home_view: true,
    pin_to_top: false,
    desktop_notifications: true,
    audible_notifications: true,
    push_notifications: true,
    email_notifications: true,
    wildcard_mentions_notify: true,
    email_address: "",
  }));
}

/** A user as a spectator sees them: no custom profile fields, no address beyond the one everyone is shown. */
function spectatorUserView(user: Record<string, unknown>): Record<string, unknown> {
  const { profile_data: _profileData, ...rest } = user;
  if ("delivery_email" in rest && rest.delivery_email !== rest.email) rest.delivery_email = null;
  return rest;
}

/**
 * POST /register for a spectator (Zulip's do_events_register with no user): the state a new
 * guest of the organization would get, with no queue (queue_id null) and none of anyone's own.
 */
export async function spectatorState(db: PrismaClient, realm: Realm, options: RegisterOptions, ctx: ServerContext): Promise<State> {
  const actor = await spectatorActor(db, realm);
  const wanted = Object.keys(STATE_SECTIONS).filter((section) => options.eventTypes === null || options.eventTypes.some((name) => sectionName(name) === section));
  const read = wanted.filter((section) => !(section in SPECTATOR_SECTIONS) && section !== "subscription");
  // Without the node's copies: they are kept per member view, and a spectator's is its own.
  const state: State = await fetchSections(db, actor, options, { ...ctx, realmState: undefined }, read);
  for (const section of wanted) if (SPECTATOR_SECTIONS[section]) Object.assign(state, SPECTATOR_SECTIONS[section]);
  if (wanted.includes("subscription")) Object.assign(state, { subscriptions: await webPublicSubscriptions(db, realm), unsubscribed: [], never_subscribed: [] });
  for (const key of ["realm_users", "realm_non_active_users"]) {
    if (Array.isArray(state[key])) state[key] = (state[key] as Array<Record<string, unknown>>).map(spectatorUserView);
  }
  // A spectator has no email_address_visibility of its own: new users' (realm_user_settings_defaults).
  if ("user_settings" in state) (state.user_settings as State).email_address_visibility = realm.email_address_visibility;
  return state;
}
