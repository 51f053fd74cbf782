// Links to messages, topics and streams in the web client's hash routes (narrow.ts, Zulip's
// encoding, so links pasted from Zulip and to it keep working).
import { dmKey, dmUserIds, narrowToHash, type Narrow } from "../../narrow";
import { myUserId, streamsById, subscriptionsById, type Message } from "../../state/store";
import { narrowContext } from "../../state/route";

export function streamName(streamId: number): string {
  return streamsById.value.get(streamId)?.name ?? subscriptionsById.value.get(streamId)?.name ?? String(streamId);
}

/** The conversation a message belongs to: [channel, topic], or the dm term. */
export function conversationNarrow(message: Message): Narrow {
  if (message.type === "stream" && message.stream_id !== undefined) {
    return [
      { operator: "channel", operand: String(message.stream_id) },
      { operator: "topic", operand: message.subject },
    ];
  }
  return [{ operator: "dm", operand: dmKey(dmUserIds(message), myUserId.value) }];
}

export function hashOf(narrow: Narrow): string {
  return narrowToHash(narrow, narrowContext.value);
}

export function streamHash(streamId: number): string {
  return hashOf([{ operator: "channel", operand: String(streamId) }]);
}

export function topicHash(streamId: number, topic: string): string {
  return hashOf([
    { operator: "channel", operand: String(streamId) },
    { operator: "topic", operand: topic },
  ]);
}

export function messageHash(message: Message): string {
  return hashOf([...conversationNarrow(message), { operator: "near", operand: String(message.id) }]);
}

/** An absolute link, as people paste it elsewhere. */
export function absoluteLink(hash: string): string {
  return `${location.origin}${location.pathname}${hash}`;
}

export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Without the async clipboard (an http:// origin), a selected textarea and the old command.
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "act-offscreen";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}
