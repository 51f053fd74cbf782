// GET /messages joins each message from pre-serialized pieces; it must say exactly what
// finalizeMessage (which events use) says of the same message, for every client option.
import { cachedMessageFromRow, cachedSenderFromRow, finalizeMessage, messageJson, type MessageRow, type SenderRow, type WireMessage } from "../src/index.ts";

const alice: SenderRow = { id: 7, realm_id: 2, email: "alice@example.com", full_name: "Alice \"Quotes\" Ü", short_name: "alice", avatar_source: "G", avatar_version: 3, recipient_id: 17 };
const bob: SenderRow = { id: 8, realm_id: 2, email: "bob@example.com", full_name: "Bob", short_name: "bob", avatar_source: "U", avatar_version: 5, recipient_id: 18 };

const row: MessageRow = {
  id: 101,
  version: 4,
  sender_id: alice.id,
  recipient_id: 30,
  subject: "topic <b>\u2028",
  raw_content: "**hi** </script>",
  rendered_content: "<p><strong>hi</strong> &lt;/script&gt;</p>",
  timestamp: 1_700_000_000,
  sending_client: "website",
  last_edit_timestamp: 1_700_000_100,
  last_moved_timestamp: 1_700_000_200,
  is_me_message: false,
  reactions: [{ emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji", user_id: bob.id }],
  submessages: [
    { msg_type: "widget", content: '{"widget_type":"poll","extra_data":{"question":"Q \u2028","options":["a"]}}', message_id: 101, sender_id: alice.id, id: 5 },
    { msg_type: "widget", content: '{"type":"vote","key":"canned,0","vote":1}', message_id: 101, sender_id: bob.id, id: 6 },
  ],
};

function wire(overrides: Partial<WireMessage>): WireMessage {
  return {
    id: row.id,
    sender_id: alice.id,
    sender_full_name: alice.full_name,
    sender_short_name: alice.short_name,
    sender_email: alice.email,
    sender_realm_str: "zulip",
    sender_avatar_source: alice.avatar_source,
    sender_avatar_version: alice.avatar_version,
    realm_id: 2,
    recipient_id: row.recipient_id,
    type: "stream",
    stream_id: 12,
    display_recipient: "general",
    subject: row.subject,
    topic_links: ["https://example.com/1"],
    raw_content: row.raw_content,
    rendered_content: row.rendered_content,
    timestamp: row.timestamp,
    client: row.sending_client,
    is_me_message: false,
    reactions: [{ emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji", user_id: bob.id, user: { user_id: bob.id, email: bob.email, full_name: bob.full_name } }],
    submessages: row.submessages!,
    last_edit_timestamp: row.last_edit_timestamp!,
    last_moved_timestamp: row.last_moved_timestamp!,
    ...overrides,
  };
}

const users = new Map([alice, bob].map((u) => [u.id, cachedSenderFromRow(u)]));

describe.each([
  { applyMarkdown: true, clientGravatar: false },
  { applyMarkdown: false, clientGravatar: true },
])("messageJson (%o)", (options) => {
  const context = { realmJson: JSON.stringify("zulip"), users, ...options };

  test("a stream message equals finalizeMessage's, with the user's flags", () => {
    const json = messageJson(cachedMessageFromRow(row), { streamId: 12, displayRecipientJson: JSON.stringify("general"), topicLinksJson: JSON.stringify(["https://example.com/1"]) }, 2 | 8, context);
    expect(JSON.parse(json!)).toStrictEqual({ ...finalizeMessage(wire({}), options), flags: ["starred", "mentioned"] });
  });

  test("a private message, never edited, read from history, with search highlights", () => {
    const participants = [alice, bob].map(({ id, email, full_name, short_name }) => ({ id, email, full_name, short_name, is_mirror_dummy: false }));
    const unedited = cachedMessageFromRow({ ...row, last_edit_timestamp: null, last_moved_timestamp: null, reactions: null, submessages: null, sender_id: bob.id });
    const json = messageJson(unedited, { streamId: null, displayRecipientJson: JSON.stringify(participants), topicLinksJson: "[]" }, null, context, { match_content: "<p>x</p>", match_subject: "y" });
    const expected = finalizeMessage(
      wire({
        sender_id: bob.id,
        sender_full_name: bob.full_name,
        sender_short_name: bob.short_name,
        sender_email: bob.email,
        sender_avatar_source: bob.avatar_source,
        sender_avatar_version: bob.avatar_version,
        type: "private",
        stream_id: undefined,
        display_recipient: participants,
        topic_links: [],
        reactions: [],
        submessages: [],
        last_edit_timestamp: undefined,
        last_moved_timestamp: undefined,
      }),
      options,
    );
    delete expected.stream_id;
    expect(JSON.parse(json!)).toStrictEqual({ ...expected, flags: ["read", "historical"], match_content: "<p>x</p>", match_subject: "y" });
  });

  test("a message whose sender is unknown is not shown", () => {
    expect(messageJson(cachedMessageFromRow({ ...row, sender_id: 999 }), { streamId: 12, displayRecipientJson: '"general"', topicLinksJson: "[]" }, 0, context)).toBeNull();
  });
});
