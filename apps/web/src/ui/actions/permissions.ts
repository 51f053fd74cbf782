// What the signed-in user may do to a message, in the server's rules (packages/core actions
// message-edit.ts and message-delete.ts), so the menus offer only what will succeed.
import { isAdmin, myUserId, realm, streamsById, subscriptionsById, type Message } from "../../state/store";

/** Zulip 3.0's limit for editing other people's topics (community topic editing). */
const COMMUNITY_TOPIC_EDIT_SECONDS = 86_400;

function ageSeconds(message: Message): number {
  return Date.now() / 1000 - message.timestamp;
}

function isMine(message: Message): boolean {
  return message.sender_id === myUserId.value;
}

export function canEditContent(message: Message): boolean {
  const state = realm.value;
  if (!state.realm_allow_message_editing || !isMine(message)) return false;
  const limit = state.realm_message_content_edit_limit_seconds;
  return !limit || ageSeconds(message) < limit;
}

export function canEditTopic(message: Message): boolean {
  const state = realm.value;
  if (!state.realm_allow_message_editing || message.type !== "stream") return false;
  if (isMine(message) || isAdmin.value || message.subject === "(no topic)") return true;
  return !!state.realm_allow_community_topic_editing && ageSeconds(message) < COMMUNITY_TOPIC_EDIT_SECONDS;
}

function isPrivateStream(streamId: number | undefined): boolean {
  if (streamId === undefined) return true;
  const stream = streamsById.value.get(streamId) ?? subscriptionsById.value.get(streamId);
  return stream?.invite_only ?? true;
}

/** Moves between streams: administrators, and only between public streams. */
export function canMoveStream(message: Message): boolean {
  return canEditTopic(message) && isAdmin.value && !isPrivateStream(message.stream_id);
}

export function publicStreamTargets(): { id: number; name: string }[] {
  return [...streamsById.value.values()]
    .filter((s) => !s.invite_only)
    .map((s) => ({ id: s.stream_id, name: s.name }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function canDelete(message: Message): boolean {
  if (isAdmin.value) return true;
  const state = realm.value;
  if (!isMine(message) || !state.realm_allow_message_deleting) return false;
  const limit = state.realm_message_content_delete_limit_seconds;
  return !limit || ageSeconds(message) < limit;
}

export function canViewHistory(message: Message): boolean {
  // Feature level 358's "moves" shows moves only; a content edit alone then has nothing to show.
  const policy = realm.value.realm_message_edit_history_visibility_policy;
  if (policy === "none" || realm.value.realm_allow_edit_history === false) return false;
  return message.last_moved_timestamp !== undefined || (policy !== "moves" && message.last_edit_timestamp !== undefined);
}

export function canViewReadReceipts(): boolean {
  return realm.value.realm_enable_read_receipts === true;
}
