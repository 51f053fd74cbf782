// Marking messages read while the user reads them: the message list reports rows that were on
// screen while the window had focus; they are sent in one POST /messages/flags a second.
import { api, ApiError } from "../api/client";
import { onEvent } from "./events";
import { isUnread, markReadLocally } from "./unread";

const pending = new Set<number>();
/** Messages deleted since the last flush: the server refuses a batch naming one ("Invalid message(s)"). */
const deleted = new Set<number>();
let timer: ReturnType<typeof setTimeout> | null = null;

onEvent("delete_message", (event) => {
  for (const id of event.message_ids ?? (event.message_id !== undefined ? [event.message_id] : [])) {
    pending.delete(id);
    deleted.add(id);
  }
});

async function flush(): Promise<void> {
  timer = null;
  if (pending.size === 0) return;
  const ids = [...pending].sort((a, b) => a - b);
  pending.clear();
  try {
    await api.post("/messages/flags", { messages: ids, op: "add", flag: "read" });
    deleted.clear();
  } catch (error) {
    // Put them back for the next batch; the unread state is already updated locally and the
    // server's answer (an update_message_flags event) will agree once the request goes through.
    // A refusal (400) names a message deleted (or made unreadable) meanwhile: retry without the
    // deleted ones, and give up on a batch the server would refuse again, rather than forever.
    const refused = error instanceof ApiError && error.status === 400;
    const retry = refused ? ids.filter((id) => !deleted.has(id)) : ids;
    if (refused && retry.length === ids.length) return;
    for (const id of retry) pending.add(id);
    if (!timer && pending.size > 0) timer = setTimeout(() => void flush(), refused ? 0 : 5000);
  }
}

/** Queues messages to be marked read (unread ones only) within about a second. */
export function markRead(ids: Iterable<number>): void {
  const fresh: number[] = [];
  for (const id of ids) if (isUnread(id)) fresh.push(id);
  if (fresh.length === 0) return;
  for (const id of fresh) pending.add(id);
  markReadLocally(fresh);
  if (!timer) timer = setTimeout(() => void flush(), 1000);
}

if (typeof window !== "undefined") window.addEventListener("pagehide", () => void flush());
