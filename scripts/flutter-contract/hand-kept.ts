// The parts of zulip-flutter's JSON reading that json_serializable does not generate: readValue
// helpers, fromJson functions and factories written by hand, and the checks some factories add
// after the generated parse. Each entry names the Dart code it stands for by file and a string
// found there; the generator turns that into file:line and stops if the string is gone, so a
// change upstream brings this table up for review instead of going unnoticed.
import type { Condition, ContractClass, Field, Read, TypeSpec } from "./contract.ts";

/** Where hand-written Dart code is: a file and a string on the line it starts at. */
export interface DartPlace {
  file: string;
  find: string;
}

const MODEL = "lib/api/model/model.dart";
const EVENTS = "lib/api/model/events.dart";
const SNAPSHOT = "lib/api/model/initial_snapshot.dart";

/**
 * readValue helpers (`@JsonKey(readValue: X)`), called by generated code as `X(json, 'key')`.
 * `read`: the helper hands back raw JSON found there (a path; `[]` = the object itself; `"key"` =
 * the key it was given) and the generated code goes on parsing it. `field`: the helper parses the
 * value itself, and its result replaces whatever the generated code does next.
 */
export type Helper =
  | { place: DartPlace; read: "key" | Read | ((key: string) => Read); fillElements?: Record<string, unknown> }
  | { place: DartPlace; field: (key: string) => Omit<Field, "key" | "dart" | "via"> };

const bool: TypeSpec = { kind: "bool" };
const string: TypeSpec = { kind: "String" };
const int: TypeSpec = { kind: "int" };
/** `assert(RegExp(r'^#[0-9a-f]{6}$').hasMatch(str))`, then int.parse(radix: 16) of the rest. */
const color: TypeSpec = { kind: "String", pattern: "^#[0-9a-f]{6}$", note: "asserted in debug builds; parsed as hex" };
const groupSetting: TypeSpec = { kind: "class", name: "GroupSettingValue" };

