// How the fan-out shapes a message event for one queue: the queue's narrow (Zulip's
// build_narrow_filter, flags included) and the deprecated notification fields Zulip's events carry.
import { parseEventsNarrow, type WireMessage } from "@chat/core";
import { shapeEvent } from "../src/fanout.ts";
import type { QueueSettings } from "../src/queue-settings.ts";

const base: QueueSettings = {
  eventTypes: null,
  applyMarkdown: true,
  clientGravatar: false,
  slimPresence: false,
  narrow: [],
  notificationSettingsNull: false,
  bulkMessageDeletion: true,
  userSettingsObject: false,
  streamTypingNotifications: false,
  userAvatarUrlFieldOptional: false,
  includeDeactivatedGroups: false,
  modernClient: false,
};

const streamMessage: WireMessage = {
  id: 7,
  sender_id: 2,
  sender_full_name: "Sam Sender",
  sender_short_name: "sam",
  sender_email: "Sam@Example.com",
  sender_realm_str: "",
  sender_avatar_source: "G",
  sender_avatar_version: 1,
  realm_id: 1,
  recipient_id: 9,
  type: "stream",
  stream_id: 3,
  display_recipient: "General",
  subject: "Lunch",
  topic_links: [],
  raw_content: "hi",
  rendered_content: "<p>hi</p>",
  timestamp: 1,
  client: "test",
  is_me_message: false,
  reactions: [],
  submessages: [],
};

const privateMessage: WireMessage = {
  ...streamMessage,
  type: "private",
  stream_id: undefined,
  display_recipient: [{ id: 2, email: "sam@example.com", full_name: "Sam", short_name: "sam", is_mirror_dummy: false }],
};

function delivered(message: WireMessage, narrow: Array<[string, string]>, flags: string[] = []): boolean {
  return shapeEvent({ type: "message", message }, { ...base, narrow: parseEventsNarrow(narrow) }, flags) !== null;
}

describe("a narrowed queue's message events", () => {
  test("stream, topic and sender compare case-insensitively", () => {
    expect(delivered(streamMessage, [["stream", "general"], ["topic", "LUNCH"]])).toBe(true);
    expect(delivered(streamMessage, [["stream", "general"], ["topic", "dinner"]])).toBe(false);
    expect(delivered(streamMessage, [["sender", "sam@example.com"]])).toBe(true);
    expect(delivered(privateMessage, [["stream", "general"]])).toBe(false);
  });

  test("`is` filters by the message's type and the recipient's flags", () => {
    expect(delivered(privateMessage, [["is", "private"]])).toBe(true);
    expect(delivered(streamMessage, [["is", "private"]])).toBe(false);
    expect(delivered(streamMessage, [["is", "starred"]], ["starred"])).toBe(true);
    expect(delivered(streamMessage, [["is", "starred"]], [])).toBe(false);
    expect(delivered(streamMessage, [["is", "unread"]], [])).toBe(true);
    expect(delivered(streamMessage, [["is", "unread"]], ["read"])).toBe(false);
    expect(delivered(streamMessage, [["is", "mentioned"]], ["mentioned"])).toBe(true);
    expect(delivered(streamMessage, [["is", "alerted"]], ["mentioned"])).toBe(true);
    expect(delivered(streamMessage, [["is", "mentioned"]], [])).toBe(false);
  });

  test("operators the event system cannot filter by are refused, in either spelling", () => {
    expect(() => parseEventsNarrow([["pm_with", "a@example.com"]])).toThrow("Operator pm_with not supported.");
    expect(() => parseEventsNarrow([["pm-with", "a@example.com"]])).toThrow("Operator pm-with not supported.");
    expect(() => parseEventsNarrow([["search", "x"]])).toThrow("Operator search not supported.");
    expect(() => parseEventsNarrow([["is", "happy"]])).toThrow("Invalid narrow operator: unknown 'is' operand happy");
    expect(parseEventsNarrow([["subject", "x"]])).toEqual([["topic", "x"]]);
  });
});

describe("message events carry Zulip's deprecated notification fields", () => {
  const shaped = (flags: string[]) => shapeEvent({ type: "message", message: streamMessage }, base, flags)!;

  test("no email or push notification is sent by this server", () => {
    expect(shaped([])).toMatchObject({ email_notified: false, push_notified: false, stream_push_notify: false, stream_email_notify: false, wildcard_mention_notify: false });
  });

  test("an unread wildcard mention notifies", () => {
    expect(shaped(["wildcard_mentioned"]).wildcard_mention_notify).toBe(true);
    expect(shaped(["wildcard_mentioned", "read"]).wildcard_mention_notify).toBe(false);
  });
});
