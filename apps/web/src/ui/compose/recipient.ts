// Who a compose message goes to: a stream and topic, or a set of users (one → a DM, several → a
// group DM). Derived from the narrow the user is reading, as Zulip's compose does.
import { narrowDmIds, narrowStreamId, termOf, type Narrow } from "../../narrow";
import { myUserId, streamsById, subscriptionsById, usersById } from "../../state/store";

export type ComposeRecipient = { type: "stream"; streamId: number | null; topic: string } | { type: "direct"; userIds: number[] };

/** The recipient a reply in this narrow goes to, or null when the narrow names no conversation. */
export function recipientFromNarrow(narrow: Narrow): ComposeRecipient | null {
  const streamId = narrowStreamId(narrow);
  if (streamId !== undefined) return { type: "stream", streamId, topic: termOf(narrow, "topic") ?? "" };
  const dm = narrowDmIds(narrow);
  if (dm !== undefined) {
    const others = dm.filter((id) => id !== myUserId.value);
    // A DM to oneself keeps its only member.
    return { type: "direct", userIds: others.length > 0 ? others : dm };
  }
  const dmIncluding = termOf(narrow, "dm-including");
  if (dmIncluding !== undefined && /^\d+$/.test(dmIncluding) && Number(dmIncluding) !== myUserId.value) return { type: "direct", userIds: [Number(dmIncluding)] };
  return null;
}

export function streamName(streamId: number | null): string {
  if (streamId === null) return "";
  return subscriptionsById.value.get(streamId)?.name ?? streamsById.value.get(streamId)?.name ?? `#${streamId}`;
}

export function userName(userId: number): string {
  return usersById.value.get(userId)?.full_name ?? `User ${userId}`;
}

/** The text of the collapsed "Message …" button. */
export function describeRecipient(recipient: ComposeRecipient): string {
  if (recipient.type === "stream") return recipient.topic ? `#${streamName(recipient.streamId)} > ${recipient.topic}` : `#${streamName(recipient.streamId)}`;
  return recipient.userIds.map(userName).join(", ");
}

/** A stable key for a conversation, for drafts and the typing notifier. */
export function recipientKey(recipient: ComposeRecipient): string {
  if (recipient.type === "stream") return `stream:${recipient.streamId ?? ""}:${recipient.topic.trim().toLowerCase()}`;
  return `dm:${[...recipient.userIds].sort((a, b) => a - b).join(",")}`;
}

export function sameRecipient(a: ComposeRecipient, b: ComposeRecipient): boolean {
  return recipientKey(a) === recipientKey(b);
}
