// How the fan-out shapes a message event for one queue: the queue's narrow (Zulip's
// build_narrow_filter, flags included) and the deprecated notification fields Zulip's events carry.
import { parseEventsNarrow, withLegacyShape, type WireMessage } from "@chat/core";
import { expandForClient, shapeEvent } from "../src/fanout.ts";
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

describe("shapes today's Zulip changed without a capability: modern clients get them, 3.x clients the old ones", () => {
  const modern: QueueSettings = { ...base, modernClient: true };
  /** What a queue's client receives of an event: shaped, then expanded. */
  const received = (event: Record<string, unknown> & { type: string }, settings: QueueSettings, flags: string[] | null = null) => {
    const shaped = shapeEvent(event, settings, flags);
    return shaped === null ? [] : expandForClient(shaped, settings);
  };

  test("update_message: propagate_mode only with a move for modern clients, with every edit for 3.x clients", () => {
    const edit = withLegacyShape(
      { type: "update_message", user_id: 2, rendering_only: false, edit_timestamp: 5, message_id: 7, message_ids: [7], stream_id: 3, content: "x" },
      { propagate_mode: "change_one" },
    );
    expect(received(edit, modern, ["read"])).toEqual([
      { type: "update_message", user_id: 2, rendering_only: false, edit_timestamp: 5, message_id: 7, message_ids: [7], stream_id: 3, content: "x", flags: ["read"] },
    ]);
    expect(received(edit, base, [])).toEqual([
      { type: "update_message", user_id: 2, rendering_only: false, edit_timestamp: 5, message_id: 7, message_ids: [7], stream_id: 3, content: "x", propagate_mode: "change_one", flags: [] },
    ]);
    // Queues stored before the setting existed read as 3.x clients.
    const { modernClient: _modernClient, ...stored } = base;
    expect(received(edit, stored as QueueSettings, [])[0]).toHaveProperty("propagate_mode", "change_one");
  });

  test("subscription peer_add / peer_remove: lists for modern clients, one event per stream and user for 3.x clients", () => {
    const peerAdd = { type: "subscription", op: "peer_add", stream_ids: [3, 4], user_ids: [8, 9] };
    expect(received(peerAdd, modern)).toEqual([peerAdd]);
    expect(received(peerAdd, base)).toEqual([
      { type: "subscription", op: "peer_add", stream_id: 3, user_id: 8 },
      { type: "subscription", op: "peer_add", stream_id: 3, user_id: 9 },
      { type: "subscription", op: "peer_add", stream_id: 4, user_id: 8 },
      { type: "subscription", op: "peer_add", stream_id: 4, user_id: 9 },
    ]);
    const peerRemove = { type: "subscription", op: "peer_remove", stream_ids: [3], user_ids: [8] };
    expect(received(peerRemove, modern)).toEqual([peerRemove]);
    expect(received(peerRemove, base)).toEqual([{ type: "subscription", op: "peer_remove", stream_id: 3, user_id: 8 }]);
  });

  test("realm_user (de)activation: an update with is_active for modern clients, remove / add for 3.x clients", () => {
    const deactivated = withLegacyShape({ type: "realm_user", op: "update", person: { user_id: 8, is_active: false } }, { op: "remove", person: { user_id: 8, full_name: "Eight" } });
    expect(received(deactivated, modern)).toEqual([{ type: "realm_user", op: "update", person: { user_id: 8, is_active: false } }]);
    expect(received(deactivated, base)).toEqual([{ type: "realm_user", op: "remove", person: { user_id: 8, full_name: "Eight" } }]);
    const person = { user_id: 8, full_name: "Eight", is_active: true };
    const reactivated = withLegacyShape({ type: "realm_user", op: "update", person: { user_id: 8, is_active: true } }, { op: "add", person });
    expect(received(reactivated, modern)).toEqual([{ type: "realm_user", op: "update", person: { user_id: 8, is_active: true } }]);
    expect(received(reactivated, base)).toEqual([{ type: "realm_user", op: "add", person }]);
  });

  test("realm settings whose encoding changed: today's values to modern clients, the stored ones to 3.x clients", () => {
    const limit = { type: "realm", op: "update_dict", property: "default", data: { allow_message_editing: true, message_content_edit_limit_seconds: 0 } };
    expect(received(limit, modern)).toEqual([{ ...limit, data: { allow_message_editing: true, message_content_edit_limit_seconds: null } }]);
    expect(received(limit, base)).toEqual([limit]);
    const wildcard = { type: "realm", op: "update", property: "wildcard_mention_policy", value: 4 };
    // Feature level 352 removed the property: today's clients follow can_mention_many_users_group's update_dict instead.
    expect(received(wildcard, modern)).toEqual([]);
    expect(received(wildcard, base)).toEqual([wildcard]);
    // The 3.x boolean passes as it is: the change sends delete_own_message_policy's own event too (actions/realm-policies.ts).
    const deleting = { type: "realm", op: "update", property: "allow_message_deleting", value: false };
    expect(received(deleting, modern)).toEqual([deleting]);
    expect(received(deleting, base)).toEqual([deleting]);
    // Feature level 241's names for today's clients.
    const announce = { type: "realm", op: "update", property: "notifications_stream_id", value: 3 };
    expect(received(announce, modern)).toEqual([{ ...announce, property: "new_stream_announcements_stream_id" }]);
    expect(received(announce, base)).toEqual([announce]);
  });

  test("a subscription's color as #rrggbb in lowercase to modern clients, as stored to 3.x clients", () => {
    const color = { type: "subscription", op: "update", stream_id: 3, property: "color", value: "#ABC" };
    expect(received(color, modern)).toEqual([{ ...color, value: "#aabbcc" }]);
    expect(received(color, base)).toEqual([color]);
  });

  test("delete_message: message_ids with bulk_message_deletion, one message_id each without", () => {
    const deleted = { type: "delete_message", message_ids: [7, 9], message_type: "stream", stream_id: 3, topic: "Lunch" };
    expect(received(deleted, modern)).toEqual([deleted]);
    expect(received(deleted, { ...base, bulkMessageDeletion: false })).toEqual([
      { type: "delete_message", message_id: 7, message_type: "stream", stream_id: 3, topic: "Lunch" },
      { type: "delete_message", message_id: 9, message_type: "stream", stream_id: 3, topic: "Lunch" },
    ]);
  });
});
