// Applies events to a /register state (Zulip's apply_events). /register uses it for the events
// that reached the new queue while the state was being read; tests use it to check that an
// action's events turn an old state into the new one. Applying an event twice changes nothing.
import type { State } from "./initial-state.ts";

type Person = Record<string, unknown> & { user_id: number };
type Applier = (state: State, event: Record<string, unknown>, userId: number) => void;

function upsertById(list: unknown[] | undefined, item: Record<string, unknown>, key: string): void {
  if (!list) return;
  const index = list.findIndex((entry) => (entry as Record<string, unknown>)[key] === item[key]);
  if (index === -1) list.push(item);
  else list[index] = item;
}

function removeById(list: unknown[] | undefined, id: unknown, key: string): Record<string, unknown> | undefined {
  if (!list) return undefined;
  const index = list.findIndex((entry) => (entry as Record<string, unknown>)[key] === id);
  return index === -1 ? undefined : (list.splice(index, 1)[0] as Record<string, unknown>);
}

const APPLIERS: Record<string, Applier> = {
  message(state, event) {
    if (!("max_message_id" in state)) return;
    const id = (event.message as { id: number }).id;
    state.max_message_id = Math.max(state.max_message_id as number, id);
  },

  realm_user(state, event, userId) {
    if (!("realm_users" in state)) return;
    const person = event.person as Person;
    const active = state.realm_users as Person[];
    const inactive = state.realm_non_active_users as Person[];
    if (event.op === "add") {
      if (person.is_bot) upsertById(state.realm_bots as unknown[], person, "user_id");
      else upsertById(active, person, "user_id");
    } else if (event.op === "remove") {
      const removed = removeById(active, person.user_id, "user_id");
      removeById(state.realm_bots as unknown[], person.user_id, "user_id");
      if (removed) upsertById(inactive, { ...removed, is_active: false }, "user_id");
    } else if (event.op === "update") {
      for (const list of [active, inactive, state.realm_bots as Person[]]) {
        const target = list?.find((p) => p.user_id === person.user_id);
        if (!target) continue;
        for (const [key, value] of Object.entries(person)) {
          if (key === "custom_profile_field") {
            const field = value as { id: number; value: string | null; rendered_value?: string | null };
            const data = (target.profile_data ??= {}) as Record<string, unknown>;
            if (field.value === null) delete data[String(field.id)];
            else data[String(field.id)] = { value: field.value, rendered_value: field.rendered_value ?? null };
          } else if (key !== "user_id") {
            target[key] = value;
            if (key === "role") {
              const role = value as number;
              Object.assign(target, { is_admin: role <= 200, is_owner: role === 100, is_guest: role === 600 });
            }
          }
        }
      }
      if (person.user_id === userId) {
        if (typeof person.full_name === "string") state.full_name = person.full_name;
        if (typeof person.role === "number") {
          Object.assign(state, { role: person.role, is_admin: person.role <= 200, is_owner: person.role === 100, is_guest: person.role === 600 });
        }
      }
    }
  },

  subscription(state, event) {
    if (!("subscriptions" in state)) return;
    const subscriptions = state.subscriptions as Array<Record<string, unknown>>;
    if (event.op === "add") {
      for (const sub of event.subscriptions as Array<Record<string, unknown>>) {
        removeById(state.unsubscribed as unknown[], sub.stream_id, "stream_id");
        removeById(state.never_subscribed as unknown[], sub.stream_id, "stream_id");
        upsertById(subscriptions, sub, "stream_id");
      }
    } else if (event.op === "remove") {
      for (const sub of event.subscriptions as Array<{ stream_id: number }>) {
        const removed = removeById(subscriptions, sub.stream_id, "stream_id");
        if (removed) upsertById(state.unsubscribed as unknown[], removed, "stream_id");
      }
    } else if (event.op === "peer_add" || event.op === "peer_remove") {
      for (const list of [subscriptions, state.unsubscribed, state.never_subscribed] as Array<Array<Record<string, unknown>>>) {
        const sub = list?.find((s) => s.stream_id === event.stream_id);
        const subscribers = sub?.subscribers as number[] | undefined;
        if (!subscribers) continue;
        const userId = event.user_id as number;
        const has = subscribers.includes(userId);
        if (event.op === "peer_add" && !has) subscribers.push(userId);
        if (event.op === "peer_remove" && has) subscribers.splice(subscribers.indexOf(userId), 1);
      }
    } else if (event.op === "update") {
      const sub = subscriptions.find((s) => s.stream_id === event.stream_id);
      if (sub) sub[event.property as string] = event.value;
    }
  },

  stream(state, event) {
    if (!("streams" in state)) return;
    const streams = state.streams as Array<Record<string, unknown>>;
    if (event.op === "create" || event.op === "occupy") {
      for (const stream of event.streams as Array<Record<string, unknown>>) upsertById(streams, stream, "stream_id");
    } else if (event.op === "delete") {
      for (const stream of event.streams as Array<{ stream_id: number }>) removeById(streams, stream.stream_id, "stream_id");
    } else if (event.op === "update") {
      const stream = streams.find((s) => s.stream_id === event.stream_id);
      if (stream) stream[event.property as string] = event.value;
    }
  },

  update_global_notifications(state, event) {
    const name = event.notification_name as string;
    if (name in state) state[name] = event.setting;
  },

  update_display_settings(state, event) {
    const name = event.setting_name as string;
    if (name in state) state[name] = event.setting;
  },
};

export function applyEvents(state: State, events: Array<Record<string, unknown>>, userId: number): State {
  for (const event of events) APPLIERS[event.type as string]?.(state, event, userId);
  return state;
}
