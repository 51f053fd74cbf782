// Who is typing where, from typing events. Each "start" lasts until "stop" or until the server's
// expiry period passes without a new "start" (a sender who vanished).
import { signal } from "@preact/signals";
import { dmKey } from "../narrow";
import { onEvent } from "./events";
import { myUserId, realm } from "./store";

/** Where someone types: `stream:<id>:<lower topic>` or `dm:<key>` (other users' ids, see dmKey). */
export function typingPlace(where: { streamId: number; topic: string } | { userIds: number[] }): string {
  return "streamId" in where ? `stream:${where.streamId}:${where.topic.toLowerCase()}` : `dm:${dmKey(where.userIds, myUserId.value)}`;
}

/** Place → user ids typing there. */
export const typingByPlace = signal<ReadonlyMap<string, readonly number[]>>(new Map());
const timers = new Map<string, ReturnType<typeof setTimeout>>();

function set(place: string, userId: number, typing: boolean): void {
  const timerKey = `${place}|${userId}`;
  clearTimeout(timers.get(timerKey));
  timers.delete(timerKey);
  const current = typingByPlace.value.get(place) ?? [];
  const without = current.filter((id) => id !== userId);
  const nextList = typing ? [...without, userId] : without;
  if (nextList.length === current.length && typing === current.includes(userId)) {
    if (!typing) return;
  }
  const next = new Map(typingByPlace.value);
  if (nextList.length) next.set(place, nextList);
  else next.delete(place);
  typingByPlace.value = next;
  if (typing) {
    const expiry = typeof realm.value.server_typing_started_expiry_period_milliseconds === "number" ? realm.value.server_typing_started_expiry_period_milliseconds : 15_000;
    timers.set(timerKey, setTimeout(() => set(place, userId, false), expiry));
  }
}

onEvent("typing", (event) => {
  const userId = event.sender.user_id;
  if (userId === myUserId.value) return;
  const place =
    event.message_type === "stream" && event.stream_id !== undefined
      ? typingPlace({ streamId: event.stream_id, topic: event.topic ?? "" })
      : typingPlace({ userIds: (event.recipients ?? []).map((r) => r.user_id) });
  set(place, userId, event.op === "start");
});

// A message from someone means they stopped typing there.
onEvent("message", (event) => {
  const message = event.message;
  const place =
    message.type === "stream"
      ? typingPlace({ streamId: message.stream_id ?? 0, topic: message.subject })
      : typingPlace({ userIds: typeof message.display_recipient === "string" ? [] : message.display_recipient.map((u) => u.id) });
  if (typingByPlace.value.get(place)?.includes(message.sender_id)) set(place, message.sender_id, false);
});