export const HELPERS: Record<string, Helper> = {
  "User._readProfileData": { place: { file: MODEL, find: "static Map<String, dynamic>? _readProfileData(" }, read: "key" },
  "InitialSnapshot._readUsersIsActiveFallbackTrue": {
    place: { file: SNAPSHOT, find: "static Object? _readUsersIsActiveFallbackTrue(" },
    read: "key",
    fillElements: { is_active: true },
  },
  "InitialSnapshot._readUsersIsActiveFallbackFalse": {
    place: { file: SNAPSHOT, find: "static Object? _readUsersIsActiveFallbackFalse(" },
    read: "key",
    fillElements: { is_active: false },
  },
  "StreamMessage._readConversation": { place: { file: MODEL, find: "static Map<String, dynamic> _readConversation(" }, read: [] },
  "UpdateMessageEvent._readMoveData": { place: { file: EVENTS, find: "static Map<String, dynamic> _readMoveData(" }, read: [] },
  "UserStatusEvent._readChange": { place: { file: EVENTS, find: "static Object? _readChange(" }, read: [] },
  // {...json['message'] as Map<String, dynamic>, 'flags': json['flags']}
  "MessageEvent._readMessageValue": {
    place: { file: EVENTS, find: "static Map<String, dynamic> _readMessageValue(" },
    read: { object: ["message"], with: { flags: ["flags"] } },
  },
  // (json['person'] as Map<String, dynamic>)[key]
  "RealmUserUpdateEvent._readFromPerson": { place: { file: EVENTS, find: "static Object? _readFromPerson(" }, read: (key) => ["person", key] },
  // JsonNullable.readFromJson(json['person'] as Map, key): `map[key] as String?` when the key is there.
  "RealmUserUpdateEvent._readNullableStringFromPerson": {
    place: { file: EVENTS, find: "static JsonNullable<String>? _readNullableStringFromPerson(" },
    field: (key) => ({ read: ["person", key], type: string, required: false }),
  },
  // (json['sender'] as Map<String, dynamic>)['user_id']
  "TypingEvent._readSenderId": { place: { file: EVENTS, find: "static Object? _readSenderId(" }, read: ["sender", "user_id"] },
  // `map.containsKey(key) ? JsonNullable(map[key] as T?) : null`
  "JsonNullable.readIntFromJson": {
    place: { file: "lib/api/model/json.dart", find: "static JsonNullable<int>? readIntFromJson(" },
    field: () => ({ type: int, required: false }),
  },
  "JsonNullable.readStringFromJson": {
    place: { file: "lib/api/model/json.dart", find: "static JsonNullable<String>? readStringFromJson(" },
    field: () => ({ type: string, required: false }),
  },
  "Subscription._readColor": { place: { file: MODEL, find: "static Object? _readColor(" }, field: () => ({ type: color, required: true }) },
  // stream_ids (each `as int`) if present, else streams[].stream_id (each `as int`).
  "ChannelDeleteEvent._readChannelIds": {
    place: { file: EVENTS, find: "static List<int> _readChannelIds(Map<dynamic, dynamic> json, String key) {\n    final channelIds" },
    field: () => ({ read: [], type: { kind: "rule", rule: "ChannelDeleteEvent._readChannelIds" }, required: true }),
  },
  // (json['subscriptions'] as List).map((e) => (e as Map)['stream_id'] as int)
  "SubscriptionRemoveEvent._readChannelIds": {
    place: { file: EVENTS, find: "return (json['subscriptions'] as List<dynamic>)" },
    field: () => ({ read: ["subscriptions"], type: { kind: "list", of: { kind: "class", name: "SubscriptionRemoveItem" } }, required: true }),
  },
  "UserSettingsUpdateEvent._readValue": {
    place: { file: EVENTS, find: "switch (UserSettingName.fromRawString(json['property'] as String))" },
    field: () => ({
      type: {
        kind: "byProperty",
        property: "property",
        cases: {
          twenty_four_hour_time: { type: bool, required: false },
          starred_message_counts: { type: bool, required: true },
          display_emoji_reaction_users: { type: bool, required: true },
          emojiset: { type: string, required: true },
          web_inbox_show_channel_folders: { type: bool, required: true },
          presence_enabled: { type: bool, required: true },
        },
        otherwise: "ignored",
      },
      required: false,
    }),
  },
  "ChannelUpdateEvent._readValue": {
    place: { file: EVENTS, find: "switch (ChannelPropertyName.fromRawString(json['property'] as String))" },
    field: () => ({
      type: {
        kind: "byProperty",
        property: "property",
        cases: {
          name: { type: string, required: true },
          is_archived: { type: bool, required: true },
          description: { type: string, required: true },
          first_message_id: { type: int, required: false },
          invite_only: { type: bool, required: true },
          message_retention_days: { type: int, required: false },
          topics_policy: { type: { kind: "enum", name: "ChannelTopicsPolicy", unknown: "tolerated" }, required: true },
          // ChannelPostPolicy.fromApiValue(value as int) => _byApiValue[value]!
          stream_post_policy: { type: { kind: "enum", name: "ChannelPostPolicy", unknown: "rejected" }, required: true },
          folder_id: { type: int, required: false },
          can_add_subscribers_group: { type: groupSetting, required: true },
          can_delete_any_message_group: { type: groupSetting, required: true },
          can_delete_own_message_group: { type: groupSetting, required: true },
          can_send_message_group: { type: groupSetting, required: true },
          can_subscribe_group: { type: groupSetting, required: true },
          is_recently_active: { type: bool, required: true },
          stream_weekly_traffic: { type: int, required: false },
        },
        otherwise: "ignored",
      },
      required: false,
    }),
  },
  "SubscriptionUpdateEvent._readValue": {
    place: { file: EVENTS, find: "switch (SubscriptionProperty.fromRawString(json['property'] as String))" },
    field: () => ({
      type: {
        kind: "byProperty",
        property: "property",
        cases: {
          color: { type: color, required: true },
          is_muted: { type: bool, required: true },
          pin_to_top: { type: bool, required: true },
          desktop_notifications: { type: bool, required: true },
          audible_notifications: { type: bool, required: true },
          push_notifications: { type: bool, required: true },
          email_notifications: { type: bool, required: true },
          wildcard_mentions_notify: { type: bool, required: true },
        },
        otherwise: "ignored",
      },
      required: false,
    }),
  },
  // Reads edit_history and last_edit_timestamp of the message itself.
  "MessageEditState._readFromMessage": {
    place: { file: MODEL, find: "static MessageEditState _readFromMessage(" },
    field: () => ({ read: [], type: { kind: "class", name: "MessageEditStateSource" }, required: true }),
  },
  // Submessage.parseSubmessagesJson(json['submessages'] as List? ?? [], messageSenderId: json['sender_id'] as num)
  "Message._readPoll": {
    place: { file: MODEL, find: "static Poll? _readPoll(" },
    field: () => ({ read: [], type: { kind: "class", name: "MessagePollSource" }, required: true }),
  },
};

/**
 * Hand-written functions the generated code passes a value to (`fromJson:` converters and
 * factories). `type` null: the function hands the value on unchanged (or only wraps it).
 */
