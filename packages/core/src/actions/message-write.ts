// Writing messages: one statement writes any number of messages with every per-user row, the
// streams' first_message_id, and the outbox rows of their events. Concurrent sends share it
// (ActionRunner.runGrouped); a message sent inside another action's transaction writes alone.
import { leanSql, Prisma, type PrismaClient, type Tx } from "@chat/db";
import { serializedChangeBatch, type ChangeBatch, type RoutedEvent, type ServiceTrigger } from "@chat/bus";
import type { GroupedWrite } from "../events.ts";
import { MARKDOWN_VERSION, type RenderedMessage } from "../lib/markdown.ts";
import { CLIENT_FLAG_NAMES, FLAG_BITS, WILDCARD_MENTION_BITS } from "../lib/message-flags.ts";
import type { WireMessage } from "../lib/message-format.ts";

/** A message to write: the row's values, who receives it, and its event without id and timestamp. */
export interface MessageWrite {
  realmId: number;
  senderId: number;
  recipientId: number;
  topic: string;
  content: string;
  rendered: Pick<RenderedMessage, "html" | "hasLink" | "hasImage" | "isMeMessage">;
  client: string;
  /** Whether the sender's own row is written read. */
  readBySender: boolean;
  recipients: { subscribersOf: number } | { userIds: number[] };
  /** The stream whose first_message_id the message may set. */
  streamId: number | null;
  baseFlags: number;
  /** Users whose `mentioned` flag is set (if they are recipients). */
  mentionedUserIds: number[];
  /** Whether every recipient gets `wildcard_mentioned`. */
  wildcard: boolean;
  /** Whether the topic's participants (senders and reactors, and the sender) get `topic_wildcard_mentioned`. */
  topicWildcard: boolean;
  /** Service bots the message triggers; they travel with its event to the worker tier. */
  services: ServiceTrigger[];
  /** The `message` event's message, but for `id` and `timestamp` (known once inserted). */
  event: Omit<WireMessage, "id" | "timestamp">;
  allPublicStreams: boolean;
  /** The sending request's X-Request-Id, which its change batch carries (see ChangeOrigin). */
  requestId?: string;
}

export interface WrittenMessage {
  id: number;
  /** Its `message` event, routed to every recipient with that recipient's flags. */
  event: RoutedEvent;
}

// Zulip's alert word boundaries: a word matches (case-insensitively) at the start or after one of
// these, and at the end or before one of those. Regular-expression characters in the word are escaped.
const ALERT_BEFORE = "(^|[\\s(\".,';\\[*`>])";
const ALERT_AFTER = "($|[\\s)\"?:.,';\\]!*`])";
const ALERT_META = "([.^$*+?()\\[\\]{}|\\\\])";
const ALERT_META_ESCAPED = "\\\\\\1";

/** Whether the alert word `aw.word` occurs in `content` (an SQL expression), as Zulip matches them. */
export function alertWordMatches(content: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`lower(${content}) ~ (${ALERT_BEFORE}::text || regexp_replace(lower(aw.word), ${ALERT_META}::text, ${ALERT_META_ESCAPED}::text, 'g') || ${ALERT_AFTER}::text)`;
}

// A user_message row's flag names as JSON text, in flagsToNames's order. This runs once per
// recipient (1,000 times for a big stream), so the two commonest values are written out and the
// rest built from plain expressions. Built from constants, not client input.
const CLIENT_FLAG_MASK = CLIENT_FLAG_NAMES.reduce((mask, [, bit]) => mask | bit, 0);
const FLAG_NAMES_JSON = Prisma.sql`CASE um.flags & ${Prisma.raw(String(CLIENT_FLAG_MASK))}
  WHEN 0 THEN '[]' WHEN ${Prisma.raw(String(FLAG_BITS.read))} THEN '["read"]'
  ELSE to_json(array_remove(ARRAY[${Prisma.join([
    ...CLIENT_FLAG_NAMES.map(([name, bit]) => Prisma.raw(`CASE WHEN um.flags & ${bit} <> 0 THEN '${name}' END`)),
    Prisma.raw(`CASE WHEN um.flags & ${WILDCARD_MENTION_BITS} <> 0 THEN 'wildcard_mentioned' END`),
  ])}]::text[], NULL))::text END`;

