// This node's copy of what GET /messages shows of each message, as Zulip keeps its message dicts
// in memcached. A page query then reads only ids, versions and the user's flags, and each message
// comes from memory as JSON text: nothing to read, parse or serialize again.
//
// Nothing is ever invalidated, so no node can miss a change: an entry is used only while the
// message's cache_version is what the page query read, and triggers bump that version on every
// change a fetch shows, reactions included (migration 0007); adding a submessage bumps it too
// (actions/submessages.ts). What a message shows of its sender and reactors is kept apart, per
// realm, valid while the realm's user_generation (read with the realm by every request's
// authentication) is unchanged: one rename must not stale every message its author ever sent.
import { LRUCache } from "lru-cache";
import { leanSql, Prisma, type PrismaClient } from "@chat/db";
import type { Realm } from "../models.ts";
import { avatarUrl } from "../lib/avatars.ts";
import type { Submessage } from "../lib/message-format.ts";

export interface ReactionRow {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

/** A message row as the cache loads it. */
export interface MessageRow {
  id: number;
  version: number;
  sender_id: number;
  recipient_id: number;
  subject: string;
  raw_content: string;
  rendered_content: string;
  /** Seconds since the epoch. */
  timestamp: number;
  sending_client: string;
  /** When the content was last edited. */
  last_edit_timestamp: number | null;
  /** When the message was last moved to another channel or topic (feature level 365). */
  last_moved_timestamp: number | null;
  is_me_message: boolean;
  reactions: ReactionRow[] | null;
  /** Oldest first; null for none. */
  submessages: Submessage[] | null;
}

export interface CachedMessage {
  id: number;
  version: number;
  sender_id: number;
  recipient_id: number;
  subject: string;
  /** JSON text of the fields that come from the row alone: `"subject":…,"timestamp":…,"client":…,"is_me_message":…` and the last edit's and move's times. */
  fields: string;
  /** The rendered and the raw content, each a JSON string. */
  rendered: string;
  raw: string;
  reactions: ReactionRow[] | null;
  /** The submessages as JSON text (`[]` for none). */
  submessages: string;
}

export interface SenderRow {
  id: number;
  realm_id: number;
  email: string;
  full_name: string;
  short_name: string;
  avatar_source: string;
  avatar_version: number;
  /** Their personal recipient (what a one-to-one message from them says to its receiver). */
  recipient_id: number | null;
}

export interface CachedSender {
  id: number;
  recipient_id: number | null;
  email: string;
  full_name: string;
  /** JSON text: `"sender_full_name":…,"sender_short_name":…,"sender_email":…`. */
  fields: string;
  /** The avatar_url as JSON, for clients without and with client_gravatar. */
  avatar: [string, string];
}

export function cachedMessageFromRow(row: MessageRow): CachedMessage {
  let fields = `"subject":${JSON.stringify(row.subject)},"timestamp":${row.timestamp},"client":${JSON.stringify(row.sending_client)},"is_me_message":${row.is_me_message}`;
  if (row.last_edit_timestamp !== null) fields += `,"last_edit_timestamp":${row.last_edit_timestamp}`;
  if (row.last_moved_timestamp !== null) fields += `,"last_moved_timestamp":${row.last_moved_timestamp}`;
  return {
    id: row.id,
    version: row.version,
    sender_id: row.sender_id,
    recipient_id: row.recipient_id,
    subject: row.subject,
    fields,
    rendered: JSON.stringify(row.rendered_content),
    raw: JSON.stringify(row.raw_content),
    reactions: row.reactions,
    submessages: row.submessages === null ? "[]" : JSON.stringify(row.submessages),
  };
}

export function cachedSenderFromRow(row: SenderRow): CachedSender {
  const avatar = (clientGravatar: boolean) => JSON.stringify(avatarUrl(row, clientGravatar));
  return {
    id: row.id,
    recipient_id: row.recipient_id,
    email: row.email,
    full_name: row.full_name,
    fields: `"sender_full_name":${JSON.stringify(row.full_name)},"sender_short_name":${JSON.stringify(row.short_name)},"sender_email":${JSON.stringify(row.email)}`,
    avatar: [avatar(false), avatar(true)],
  };
}

/** Roughly what an entry holds in memory: its strings (two bytes a character) and a fixed overhead. */
function entrySize(entry: CachedMessage): number {
  return 2 * (entry.fields.length + entry.rendered.length + entry.raw.length + entry.subject.length + entry.submessages.length) + 64 * (entry.reactions?.length ?? 0) + 200;
}

interface RealmSenders {
  generation: number;
  byId: Map<number, CachedSender>;
}

/** Senders kept per realm; past this many, the realm's copy starts over. */
const MAX_SENDERS_PER_REALM = 100_000;
const MAX_REALMS = 1000;

export class MessageCache {
  private readonly messages: LRUCache<number, CachedMessage> | null;
  private readonly senders = new Map<number, RealmSenders>();

