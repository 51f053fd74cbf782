// Reporting a message to the organization's moderators (Zulip's zerver/views/message_report.py and
// zerver/lib/message_report.py; feature levels 331 and 382): the Notification Bot posts the report
// in the realm's moderation_request_channel, in a topic named for the reported user.
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { JsonableError } from "../errors.ts";
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "../lib/message-limits.ts";
import { RECIPIENT_HUDDLE } from "../lib/recipients.ts";
import { encodeHashComponent } from "../lib/markdown/zulip-syntax.ts";
import type { Actor } from "../models.ts";
import { accessMessage } from "../queries/messages.ts";
import { sendNotification } from "./notification-bot.ts";

/** Zulip's Realm.REPORT_MESSAGE_REASONS: each report type and how the report names it. */
export const REPORT_MESSAGE_REASONS = {
  spam: "Spam",
  harassment: "Harassment",
  inappropriate: "Inappropriate content",
  norms: "Violates community norms",
  other: "Other reason",
} as const;
export type ReportType = keyof typeof REPORT_MESSAGE_REASONS;
export const REPORT_TYPES = Object.keys(REPORT_MESSAGE_REASONS) as ReportType[];

/** Zulip's Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** Zulip's MAX_REPORT_MESSAGE_SNIPPET_LENGTH: room left for the description and the report's own text. */
const MAX_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;
const TRUNCATED = "\n[message truncated]";

interface Person {
  id: number;
  full_name: string;
}

/** Zulip's silent_mention_syntax_for_user. */
function silentMention(user: Person): string {
  return `@_**${user.full_name}|${user.id}**`;
}

/** Zulip's get_user_mentions_for_display: "A", "A and B", "A, B, and C". */
function mentionList(users: Person[]): string {
  const mentions = users.map(silentMention);
  if (mentions.length <= 1) return mentions.join("");
  if (mentions.length === 2) return `${mentions[0]} and ${mentions[1]}`;
  return `${mentions.slice(0, -1).join(", ")}, and ${mentions[mentions.length - 1]}`;
}

/** Zulip's datetime_to_global_time: `<time:…>` in UTC to the second. */
function globalTime(date: Date): string {
  return `<time:${new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString().replace(".000Z", "+00:00")}>`;
}

/** Zulip's get_unused_fence: a fence longer than any the content opens. */
function unusedFence(content: string): string {
  let length = 3;
  for (const match of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, match[1].length + 1);
  return "`".repeat(length);
}

