// Who is online (presence) and what they say about themselves (user status). Presence comes from
// /register (slim: by user id, last active and idle times), presence events, and the answer to our
// own presence ping every server_presence_ping_interval_seconds.
import { computed, signal } from "@preact/signals";
import { api } from "../api/client";
import { onEvent, onRegister } from "./events";
import { realm } from "./store";

interface Times {
  active: number;
  idle: number;
}
export type PresenceStatus = "active" | "idle" | "offline";

/** Last active and idle timestamps (seconds) by user id. */
export const presenceTimes = signal<ReadonlyMap<number, Times>>(new Map());
/** Re-evaluated each ping so that people drift to idle and offline without events. */
const now = signal(Date.now() / 1000);

export interface UserStatus {
  away?: boolean;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}
export const userStatuses = signal<ReadonlyMap<number, UserStatus>>(new Map());

function offlineThreshold(): number {
  const value = realm.value.server_presence_offline_threshold_seconds;
  return typeof value === "number" ? value : 140;
}

export const presenceById = computed(() => {
  const threshold = offlineThreshold();
  const at = now.value;
  const result = new Map<number, PresenceStatus>();
  for (const [userId, times] of presenceTimes.value) {
    const away = userStatuses.value.get(userId)?.away === true;
    if (!away && at - times.active < threshold) result.set(userId, "active");
    else if (at - times.idle < threshold) result.set(userId, "idle");
  }
  return result;
});

export function presenceOf(userId: number): PresenceStatus {
  return presenceById.value.get(userId) ?? "offline";
}

type RawPresences = Record<string, unknown> | undefined;

function readPresences(raw: RawPresences): Map<number, Times> {
  const map = new Map<number, Times>();
  for (const [key, value] of Object.entries(raw ?? {})) {
    const userId = Number(key);
    if (!Number.isInteger(userId) || typeof value !== "object" || value === null) continue;
    const entry = value as { active_timestamp?: number; idle_timestamp?: number };
    map.set(userId, { active: entry.active_timestamp ?? 0, idle: Math.max(entry.idle_timestamp ?? 0, entry.active_timestamp ?? 0) });
  }
  return map;
}

onRegister((state) => {
  presenceTimes.value = readPresences(state.presences as RawPresences);
  now.value = Date.now() / 1000;
  const statuses = new Map<number, UserStatus>();
  for (const [key, value] of Object.entries(state.user_status ?? {})) statuses.set(Number(key), value as UserStatus);
  userStatuses.value = statuses;
});

onEvent("presence", (event) => {
  const times = { ...(presenceTimes.value.get(event.user_id) ?? { active: 0, idle: 0 }) };
  for (const client of Object.values(event.presence)) {
    if (client.status === "active") times.active = Math.max(times.active, client.timestamp);
    if (client.status !== "offline") times.idle = Math.max(times.idle, client.timestamp);
  }
  const next = new Map(presenceTimes.value);
  next.set(event.user_id, times);
  presenceTimes.value = next;
  now.value = Math.max(now.value, event.server_timestamp);
});

onEvent("user_status", (event) => {
  const next = new Map(userStatuses.value);
  const status: UserStatus = { ...(next.get(event.user_id) ?? {}) };
  if (event.away !== undefined) status.away = event.away;
  if (event.status_text !== undefined) status.status_text = event.status_text;
  if (event.emoji_name !== undefined) {
    status.emoji_name = event.emoji_name;
    status.emoji_code = event.emoji_code;
    status.reaction_type = event.reaction_type;
  }
  if (!status.away && !status.status_text && !status.emoji_name) next.delete(event.user_id);
  else next.set(event.user_id, status);
  userStatuses.value = next;
});

// ---------------------------------------------------------------------------------------------
// Our own presence: "active" when the user did something since the last ping, else "idle".

let lastInput = Date.now();
let timer: ReturnType<typeof setInterval> | null = null;

async function ping(): Promise<void> {
  const interval = typeof realm.value.server_presence_ping_interval_seconds === "number" ? realm.value.server_presence_ping_interval_seconds : 60;
  const active = document.hasFocus() && Date.now() - lastInput < interval * 1000 * 2;
  try {
    const answer = await api.post("/users/me/presence", { status: active ? "active" : "idle", slim_presence: true, new_user_input: active });
    if (answer.presences) presenceTimes.value = readPresences(answer.presences as RawPresences);
    now.value = answer.server_timestamp ?? Date.now() / 1000;
  } catch {
    // The next ping will do; presence is best effort.
  }
}

export function startPresence(): void {
  if (timer) return;
  for (const type of ["keydown", "pointerdown", "wheel", "focus"]) window.addEventListener(type, () => (lastInput = Date.now()), { passive: true });
  void ping();
  const interval = typeof realm.value.server_presence_ping_interval_seconds === "number" ? realm.value.server_presence_ping_interval_seconds : 60;
  timer = setInterval(() => void ping(), interval * 1000);
}