interface WrittenRow {
  ord: number;
  id: number;
  timestamp: number;
  recipient_count: number;
  /** Without an outbox: the event's `users`, every recipient with its flag names, as JSON text. */
  users: string | null;
  outbox_id: string | null;
  /** With an outbox, on the first row of each realm: the outbox row's events as JSON text. */
  outbox_events: string | null;
  /** With it, the request ids of the realm's messages (null if none had one). */
  outbox_request_ids: string[] | null;
}

/**
 * One statement for every message in `writes`: each message (ids drawn in order, so events keep
 * the order of the writes), a user_message row for every recipient user with its flags
 * (`mentioned`, `wildcard_mentioned`, and `has_alert_word` from the recipients' alert words), the
 * streams' first_message_id and, with `outbox`, one outbox row per realm holding its messages'
 * events, built by Postgres from the rows it just wrote. The statement is the whole change.
 */
async function writeMessageRows(db: PrismaClient | Tx, writes: MessageWrite[], outbox: boolean): Promise<WrittenRow[]> {
  const column = <T>(pick: (write: MessageWrite) => T) => writes.map(pick);
  const pairs = (pick: (write: MessageWrite) => number[]) => {
    const ords: number[] = [];
    const users: number[] = [];
    writes.forEach((write, i) => {
      for (const user of pick(write)) {
        ords.push(i + 1);
        users.push(user);
      }
    });
    return { ords, users };
  };
  const listed = pairs((w) => ("userIds" in w.recipients ? w.recipients.userIds : []));
  const mentioned = pairs((w) => w.mentionedUserIds);
  return leanSql(db).query<WrittenRow>(Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(
        ${column((w) => w.realmId)}::int[], ${column((w) => w.senderId)}::int[], ${column((w) => w.recipientId)}::int[],
        ${column((w) => w.topic)}::text[], ${column((w) => w.content)}::text[], ${column((w) => w.rendered.html)}::text[],
        ${column((w) => w.client)}::text[], ${column((w) => w.rendered.hasLink)}::boolean[], ${column((w) => w.rendered.hasImage)}::boolean[],
        ${column((w) => w.rendered.isMeMessage)}::boolean[],
        ${column((w) => ("subscribersOf" in w.recipients ? w.recipients.subscribersOf : null))}::int[],
        ${column((w) => w.streamId)}::int[], ${column((w) => w.baseFlags)}::int[], ${column((w) => w.wildcard)}::boolean[],
        ${column((w) => JSON.stringify(w.event))}::text[], ${column((w) => w.allPublicStreams)}::boolean[],
        ${column((w) => (w.services.length > 0 ? JSON.stringify(w.services) : null))}::text[],
        ${column((w) => w.requestId ?? null)}::text[], ${column((w) => w.readBySender)}::boolean[],
        ${column((w) => w.topicWildcard)}::boolean[]
      ) WITH ORDINALITY AS t(realm_id, sender_id, recipient_id, subject, content, rendered, client, has_link, has_image,
                             is_me, subscribers_of, stream_id, base_flags, wildcard, event, all_public, services, request_id,
                             read_by_sender, topic_wildcard, ord)
    ), ids AS (
      -- Drawn in the writes' order (a CTE with nextval is evaluated once, row by row).
      SELECT ord, nextval('message_id_seq')::int AS id FROM (SELECT ord FROM input ORDER BY ord) o
    ), m AS (
      INSERT INTO message (id, realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version,
                           sending_client, has_link, has_image, is_me_message)
      SELECT ids.id, i.realm_id, i.sender_id, i.recipient_id, i.subject, i.content, i.rendered, ${MARKDOWN_VERSION},
             i.client, i.has_link, i.has_image, i.is_me
      FROM input i JOIN ids USING (ord)
    ), recipients AS (
      -- Disjoint parts, so no deduplication: a stream's subscribers (unique per stream), the
      -- listed users of a private message (unique, the sender among them), and the sender of a
      -- stream message who is not subscribed.
      SELECT i.ord, s.user_id FROM input i
      JOIN subscription s ON s.recipient_id = i.subscribers_of AND s.active AND s.is_user_active
      UNION ALL
      SELECT ord, user_id FROM unnest(${listed.ords}::int[], ${listed.users}::int[]) AS l(ord, user_id)
      UNION ALL
      SELECT i.ord, i.sender_id FROM input i
      WHERE i.subscribers_of IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM subscription s
        WHERE s.recipient_id = i.subscribers_of AND s.user_id = i.sender_id AND s.active AND s.is_user_active)
    ), mentioned AS (
      SELECT ord, user_id FROM unnest(${mentioned.ords}::int[], ${mentioned.users}::int[]) AS x(ord, user_id)
    ), alerted AS (
      -- The realm's alert words are few: match each once per message, not once per recipient.
      SELECT DISTINCT i.ord, aw.user_id FROM input i JOIN alert_word aw ON aw.realm_id = i.realm_id
      WHERE ${alertWordMatches(Prisma.sql`i.content`)}
    ), topic_participants AS (
      -- Zulip's participants_for_topic, for @**topic**: who sent to the topic or reacted there.
      SELECT i.ord, tm.sender_id AS user_id FROM input i
      JOIN message tm ON tm.recipient_id = i.recipient_id AND upper(tm.subject) = upper(i.subject) WHERE i.topic_wildcard
      UNION
      SELECT i.ord, re.user_id FROM input i
      JOIN message tm ON tm.recipient_id = i.recipient_id AND upper(tm.subject) = upper(i.subject)
      JOIN reaction re ON re.message_id = tm.id WHERE i.topic_wildcard
      UNION
      SELECT ord, sender_id FROM input WHERE topic_wildcard
    ), muters AS (
      -- Who muted the sender (Zulip's get_muting_users): the message arrives read for them.
      SELECT i.ord, mu.user_id FROM input i JOIN muted_user mu ON mu.muted_user_id = i.sender_id
    ), um AS (
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT r.user_id, ids.id, i.base_flags
        | CASE WHEN r.user_id = i.sender_id AND i.read_by_sender THEN ${FLAG_BITS.read}::int ELSE 0 END
        | CASE WHEN (r.ord, r.user_id) IN (SELECT ord, user_id FROM muters) THEN ${FLAG_BITS.read}::int ELSE 0 END
        | CASE WHEN (r.ord, r.user_id) IN (SELECT ord, user_id FROM mentioned) THEN ${FLAG_BITS.mentioned}::int ELSE 0 END
        | CASE WHEN i.wildcard THEN ${FLAG_BITS.wildcard_mentioned}::int ELSE 0 END
        | CASE WHEN i.topic_wildcard AND (r.ord, r.user_id) IN (SELECT ord, user_id FROM topic_participants)
               THEN ${FLAG_BITS.topic_wildcard_mentioned}::int ELSE 0 END
        | CASE WHEN (r.ord, r.user_id) IN (SELECT ord, user_id FROM alerted) THEN ${FLAG_BITS.has_alert_word}::int ELSE 0 END
      FROM recipients r JOIN input i USING (ord) JOIN ids USING (ord)
      RETURNING user_id, message_id, flags
    ), first_message AS (
      UPDATE stream SET first_message_id = f.id
      FROM (SELECT i.stream_id, min(ids.id) AS id FROM input i JOIN ids USING (ord) WHERE i.stream_id IS NOT NULL GROUP BY i.stream_id) f
      WHERE stream.id = f.stream_id AND stream.first_message_id IS NULL
    ), delivered AS (
      -- The outbox's events are JSON text put together here: building and parsing json(b) values
      -- for every recipient cost several times more (measured: 3.1 ms against 0.5 ms for 1,000).
      -- The server publishes the same text as it is (serializedChangeBatch). Recipients go in
      -- groups that share their flags ({"flags":[...],"ids":[...]}): most share none.
      SELECT g.message_id, sum(g.n)::int AS recipient_count,
             '[' || string_agg('{"flags":' || g.flag_names || ',"ids":[' || g.ids || ']}', ',') || ']' AS users
      FROM (SELECT um.message_id, ${FLAG_NAMES_JSON} AS flag_names, count(*) AS n, string_agg(um.user_id::text, ',') AS ids
            FROM um GROUP BY um.message_id, um.flags) g
      GROUP BY g.message_id
    ), routed AS (
      -- i.event is JSON.stringify of an object with other keys: id and timestamp go in front.
      SELECT i.ord, i.realm_id, i.request_id, ids.id, coalesce(d.recipient_count, 0) AS recipient_count, coalesce(d.users, '[]') AS users,
             CASE WHEN ${outbox}::boolean THEN
               '{"event":{"type":"message","message":{"id":' || ids.id || ',"timestamp":' || floor(extract(epoch FROM now()))::bigint
               || ',' || substr(i.event, 2) || '},"users":' || coalesce(d.users, '[]')
               || CASE WHEN i.all_public THEN ',"allPublicStreams":true' ELSE '' END
               || CASE WHEN i.services IS NOT NULL THEN ',"services":' || i.services ELSE '' END || '}' END AS event
      -- One row per message, whatever its recipients: the caller maps results by it.
      FROM input i JOIN ids USING (ord) LEFT JOIN delivered d ON d.message_id = ids.id
    ), outbox AS (
      INSERT INTO event_outbox (realm_id, events, request_ids)
      SELECT realm_id, ('[' || string_agg(event, ',' ORDER BY ord) || ']')::json, array_agg(request_id ORDER BY ord) FILTER (WHERE request_id IS NOT NULL)
      FROM routed WHERE ${outbox}::boolean GROUP BY realm_id
      RETURNING id, realm_id, events::text AS events, request_ids
    )
    SELECT r.ord::int, r.id, floor(extract(epoch FROM now()))::float8 AS timestamp, r.recipient_count,
           CASE WHEN NOT ${outbox}::boolean THEN r.users END AS users,
           o.id::text AS outbox_id,
           CASE WHEN r.ord = min(r.ord) OVER (PARTITION BY r.realm_id) THEN o.events END AS outbox_events,
           CASE WHEN r.ord = min(r.ord) OVER (PARTITION BY r.realm_id) THEN o.request_ids END AS outbox_request_ids
    FROM routed r LEFT JOIN outbox o ON o.realm_id = r.realm_id ORDER BY r.ord`, { prepare: true });
}

/** The `message` event of a message written without an outbox, from the statement's result. */
function routedEvent(write: MessageWrite, row: WrittenRow): RoutedEvent {
  const message = { ...write.event, id: row.id, timestamp: row.timestamp };
  const users = JSON.parse(row.users!) as Array<{ ids: number[]; flags: string[] }>;
  const routed: RoutedEvent = { event: { type: "message", message }, users };
  if (write.allPublicStreams) routed.allPublicStreams = true;
  if (write.services.length > 0) routed.services = write.services;
  return routed;
}

/** Writes one message inside a transaction, without an outbox row: the action's batch carries its event. */
export async function writeMessage(tx: Tx, write: MessageWrite): Promise<WrittenMessage> {
  const [row] = await writeMessageRows(tx, [write], false);
  return { id: row.id, event: routedEvent(write, row) };
}

/**
 * Recipients each stream had at its last message, by recipient id: how many rows the next message
 * there will write, to tell heavy statements from light ones. An estimate; bounded in size.
 */
const recipientCounts = new Map<number, number>();
const MAX_REMEMBERED_RECIPIENTS = 10_000;

/** Sending messages as one grouped kind of change: concurrent sends share the statement. */
export const MESSAGE_WRITES: GroupedWrite<MessageWrite, { id: number }> = {
  weight(write) {
    return "userIds" in write.recipients ? write.recipients.userIds.length : (recipientCounts.get(write.recipientId) ?? 1);
  },
  async write(db, writes) {
    const rows = await writeMessageRows(db, writes, true);
    if (recipientCounts.size > MAX_REMEMBERED_RECIPIENTS) recipientCounts.clear();
    const results = new Array<{ id: number }>(writes.length);
    const batches: ChangeBatch[] = [];
    for (const row of rows) {
      const write = writes[row.ord - 1];
      recipientCounts.set(write.recipientId, row.recipient_count);
      results[row.ord - 1] = { id: row.id };
      // Each realm's events, as the outbox row holds them, come with its first message.
      if (row.outbox_events !== null) batches.push(serializedChangeBatch(row.outbox_id!, write.realmId, row.outbox_events, row.outbox_request_ids ?? []));
    }
    // No check that throws here: the statement has committed, and a throw would write them again.
    return { results, batches };
  },
};