  /** `maxBytes` 0 keeps no messages: every fetch reads them from the database. */
  constructor(
    private readonly db: PrismaClient,
    options: { maxBytes: number },
  ) {
    this.messages = options.maxBytes > 0 ? new LRUCache({ maxSize: options.maxBytes, sizeCalculation: entrySize }) : null;
  }

  /**
   * The messages of a page, by id, each at least as new as the version the page query read. A
   * message deleted since that query is missing.
   */
  async messagesFor(page: ReadonlyArray<{ id: number; version: number }>): Promise<Map<number, CachedMessage>> {
    const found = new Map<number, CachedMessage>();
    const missing: number[] = [];
    for (const { id, version } of page) {
      const entry = this.messages?.get(id);
      // Versions only grow: a newer entry (cached by a request that read after this page) will do.
      if (entry !== undefined && entry.version >= version) found.set(id, entry);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const rows = await leanSql(this.db).query<MessageRow>(
      Prisma.sql`
        SELECT m.id, m.cache_version AS version, m.sender_id, m.recipient_id, m.subject, m.content AS raw_content,
               coalesce(m.rendered_content, '') AS rendered_content, floor(extract(epoch FROM m.date_sent))::int AS timestamp,
               m.sending_client, floor(extract(epoch FROM m.last_edit_time))::int AS last_edit_timestamp,
               floor(extract(epoch FROM m.last_moved_time))::int AS last_moved_timestamp, m.is_me_message,
               (SELECT json_agg(json_build_object('emoji_name', rc.emoji_name, 'emoji_code', rc.emoji_code,
                                                  'reaction_type', rc.reaction_type, 'user_id', rc.user_id) ORDER BY rc.id)
                FROM reaction rc WHERE rc.message_id = m.id) AS reactions,
               (SELECT json_agg(json_build_object('msg_type', sm.msg_type, 'content', sm.content, 'message_id', sm.message_id,
                                                  'sender_id', sm.sender_id, 'id', sm.id) ORDER BY sm.id)
                FROM submessage sm WHERE sm.message_id = m.id) AS submessages
        FROM message m WHERE m.id = ANY(${missing}::int[])`,
      { prepare: true },
    );
    for (const row of rows) {
      const entry = cachedMessageFromRow(row);
      this.messages?.set(entry.id, entry);
      found.set(entry.id, entry);
    }
    return found;
  }

  /**
   * Users as messages show them (senders, reactors), as new as the realm's user_generation says
   * (the one its request authenticated with) or newer. A user not found is missing.
   */
  async sendersFor(realm: Pick<Realm, "id" | "user_generation">, ids: Iterable<number>): Promise<Map<number, CachedSender>> {
    let copy = this.senders.get(realm.id);
    // Generations only grow: a copy newer than this request's authentication will do.
    if (copy === undefined || copy.generation < realm.user_generation || copy.byId.size >= MAX_SENDERS_PER_REALM) {
      if (this.senders.size >= MAX_REALMS) this.senders.clear();
      copy = { generation: realm.user_generation, byId: new Map() };
      this.senders.set(realm.id, copy);
    }
    const found = new Map<number, CachedSender>();
    const missing: number[] = [];
    for (const id of ids) {
      const sender = copy.byId.get(id);
      if (sender !== undefined) found.set(id, sender);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    // Read after the generation was: the rows are at least as new as the copy they join.
    const rows = await leanSql(this.db).query<SenderRow>(
      Prisma.sql`
        SELECT id, realm_id, email, full_name, short_name, avatar_source, avatar_version, recipient_id
        FROM user_profile WHERE id = ANY(${missing}::int[])`,
      { prepare: true },
    );
    for (const row of rows) {
      const sender = cachedSenderFromRow(row);
      copy.byId.set(sender.id, sender);
      found.set(sender.id, sender);
    }
    return found;
  }
}
