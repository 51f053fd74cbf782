// The outgoing webhook protocol, as Zulip 3.x speaks it (zerver/lib/outgoing_webhook.py): what a
// bot's service is sent when a message triggers it, and what its answer means. Pure: the worker
// tier does the HTTP and sends the replies.
import type { ServiceTrigger } from "@chat/bus";
import { INTERFACE_SLACK } from "./bots.ts";
import { encodeHashComponent } from "./markdown.ts";
import { finalizeMessage, type WireMessage } from "./message-format.ts";
import { MAX_MESSAGE_LENGTH } from "./message-limits.ts";


export interface WebhookBot {
  id: number;
  email: string;
  full_name: string;
}

export interface WebhookService {
  base_url: string;
  token: string;
  interface: number;
}

export interface WebhookRequest {
  contentType: string;
  data: string;
}

/** The request body for a service, or why the service cannot take this message. */
export function buildWebhookRequest(
  service: WebhookService,
  bot: WebhookBot,
  trigger: ServiceTrigger["trigger"],
  message: WireMessage,
): WebhookRequest | { refused: string } {
  if (service.interface === INTERFACE_SLACK) {
    if (message.type === "private") return { refused: "Slack outgoing webhooks don't support private messages." };
    const form = new URLSearchParams([
      ["token", service.token],
      ["team_id", message.sender_realm_str],
      ["team_domain", message.sender_email.slice(message.sender_email.lastIndexOf("@") + 1)],
      ["channel_id", String(message.stream_id)],
      ["channel_name", String(message.display_recipient)],
      ["timestamp", String(message.timestamp)],
      ["user_id", String(message.sender_id)],
      ["user_name", message.sender_full_name],
      ["text", message.raw_content],
      ["trigger_word", trigger],
      ["service_id", String(bot.id)],
    ]);
    return { contentType: "application/x-www-form-urlencoded", data: form.toString() };
  }
  // Both forms of the content, as Zulip sends them: the Markdown in `content` and `data`, the HTML
  // in `rendered_content`.
  // Added to the finished message rather than spread into a new one: a 21-field spread cost
  // more than the rest of the payload's making.
  const wireMessage = finalizeMessage(message, { applyMarkdown: false, clientGravatar: false });
  wireMessage.rendered_content = message.rendered_content;
  // The bot received it: a one-to-one message says what the bot's reply would have (feature level 327).
  if (message.sender_recipient_id !== undefined && message.sender_id !== bot.id) wireMessage.recipient_id = message.sender_recipient_id;
  const payload = {
    data: message.raw_content,
    message: wireMessage,
    bot_email: bot.email,
    bot_full_name: bot.full_name,
    token: service.token,
    trigger,
  };
  return { contentType: "application/json", data: JSON.stringify(payload) };
}

/** What a service's successful (2xx) answer asks for. */
export type WebhookAnswer = { reply: string } | { nothing: true } | { invalid: string };

/**
 * A 2xx body: `response_not_required` asks for nothing; `content` (or `response_string`, what
 * zulip_bots sent before 2.0) becomes the bot's reply; Slack's form answers with `text`.
 */
export function readWebhookAnswer(serviceInterface: number, body: string): WebhookAnswer {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { invalid: "Invalid JSON in response" };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { nothing: true };
  const answer = json as Record<string, unknown>;
  const field = (name: string) => (answer[name] === undefined || answer[name] === null ? null : asText(answer[name]));
  let content: string | null;
  if (serviceInterface === INTERFACE_SLACK) content = field("text");
  else {
    if (answer.response_not_required === true) return { nothing: true };
    content = field("response_string") ?? field("content");
  }
  if (content === null || content.trim() === "") return { nothing: true };
  return { reply: truncateContent(content) };
}

/** Python's str() of a JSON value, near enough: strings as they are, anything else as JSON. */
function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

const TRUNCATED = "\n[message truncated]";

/** A bot's reply cut to the message limit, as Zulip truncates (normalize_body), not refused. */
export function truncateContent(content: string): string {
  if (Buffer.byteLength(content, "utf8") <= MAX_MESSAGE_LENGTH) return content;
  const budget = MAX_MESSAGE_LENGTH - Buffer.byteLength(TRUNCATED, "utf8");
  let bytes = 0;
  let end = 0;
  for (const char of content) {
    const size = Buffer.byteLength(char, "utf8");
    if (bytes + size > budget) break;
    bytes += size;
    end += char.length;
  }
  return content.slice(0, end) + TRUNCATED;
}

/** A link to the message that triggered the call, relative to the realm (Zulip's near_message_url). */
export function nearMessageUrl(message: WireMessage): string {
  if (message.type === "stream") {
    const stream = `${message.stream_id}-${encodeHashComponent(String(message.display_recipient).replace(/ /g, "-"))}`;
    return `/#narrow/stream/${stream}/topic/${encodeHashComponent(message.subject)}/near/${message.id}`;
  }
  const ids = (message.display_recipient as Array<{ id: number }>).map((user) => user.id).sort((a, b) => a - b);
  return `/#narrow/pm-with/${ids.join(",")}-${ids.length > 2 ? "group" : "pm"}/near/${message.id}`;
}

/** What went wrong with a call, for the bot's owner. */
export interface WebhookFailure {
  /** A sentence saying why. */
  reason?: string;
  status?: number;
  /** The start of the service's answer. */
  payload?: string;
}

const PAYLOAD_SHOWN = 1000;

/** The private message a bot's owner gets after a call failed (Zulip's notify_bot_owner). */
export function ownerNotice(message: WireMessage, failure: WebhookFailure): string {
  const lines = [`[A message](${nearMessageUrl(message)}) triggered an outgoing webhook.`];
  if (failure.reason) lines.push(failure.reason);
  if (failure.status !== undefined) lines.push(`The webhook got a response with status code *${failure.status}*.`);
  if (failure.payload) {
    const shown = failure.payload.length > PAYLOAD_SHOWN ? `${failure.payload.slice(0, PAYLOAD_SHOWN)}…` : failure.payload;
    lines.push("The response contains the following payload:", codeBlock(shown));
  }
  return lines.join("\n");
}

/** A fenced block no content can close early: the fence is longer than any backtick run inside. */
function codeBlock(text: string): string {
  const longestRun = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return `${fence}\n${text}\n${fence}`;
}
