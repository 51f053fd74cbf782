// The tools behind flutter-contract.test.ts, without a server: the generator's reading of
// json_serializable output (scripts/flutter-contract/contract-generator.ts) and the checker's
// reading of JSON as the app's parsers do (support/flutter-contract.ts).
import { readGeneratedFiles } from "../../scripts/flutter-contract/contract-generator.ts";
import { contract, readAsFlutter } from "../support/flutter-contract.ts";

const here = () => "hand-kept place";

/** A few generated parsers as json_serializable writes them (abridged from zulip-flutter). */
const GENERATED = `
StreamConversation _$StreamConversationFromJson(Map<String, dynamic> json) {
  $checkKeys(
    json,
    requiredKeys: const ['display_recipient'],
    disallowNullValues: const ['display_recipient'],
  );
  return StreamConversation(
    (json['stream_id'] as num).toInt(),
    TopicName.fromJson(json['subject'] as String),
    displayRecipient: json['display_recipient'] as String?,
  );
}

UserGroup _$UserGroupFromJson(Map<String, dynamic> json) => UserGroup(
  id: (json['id'] as num).toInt(),
  members: (json['members'] as List<dynamic>)
      .map((e) => (e as num).toInt())
      .toSet(),
  deactivated: json['deactivated'] as bool? ?? false,
  role: $enumDecode(
    _$UserRoleEnumMap,
    json['role'],
    unknownValue: UserRole.unknown,
  ),
  policy: $enumDecodeNullable(_$UserRoleEnumMap, json['policy']),
  presences: (json['presences'] as Map<String, dynamic>).map(
    (k, e) => MapEntry(
      int.parse(k),
      PerUserPresence.fromJson(e as Map<String, dynamic>),
    ),
  ),
  canJoin: json['can_join'] == null
      ? null
      : GroupSettingValue.fromJson(json['can_join']),
  fullName: RealmUserUpdateEvent._readFromPerson(json, 'full_name') as String?,
)..poll = Poll.fromJson(Message._readPoll(json, 'submessages'));

const _$UserRoleEnumMap = {
  UserRole.owner: 100,
  UserRole.member: 400,
  UserRole.unknown: null,
};
`;