export const FUNCTIONS: Record<string, { place: DartPlace; type: TypeSpec | null; required?: boolean }> = {
  // (json as List<Object?>), each Reaction.fromJson(r as Map)
  "Message._reactionsFromJson": { place: { file: MODEL, find: "static Reactions? _reactionsFromJson(" }, type: { kind: "list", of: { kind: "class", name: "Reaction" } } },
  // (json as List<Object?>), each MessageFlag.fromRawString(raw as String): unknown flags tolerated
  "Message._flagsFromJson": { place: { file: MODEL, find: "static List<MessageFlag> _flagsFromJson(" }, type: { kind: "list", of: string } },
  "GetMessagesResult._messagesFromJson": {
    place: { file: "lib/api/route/messages.dart", find: "static List<Message> _messagesFromJson(" },
    type: { kind: "list", of: { kind: "class", name: "Message" } },
  },
  // each ((element as Map)['id'] as num).toInt()
  "DmMessage._conversationFromJson": {
    place: { file: MODEL, find: "static DmConversation _conversationFromJson(" },
    type: { kind: "list", of: { kind: "class", name: "DmRecipient" } },
  },
  // null, or a List of maps whose user_id is `as int`
  "TypingEvent._recipientIdsFromJson": {
    place: { file: EVENTS, find: "static List<int>? _recipientIdsFromJson(" },
    type: { kind: "list", of: { kind: "class", name: "TypingRecipient" } },
    required: false,
  },
  // json == 'private' ? 'direct' : json, then $enumDecode(_$MessageTypeEnumMap) with no unknownValue
  "MessageTypeConverter.fromJson": {
    place: { file: EVENTS, find: "class MessageTypeConverter extends JsonConverter<MessageType, String>" },
    type: { kind: "enum", name: "MessageType", unknown: "rejected", also: ["private"] },
  },
  "UpdateMessageMoveData.tryParseFromJson": {
    place: { file: EVENTS, find: "static UpdateMessageMoveData? tryParseFromJson(" },
    type: { kind: "rule", rule: "UpdateMessageMoveData.tryParseFromJson" },
  },
  "Message._messageEditStateFromJson": { place: { file: MODEL, find: "static MessageEditState _messageEditStateFromJson(" }, type: null },
  "Poll.fromJson": { place: { file: "lib/api/model/submessage.dart", find: "factory Poll.fromJson(" }, type: null },
  "TwentyFourHourTimeMode.fromApiValue": { place: { file: MODEL, find: "static TwentyFourHourTimeMode fromApiValue(bool? value)" }, type: null },
  // a known system group, a known special string, or any other string (DefaultGroupNameUnknown)
  "DefaultGroupName.fromJson": { place: { file: "lib/api/model/permission.dart", find: "factory DefaultGroupName.fromJson(String json)" }, type: null },
  "TopicName.fromJson": { place: { file: MODEL, find: "TopicName.fromJson(this._value);" }, type: null },
};

export interface HandClass extends Omit<ContractClass, "source" | "generated"> {
  place: DartPlace;
}

const idOnly = (key: string, type: TypeSpec): Field => ({ key, type, required: true });

/** Classes whose fromJson is written by hand, or that stand for objects a hand-written reader reads. */
export const CLASSES: Record<string, HandClass> = {
  // `UnexpectedEvent.fromJson(this.json) : super(id: json['id'] as int)`
  UnexpectedEvent: { place: { file: EVENTS, find: "UnexpectedEvent.fromJson(this.json)" }, fields: [idOnly("id", int)] },
  // id: json['id'] as int, userId: (json['person'] as Map)['user_id'] as int
  RealmUserRemoveEvent: {
    place: { file: EVENTS, find: "factory RealmUserRemoveEvent.fromJson(" },
    fields: [idOnly("id", int), { key: "user_id", read: ["person", "user_id"], type: int, required: true }],
  },
  // switch (json) { int() => named group, Map<String, dynamic>() => nameless, _ => throw }
  GroupSettingValue: {
    place: { file: MODEL, find: "factory GroupSettingValue.fromJson(Object? json)" },
    union: [int, { kind: "class", name: "GroupSettingValueNameless" }],
  },
  // Each key `as String?`; the emoji only when all three are non-null and non-empty.
  UserStatusChange: {
    place: { file: MODEL, find: "factory UserStatusChange.fromJson(" },
    fields: ["status_text", "emoji_name", "emoji_code", "reaction_type"].map((key) => ({ key, type: string, required: false })),
    rules: ["UserStatusChange._emojiFromJson"],
  },
  SubscriptionRemoveItem: { place: { file: EVENTS, find: ".map((e) => (e as Map<String, dynamic>)['stream_id'] as int)" }, fields: [idOnly("stream_id", int)] },
  DmRecipient: { place: { file: MODEL, find: "(element) => ((element as Map<String, dynamic>)['id'] as num).toInt()" }, fields: [idOnly("id", { kind: "num" })] },
  TypingRecipient: { place: { file: EVENTS, find: "(item) => (item as Map<String, Object?>)['user_id'] as int" }, fields: [idOnly("user_id", int)] },
  MessageEditStateSource: {
    place: { file: MODEL, find: "static MessageEditState _readFromMessage(" },
    fields: [
      { key: "edit_history", type: { kind: "list", of: { kind: "class", name: "MessageEditHistoryEntry" } }, required: false },
      { key: "last_edit_timestamp", type: int, required: false },
    ],
  },
  // entry['prev_content'], entry['prev_stream'] (null checks only), entry['prev_topic'] as String?,
  // and then entry['topic'] as String.
  MessageEditHistoryEntry: {
    place: { file: MODEL, find: "final prevTopicStr = entry['prev_topic'] as String?;" },
    fields: [{ key: "prev_topic", type: string, required: false }],
  },
  MessagePollSource: {
    place: { file: MODEL, find: "static Poll? _readPoll(" },
    fields: [
      { key: "submessages", type: { kind: "list", of: { kind: "class", name: "Submessage" } }, required: false, default: [] },
      { key: "sender_id", type: { kind: "num" }, required: true },
    ],
    rules: ["Submessage.parseSubmessagesJson"],
  },
};

