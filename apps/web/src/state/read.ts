// Marking messages read while the user reads them: the message list reports rows that were on
// screen while the window had focus; they are sent in one POST /messages/flags a second.
import { api } from "../api/client";
import { isUnread, markReadLocally } from "./unread";

const pending = new Set<number>();
let timer: ReturnType<typeof setTimeout> | null = null;

async function flush(): Promise<void> {
  timer = null;
  if (pending.size === 0) return;
  const ids = [...pending].sort((a, b) => a - b);
  pending.clear();
  try {
    await api.post("/messages/flags", { messages: ids, op: "add", flag: "read" });
  } catch {
    // Put them back for the next batch; the unread state is already updated locally and the
    // server's answer (an update_message_flags event) will agree once the request goes through.
    for (const id of ids) pending.add(id);
    if (!timer) timer = setTimeout(() => void flush(), 5000);
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