describe("the contract generator reads json_serializable output", () => {
  const { classes, enumMaps } = readGeneratedFiles([{ file: "lib/api/model/fixture.g.dart", text: GENERATED }], here);

  test("$checkKeys, positional arguments and casts: required, optional, num", () => {
    expect(classes.StreamConversation).toEqual({
      source: "lib/api/model/fixture.g.dart:2",
      generated: true,
      checkKeys: { required: ["display_recipient"], disallowNull: ["display_recipient"] },
      fields: [
        { key: "stream_id", type: { kind: "num" }, required: true, dart: "#0" },
        { key: "subject", type: { kind: "String" }, required: true, dart: "#1", via: "TopicName.fromJson (hand-kept place)" },
        { key: "display_recipient", type: { kind: "String" }, required: false, dart: "displayRecipient" },
      ],
    });
  });

  test("lists, defaults, enums with and without unknownValue, int-keyed maps, null checks, readValue helpers, cascades", () => {
    const fields = Object.fromEntries((classes.UserGroup.fields ?? []).map((f) => [f.dart, f]));
    expect(fields.members).toMatchObject({ key: "members", type: { kind: "list", of: { kind: "num" } }, required: true });
    expect(fields.deactivated).toMatchObject({ key: "deactivated", type: { kind: "bool" }, required: false, default: false });
    expect(fields.role).toMatchObject({ type: { kind: "enum", name: "UserRole", unknown: "tolerated" }, required: true });
    expect(fields.policy).toMatchObject({ type: { kind: "enum", name: "UserRole", unknown: "rejected" }, required: false });
    expect(fields.presences).toMatchObject({ type: { kind: "map", keys: "int", of: { kind: "class", name: "PerUserPresence" } }, required: true });
    expect(fields.canJoin).toMatchObject({ key: "can_join", type: { kind: "class", name: "GroupSettingValue" }, required: false });
    expect(fields.fullName).toMatchObject({ key: "full_name", read: ["person", "full_name"], type: { kind: "String" }, required: false });
    expect(fields.poll).toMatchObject({ key: "submessages", read: [], type: { kind: "class", name: "MessagePollSource" } });
    expect(enumMaps.get("UserRole")?.members).toEqual({ owner: 100, member: 400, unknown: null });
  });

  test("an expression it does not know stops it, naming the class and field", () => {
    const unknown = `Thing _$ThingFromJson(Map<String, dynamic> json) => Thing(x: Thing._readSomething(json, 'x') as int);`;
    expect(() => readGeneratedFiles([{ file: "f.g.dart", text: unknown }], here)).toThrow(/Thing\.x: unrecognised readValue helper Thing\._readSomething/);
  });

  test("the checked-in contract names the zulip-flutter commit it was made from", () => {
    expect(contract.flutter.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(Object.keys(contract.classes)).toEqual(expect.arrayContaining(["InitialSnapshot", "Event", "GetMessagesResult", "GetServerSettingsResult"]));
  });
});

describe("the checker reads JSON as the app's parsers do", () => {
  const user = {
    user_id: 7,
    email: "a@example.com",
    full_name: "A",
    date_joined: "2024-01-01T00:00:00Z",
    is_active: true,
    is_bot: false,
    role: 400,
    timezone: "",
    avatar_version: 1,
    something_new: { nested: true },
  };

  test("a valid object parses; unknown keys are fine", () => {
    expect(readAsFlutter("User", user)).toEqual({ failures: [], parsedAs: "User" });
  });

  test("a missing or null required key, or a wrong type, fails with its path; an unknown enum value is tolerated where the parser says so", () => {
    const { date_joined: _, ...missing } = user;
    expect(readAsFlutter("User", { ...missing, is_bot: "no", avatar_url: null, role: 999 }).failures).toEqual([
      "$.date_joined: required String is missing (User.dateJoined, lib/api/model/model.g.dart:158)",
      "$.is_bot: expected bool, got \"no\"",
    ]);
    expect(readAsFlutter("User", { ...user, timezone: null }).failures).toEqual(["$.timezone: required String is null (User.timezone, lib/api/model/model.g.dart:158)"]);
  });

  test("an enum without unknownValue must match", () => {
    const topic = { id: 1, type: "user_topic", stream_id: 1, topic_name: "t", last_updated: 1, visibility_policy: 7 };
    expect(readAsFlutter("Event", topic).failures).toEqual([expect.stringMatching(/^\$\.visibility_policy: 7 is not one of 0, 1, 2, 3 \(enum UserTopicVisibilityPolicy/)]);
    expect(readAsFlutter("UserTopicItem", { stream_id: 1, topic_name: "t", last_updated: 1, visibility_policy: 7 }).failures).toEqual([]);
  });

  test("event dispatch: type and op pick the class; anything else is UnexpectedEvent, which needs an int id", () => {
    expect(readAsFlutter("Event", { id: 3, type: "subscription", op: "peer_add", stream_ids: [1], user_ids: [2] })).toEqual({ failures: [], parsedAs: "SubscriptionPeerAddEvent" });
    expect(readAsFlutter("Event", { id: 3, type: "subscription", op: "peer_add", stream_id: 1, user_id: 2 }).failures).toEqual([
      "$.stream_ids: required List<num> is missing (SubscriptionPeerAddEvent.channelIds, lib/api/model/events.g.dart:686)",
      "$.user_ids: required List<num> is missing (SubscriptionPeerAddEvent.userIds, lib/api/model/events.g.dart:686)",
    ]);
    expect(readAsFlutter("Event", { id: 3, type: "subscription", op: "something_new" })).toEqual({ failures: [], parsedAs: "UnexpectedEvent" });
    expect(readAsFlutter("Event", { id: "3", type: "restart" }).failures).toEqual(['$.id: expected int, got "3"']);
  });

  test("hand-written readers: message type switch, $checkKeys, the event's flags merged into its message, a move's coherence", () => {
    const message = {
      id: 1, sender_id: 1, sender_email: "a", sender_full_name: "A", sender_realm_str: "z", timestamp: 1, client: "c",
      content: "<p>x</p>", content_type: "text/html", is_me_message: false, reactions: [], type: "stream", stream_id: 1, subject: "t",
    };
    expect(readAsFlutter("Event", { id: 1, type: "message", flags: [], message: { ...message, display_recipient: "s" } }).failures).toEqual([]);
    expect(readAsFlutter("Event", { id: 1, type: "message", message: { ...message, display_recipient: null } }).failures).toEqual([
      "$.message.flags: required List<String> is null (StreamMessage.flags, lib/api/model/model.g.dart:462)",
      "$.message.display_recipient: must not be null ($checkKeys in StreamConversation, lib/api/model/model.g.dart:449)",
    ]);
    expect(readAsFlutter("Message", { ...message, type: "channel" }).failures).toEqual([expect.stringMatching(/^\$\.type: "channel" is not one of stream, private: Message\.fromJson throws/)]);
    const edit = { id: 2, type: "update_message", rendering_only: false, message_id: 1, message_ids: [1], flags: [], edit_timestamp: 1 };
    expect(readAsFlutter("Event", { ...edit, stream_id: 1, orig_subject: "a", subject: "b", propagate_mode: "change_all" }).failures).toEqual([]);
    expect(readAsFlutter("Event", { ...edit, stream_id: 1, propagate_mode: "change_all" }).failures).toEqual([
      expect.stringMatching(/^\$: propagate_mode present but no new channel or topic/),
    ]);
  });

  test("values read by a sibling property, and group-setting values", () => {
    const update = { id: 1, type: "subscription", op: "update", stream_id: 1 };
    expect(readAsFlutter("Event", { ...update, property: "color", value: "#A0B0C0" }).failures).toEqual([expect.stringMatching(/^\$\.value: "#A0B0C0" does not match/)]);
    expect(readAsFlutter("Event", { ...update, property: "in_home_view", value: "anything" }).failures).toEqual([]);
    expect(readAsFlutter("GroupSettingValue", 5).failures).toEqual([]);
    expect(readAsFlutter("GroupSettingValue", { direct_members: [1], direct_subgroups: [] }).failures).toEqual([]);
    expect(readAsFlutter("GroupSettingValue", { direct_member_ids: [1] }).failures).toHaveLength(1);
  });
});