/** Checks a hand-written factory adds after calling the generated parser ("crunchy shell"). */
export const CONDITIONS: Record<string, Array<Omit<Condition, "source"> & { place: DartPlace }>> = {
  DeleteMessageEvent: [
    {
      place: { file: EVENTS, find: "factory DeleteMessageEvent.fromJson(" },
      when: { key: "message_type", in: ["stream"] },
      require: [
        { key: "stream_id", type: int, required: true },
        { key: "topic", type: string, required: true },
      ],
    },
  ],
  TypingEvent: [
    {
      place: { file: EVENTS, find: "factory TypingEvent.fromJson(" },
      when: { key: "message_type", in: ["stream"] },
      require: [
        { key: "stream_id", type: int, required: true },
        { key: "topic", type: string, required: true },
      ],
    },
    {
      place: { file: EVENTS, find: "factory TypingEvent.fromJson(" },
      when: { key: "message_type", in: ["direct", "private"] },
      require: [{ key: "recipients", type: { kind: "list", of: { kind: "class", name: "TypingRecipient" } }, required: true }],
    },
  ],
  MessageEditHistoryEntry: [
    {
      place: { file: MODEL, find: "final topic = TopicName.fromJson(entry['topic'] as String);" },
      when: { key: "prev_topic" },
      require: [{ key: "topic", type: string, required: true }],
    },
  ],
};

/** The named checks the checker implements (test/support/flutter-contract.ts), and what each is. */
export const RULES: Record<string, { place: DartPlace; description: string }> = {
  "UpdateMessageMoveData.tryParseFromJson": {
    place: { file: EVENTS, find: "static UpdateMessageMoveData? tryParseFromJson(" },
    description:
      "stream_id, new_stream_id: num?; orig_subject, subject: String?; propagate_mode: String? that must be a PropagateMode value. " +
      "new_stream_id defaults to stream_id and subject to orig_subject; if neither changes, propagate_mode must be absent; " +
      "otherwise stream_id, orig_subject and propagate_mode are all required.",
  },
  "ChannelDeleteEvent._readChannelIds": {
    place: { file: EVENTS, find: "static List<int> _readChannelIds(Map<dynamic, dynamic> json, String key) {\n    final channelIds" },
    description: "stream_ids: List of int if present and non-null; otherwise streams: List of objects with stream_id: int (required).",
  },
  // jsonDecode(submessages.first.content), WidgetData.fromJson, then Poll.fromSubmessages.
  "Submessage.parseSubmessagesJson": {
    place: { file: "lib/api/model/submessage.dart", find: "static Poll? parseSubmessagesJson(" },
    description:
      "when submessages is non-empty: the first one's content is a JSON object with widget_type: String (and sender_id the message's sender, " +
      "asserted in debug builds); for widget_type \"poll\" it is read as PollWidgetData, and every later submessage's content is a JSON object " +
      "read by PollEventSubmessage.fromJson: type must be a PollEventSubmessageType value (fromRawString uses !), then " +
      "PollNewOptionEventSubmessage, PollQuestionEventSubmessage or PollVoteEventSubmessage by type.",
  },
  "UserStatusChange._emojiFromJson": {
    place: { file: MODEL, find: "static Option<StatusEmoji?> _emojiFromJson(" },
    description: "when emoji_name, emoji_code and reaction_type are all non-null and non-empty, reaction_type must be a ReactionType value.",
  },
};