/** Zulip's will_produce_broken_stream_topic_link / escape_invalid_stream_topic_characters. */
const BROKEN_LINK = /[`>*&[\]]|(\$\$)/g;
const LINK_ESCAPES: Record<string, string> = { "`": "&#96;", ">": "&gt;", "*": "&#42;", "&": "&amp;", $$: "&#36;&#36;", "[": "&#91;", "]": "&#93;" };

/** Zulip's get_message_link_syntax: `#**channel>topic@id**`, or a plain link where that would break. */
function messageLinkSyntax(stream: { id: number; name: string }, topic: string, messageId: number): string {
  const broken = (text: string) => new RegExp(BROKEN_LINK.source).test(text);
  if (!broken(stream.name) && !broken(topic)) return `#**${stream.name}>${topic}@${messageId}**`;
  const escape = (text: string) => text.replace(BROKEN_LINK, (match) => LINK_ESCAPES[match] ?? match);
  const link = `#narrow/channel/${stream.id}-${encodeHashComponent(stream.name.replace(/ /g, "-"))}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
  return `[#${escape(stream.name)} > ${escape(topic)} @ 💬](${link})`;
}

/** Zulip's truncate_content, in characters; then in bytes if the whole would not fit this server's byte limit. */
function truncateTo(content: string, limit: number): string {
  const chars = [...content];
  return chars.length <= limit ? content : chars.slice(0, limit - [...TRUNCATED].length).join("") + TRUNCATED;
}

function cutToBytes(content: string, budget: number): string {
  if (Buffer.byteLength(content, "utf8") <= budget) return content;
  const room = budget - Buffer.byteLength(TRUNCATED, "utf8");
  let bytes = 0;
  let end = 0;
  for (const char of content) {
    const size = Buffer.byteLength(char, "utf8");
    if (bytes + size > room) break;
    bytes += size;
    end += char.length;
  }
  return content.slice(0, end) + TRUNCATED;
}

/** Zulip's truncate_topic. */
function truncateTopic(topic: string): string {
  const chars = [...topic];
  return chars.length > MAX_TOPIC_LENGTH ? `${chars.slice(0, MAX_TOPIC_LENGTH - 3).join("")}...` : topic;
}

export interface MessageReport {
  messageId: number;
  reportType: ReportType;
  description: string;
  /** The organization's URL, for links to direct messages. */
  realmUrl: string;
}

/**
 * POST /messages/{message_id}/report (Zulip's report_message_backend): "other" needs an
 * explanation; the organization must have a (live) moderation channel; the reporter must be able
 * to read the message. Returns the report's message id.
 */
export async function reportMessage(tx: Tx, events: EventRecorder, ctx: ServerContext, actor: Actor, report: MessageReport): Promise<number> {
  if (report.reportType === "other" && report.description === "") throw new JsonableError("An explanation is required.");
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
  const channel =
    realm.moderation_request_channel_id === null ? null : await tx.stream.findFirst({ where: { id: realm.moderation_request_channel_id, realm_id: realm.id, deactivated: false } });
  if (!channel) throw new JsonableError("Message reporting is not enabled in this organization.");
  const message = await accessMessage(tx, actor, report.messageId);

  const [row] = await tx.$queryRaw<{ content: string; sender_name: string }[]>`
    SELECT m.content, u.full_name AS sender_name FROM message m JOIN user_profile u ON u.id = m.sender_id WHERE m.id = ${message.id}`;
  const sender: Person = { id: message.sender_id, full_name: row.sender_name };
  const reporter: Person = { id: actor.id, full_name: actor.full_name };
  const when = globalTime(message.date_sent);
  const head = `${silentMention(reporter)} reported a message sent by ${silentMention(sender)}`;

  let header: string;
  let original: string;
  if (message.stream) {
    header = `${head} at ${when}.`;
    original = `Original message at ${messageLinkSyntax(message.stream, message.subject, message.id)}`;
  } else {
    const people = await tx.$queryRaw<Person[]>`
      SELECT u.id, u.full_name FROM user_profile u
      WHERE u.id IN (SELECT um.user_id FROM user_message um WHERE um.message_id = ${message.id}) OR u.id = ${message.sender_id}
      ORDER BY u.id`;
    if (message.recipient_type === RECIPIENT_HUDDLE) {
      header = `${head} to ${mentionList(people.filter((person) => person.id !== sender.id))} at ${when}.`;
    } else if (sender.id !== actor.id) {
      header = `${head} at ${when}.`;
    } else {
      // One's own 1:1 message names whom it went to (oneself, for a note to self).
      const other = people.find((person) => person.id !== actor.id) ?? reporter;
      header = `${head} to ${silentMention(other)} at ${when}.`;
    }
    const ids = people.map((person) => person.id).sort((a, b) => a - b);
    const slug = ids.join(",") + (ids.length >= 3 ? "-group" : "");
    original = `[Original message](${report.realmUrl}/#narrow/dm/${slug}/near/${message.id})`;
  }

  const build = (snippet: string) => {
    const fence = unusedFence(snippet);
    return `${header}\n\`\`\`quote\n**${REPORT_MESSAGE_REASONS[report.reportType]}**. ${report.description}\n\`\`\`\n\n${fence} spoiler ${original}\n${snippet}\n${fence}\n`;
  };
  let snippet = truncateTo(row.content, MAX_SNIPPET_LENGTH);
  // This server bounds messages in bytes: a report of a long multi-byte message is cut further.
  const overflow = Buffer.byteLength(build(snippet), "utf8") - MAX_MESSAGE_LENGTH;
  if (overflow > 0) snippet = cutToBytes(snippet, Buffer.byteLength(snippet, "utf8") - overflow - 8);
  const topic = truncateTopic(`${sender.full_name} moderation`);
  return sendNotification(tx, events, ctx, realm, { type: "stream", stream: channel.id, topic }, build(snippet));
}
