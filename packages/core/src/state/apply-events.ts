// Applies events to a /register state (Zulip's apply_events). /register uses it for the events
// that reached the new queue while the state was being read; tests use it to check that an
// action's events turn an old state into the new one. Applying an event twice changes nothing.
import { appliesToFetched, type State } from "./initial-state.ts";
import { ORGANIZATION_APPLIERS } from "./organization-state.ts";
import { RECENT_CONVERSATION_APPLIERS } from "./recent-conversations.ts";
import { markStale } from "./stale-sections.ts";
import { applyUnreadMessageEvent, UNREAD_APPLIERS } from "./unread-state.ts";
import { applyUserTopicEvent } from "./user-topics-state.ts";
import type { UserTopicItem } from "../queries/user-topics.ts";
import { materializeSections } from "./json-text.ts";
import { seesDeliveryEmails } from "../lib/email-visibility.ts";
import { INACCESSIBLE_USER_NAME, inaccessibleUserDict } from "./restricted-users.ts";

/** The sections an event node may hold as JSON text (realm-state-cache.ts). */
const REALM_USERS_TEXT_SECTIONS = ["realm_users", "realm_non_active_users"];

type Person = Record<string, unknown> & { user_id: number };

/**
 * A presence event on slim_presence's form of the state (queries/presence.ts). A user new to it
 * who is only idle would read as active when they joined, which the event does not say: read again.
 */
function applyModernPresence(state: State, key: string, event: Record<string, unknown>): void {
  const presences = state.presences as Record<string, { active_timestamp: number; idle_timestamp: number }>;
  const reports = Object.values(event.presence as Record<string, { status: string; timestamp: number }>);
  const entry = presences[key];
  const active = reports.filter((info) => info.status === "active").map((info) => info.timestamp);
  if (!entry && active.length === 0) return markStale(state, "presence");
  const updated = { ...(entry ?? { active_timestamp: 0, idle_timestamp: 0 }) };
  for (const info of reports) updated.idle_timestamp = Math.max(updated.idle_timestamp, info.timestamp);
  for (const at of active) updated.active_timestamp = Math.max(updated.active_timestamp, at);
  presences[key] = updated;
}
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

/** Whether the state's user is shown everyone's delivery_email (lib/email-visibility.ts), if it says. */
function seesOthersDeliveryEmails(state: State): boolean {
  return typeof state.role === "number" && typeof state.realm_email_address_visibility === "number" && seesDeliveryEmails(state.role, state.realm_email_address_visibility);
}

const APPLIERS: Record<string, Applier> = {
  ...ORGANIZATION_APPLIERS,

  message(state, event, userId) {
    applyUnreadMessageEvent(state, event, userId);
    RECENT_CONVERSATION_APPLIERS.message(state, event, userId);
    if (!("max_message_id" in state)) return;
    const id = (event.message as { id: number }).id;
    state.max_message_id = Math.max(state.max_message_id as number, id);
  },

  update_message_flags(state, event, userId) {
    UNREAD_APPLIERS.update_message_flags(state, event, userId);
    // Marked unread: the raw unread form keeps senders, which message_details does not carry.
    if (event.flag === "read" && event.op === "remove" && "raw_unread_msgs" in state && (event.messages as number[]).length > 0) markStale(state, "update_message_flags");
    if (event.flag !== "starred" || !Array.isArray(state.starred_messages)) return;
    const changed = new Set(event.messages as number[]);
    const kept = (state.starred_messages as number[]).filter((id) => !changed.has(id));
    state.starred_messages = event.operation === "add" ? [...kept, ...changed].sort((a, b) => a - b) : kept;
  },

  update_message: UNREAD_APPLIERS.update_message,

  delete_message(state, event, userId) {
    UNREAD_APPLIERS.delete_message(state, event, userId);
    RECENT_CONVERSATION_APPLIERS.delete_message(state, event);
    const deleted = new Set(Array.isArray(event.message_ids) ? (event.message_ids as number[]) : [event.message_id as number]);
    if (Array.isArray(state.starred_messages)) state.starred_messages = (state.starred_messages as number[]).filter((id) => !deleted.has(id));
    // The newest message gone, the new newest is not in the event.
    if (typeof state.max_message_id === "number" && deleted.has(state.max_message_id)) markStale(state, "message");
  },

  realm_user(state, event, userId) {
    if (!("realm_users" in state)) return;
    materializeSections(state, REALM_USERS_TEXT_SECTIONS);
    const person = event.person as Person;
    const active = state.realm_users as Person[];
    const inactive = state.realm_non_active_users as Person[];
    const systemBots = state.cross_realm_bots as Person[];
    if (event.op === "add") {
      // A reactivated user comes back from the deactivated ones (Zulip keeps one list, split by is_active).
      if (!person.is_cross_realm_bot) removeById(inactive, person.user_id, "user_id");
      upsertById(person.is_cross_realm_bot ? systemBots : active, person, "user_id");
      // /register lists users by id: one a guest comes to know of again (a lower id) goes in its place.
      if (!person.is_cross_realm_bot && Array.isArray(active)) active.sort((a, b) => a.user_id - b.user_id);
    } else if (event.op === "remove") {
      const removed = removeById(active, person.user_id, "user_id");
      if (removed) upsertById(inactive, { ...removed, is_active: false }, "user_id");
    } else if (event.op === "update" && typeof person.is_active === "boolean") {
      // (De)activation as modern queues get it (feature level 222): the user changes lists.
      const [from, to] = person.is_active ? [inactive, active] : [active, inactive];
      const moved = removeById(from, person.user_id, "user_id");
      if (moved) upsertById(to, { ...moved, is_active: person.is_active }, "user_id");
    } else if (event.op === "update") {
      for (const list of [active, inactive, systemBots]) {
        const target = list?.find((p) => p.user_id === person.user_id);
        if (!target) continue;
        for (const [key, value] of Object.entries(person)) {
          if (key === "custom_profile_field") {
            const field = value as { id: number; value: string | null; rendered_value?: string | null };
            const data = (target.profile_data ??= {}) as Record<string, unknown>;
            if (field.value === null) delete data[String(field.id)];
            else data[String(field.id)] = { value: field.value, rendered_value: field.rendered_value ?? null };
          } else if (key === "new_email") {
            target.email = value;
          } else if (key === "delivery_email") {
            // A null (feature level 163) takes an address back: a 3.x state, whose entries leave
            // out what the viewer may not see, has none to take. The user's own entry shows it as
            // anyone's of the same setting would be shown to them.
            if (value === null) {
              if ("delivery_email" in target) target.delivery_email = null;
            } else if (person.user_id !== userId || "delivery_email" in target || seesOthersDeliveryEmails(state)) target.delivery_email = value;
          } else if (key in target && key !== "user_id") {
            // Only fields the user object has (an event's avatar_url_medium is the user's own state's).
            target[key] = value;
            if (key === "role") {
              const role = value as number;
              Object.assign(target, { is_admin: role <= 200, is_owner: role === 100, is_guest: role === 600 });
            }
          }
        }
      }
      if (person.user_id === userId) {
        for (const key of ["full_name", "delivery_email", "avatar_source", "avatar_url", "avatar_url_medium"]) {
          if (key in person && key in state) state[key] = person[key];
        }
        if ("new_email" in person && "email" in state) state.email = person.new_email;
        if (typeof person.role === "number") {
          Object.assign(state, { role: person.role, is_admin: person.role <= 200, is_owner: person.role === 100, is_guest: person.role === 600 });
          if ("is_moderator" in state) state.is_moderator = person.role === 300;
        }
      }
    }
  },

  // The bots one administers (Zulip's realm_bot events).
  realm_bot(state, event) {
    if (!Array.isArray(state.realm_bots)) return;
    const bots = state.realm_bots as Array<Record<string, unknown>>;
    const bot = event.bot as Record<string, unknown>;
    if (event.op === "add") upsertById(bots, bot, "user_id");
    else if (event.op === "delete") removeById(bots, bot.user_id, "user_id");
    else {
      const target = bots.find((b) => b.user_id === bot.user_id);
      if (target && event.op === "remove") target.is_active = false;
      else if (target && event.op === "update") Object.assign(target, bot);
    }
  },

  realm_emoji(state, event) {
    if ("realm_emoji" in state) state.realm_emoji = event.realm_emoji;
  },

  hotspots(state, event) {
    if ("hotspots" in state) state.hotspots = event.hotspots;
  },

  onboarding_steps(state, event) {
    if ("onboarding_steps" in state) state.onboarding_steps = event.onboarding_steps;
  },

  realm_playgrounds(state, event) {
    if ("realm_playgrounds" in state) state.realm_playgrounds = event.realm_playgrounds;
  },

  // Zulip's apply_event for realm_domains: add, change (allow_subdomains) and remove by domain.
  realm_domains(state, event) {
    if (!Array.isArray(state.realm_domains)) return;
    const domains = state.realm_domains as Array<{ domain: string; allow_subdomains: boolean }>;
    if (event.op === "add" || event.op === "change") {
      const entry = event.realm_domain as { domain: string; allow_subdomains: boolean };
      const existing = domains.find((d) => d.domain === entry.domain);
      if (existing) existing.allow_subdomains = entry.allow_subdomains;
      else domains.push({ ...entry });
    } else if (event.op === "remove") {
      state.realm_domains = domains.filter((d) => d.domain !== event.domain);
    }
  },

  realm_user_settings_defaults(state, event) {
    const defaults = state.realm_user_settings_defaults as Record<string, unknown> | undefined;
    if (defaults && event.op === "update") defaults[event.property as string] = event.value;
  },

  subscription(state, event, userId) {
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
        if (!removed) continue;
        if (Array.isArray(removed.subscribers)) removed.subscribers = (removed.subscribers as number[]).filter((id) => id !== userId);
        upsertById(state.unsubscribed as unknown[], removed, "stream_id");
      }
    } else if (event.op === "peer_add" || event.op === "peer_remove") {
      // Lists (feature level 35, modern queues) or one stream and user (3.x queues).
      const streamIds = Array.isArray(event.stream_ids) ? (event.stream_ids as number[]) : [event.stream_id as number];
      const peerIds = Array.isArray(event.user_ids) ? (event.user_ids as number[]) : [event.user_id as number];
      for (const list of [subscriptions, state.unsubscribed, state.never_subscribed] as Array<Array<Record<string, unknown>>>) {
        for (const sub of list?.filter((s) => streamIds.includes(s.stream_id as number)) ?? []) {
          const subscribers = sub.subscribers as number[] | undefined;
          if (!subscribers) continue;
          for (const peerId of peerIds) {
            const has = subscribers.includes(peerId);
            if (event.op === "peer_add" && !has) subscribers.push(peerId);
            if (event.op === "peer_remove" && has) subscribers.splice(subscribers.indexOf(peerId), 1);
          }
          subscribers.sort((a, b) => a - b);
        }
      }
    } else if (event.op === "update") {
      const sub = subscriptions.find((s) => s.stream_id === event.stream_id);
      if (sub) sub[event.property as string] = event.value;
    }
  },

  stream(state, event) {
    const lists = ["streams", "subscriptions", "unsubscribed", "never_subscribed"]
      .map((key) => state[key] as Array<Record<string, unknown>> | undefined)
      .filter((list): list is Array<Record<string, unknown>> => Array.isArray(list));
    if (event.op === "create" || event.op === "occupy") {
      for (const stream of event.streams as Array<Record<string, unknown>>) upsertById(state.streams as unknown[] | undefined, stream, "stream_id");
      // A stream one can now see and is not in is never-subscribed (Zulip's apply_event; a private
      // one reaches only those its groups let see it, feature level 349); a subscription of one's
      // own that follows takes it out again.
      const never = state.never_subscribed as Array<Record<string, unknown>> | undefined;
      if (event.op === "create" && Array.isArray(never)) {
        const own = [state.subscriptions, state.unsubscribed].flatMap((list) => (Array.isArray(list) ? (list as Array<Record<string, unknown>>) : []));
        const withSubscribers = [...own, ...never].some((s) => "subscribers" in s);
        for (const stream of event.streams as Array<Record<string, unknown>>) {
          if (own.some((s) => s.stream_id === stream.stream_id)) continue;
          upsertById(never, withSubscribers ? { ...stream, subscribers: [] } : { ...stream }, "stream_id");
        }
      }
      // /register lists both by id; a stream one gains sight of (a role change) may be an old one.
      for (const list of [state.streams, state.never_subscribed]) {
        if (Array.isArray(list)) (list as Array<{ stream_id: number }>).sort((a, b) => a.stream_id - b.stream_id);
      }
    } else if (event.op === "delete" || event.op === "vacate") {
      for (const stream of event.streams as Array<{ stream_id: number }>) {
        removeById(state.streams as unknown[] | undefined, stream.stream_id, "stream_id");
        if (event.op === "delete") for (const list of lists) removeById(list, stream.stream_id, "stream_id");
      }
    } else if (event.op === "update") {
      for (const list of lists) {
        const stream = list.find((s) => s.stream_id === event.stream_id);
        // Only properties the object carries (email_address is a subscription's, not a stream's).
        if (!stream || !((event.property as string) in stream)) continue;
        stream[event.property as string] = event.value;
        if ("rendered_description" in event) stream.rendered_description = event.rendered_description;
        if ("history_public_to_subscribers" in event) stream.history_public_to_subscribers = event.history_public_to_subscribers;
        if ("is_web_public" in event) stream.is_web_public = event.is_web_public;
      }
    }
  },


  muted_topics(state, event) {
    if ("muted_topics" in state) state.muted_topics = event.muted_topics;
  },

  muted_users(state, event) {
    if ("muted_users" in state) state.muted_users = event.muted_users;
  },

  user_topic(state, event, userId) {
    UNREAD_APPLIERS.user_topic(state, event, userId);
    if (Array.isArray(state.user_topics)) applyUserTopicEvent(state.user_topics as UserTopicItem[], event);
  },

  update_global_notifications(state, event) {
    const name = event.notification_name as string;
    if (name in state) state[name] = event.setting;
  },

  update_display_settings(state, event) {
    const name = event.setting_name as string;
    if (name in state) state[name] = event.setting;
  },

  // Zulip 9.0's settings events keep the user_settings object (and the realm_user section's enter_sends).
  user_settings(state, event) {
    const property = event.property as string;
    const settings = state.user_settings as Record<string, unknown> | undefined;
    if (settings && property in settings) settings[property] = event.value;
    if (property === "enter_sends" && "enter_sends" in state) state.enter_sends = event.value;
  },

  presence(state, event) {
    if (!("presences" in state)) return;
    // Queues registered with slim_presence get the event without `email` and key by user id.
    const key = typeof event.email === "string" ? event.email : String(event.user_id);
    if (typeof event.email !== "string") return applyModernPresence(state, key, event);
    const presences = state.presences as Record<string, Record<string, { timestamp: number }>>;
    const entry = (presences[key] ??= {});
    for (const [client, info] of Object.entries(event.presence as Record<string, { client: string; status: string; timestamp: number }>)) {
      entry[client] = info;
      if (!entry.aggregated || info.timestamp >= entry.aggregated.timestamp) {
        entry.aggregated = { client: info.client, status: info.status, timestamp: info.timestamp } as { timestamp: number };
      }
    }
  },

  user_status(state, event) {
    if (!("user_status" in state)) return;
    const statuses = state.user_status as Record<string, { away?: boolean; status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string }>;
    const key = String(event.user_id);
    const status = { ...statuses[key] };
    if (event.away === true) status.away = true;
    if (event.away === false) delete status.away;
    if (typeof event.status_text === "string") {
      if (event.status_text === "") delete status.status_text;
      else status.status_text = event.status_text;
    }
    // The status emoji (feature level 86): an empty name is none.
    if (typeof event.emoji_name === "string") {
      if (event.emoji_name === "") {
        delete status.emoji_name;
        delete status.emoji_code;
        delete status.reaction_type;
      } else Object.assign(status, { emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type });
    }
    if (Object.keys(status).length > 0) statuses[key] = status;
    else delete statuses[key];
  },

  alert_words(state, event) {
    if ("alert_words" in state) state.alert_words = event.alert_words;
  },

  drafts(state, event) {
    if (!("drafts" in state)) return;
    type Draft = { id: number; timestamp: number };
    let drafts = (state.drafts as Draft[]).filter((d) => d.id !== (event.op === "remove" ? event.draft_id : -1));
    if (event.op === "add") drafts = [...drafts.filter((d) => !(event.drafts as Draft[]).some((n) => n.id === d.id)), ...(event.drafts as Draft[])];
    if (event.op === "update") drafts = [...drafts.filter((d) => d.id !== (event.draft as Draft).id), event.draft as Draft];
    // As /register lists them (queries/drafts.ts): newest first, ties by id.
    state.drafts = drafts.sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
  },

  // Feature levels 297 and 368 (Zulip's apply_event): added at the end, replaced in place.
  saved_snippets(state, event) {
    if (!("saved_snippets" in state)) return;
    type Snippet = { id: number };
    const list = state.saved_snippets as Snippet[];
    if (event.op === "add") state.saved_snippets = [...list.filter((snippet) => snippet.id !== (event.saved_snippet as Snippet).id), event.saved_snippet as Snippet];
    if (event.op === "remove") state.saved_snippets = list.filter((snippet) => snippet.id !== event.saved_snippet_id);
    if (event.op === "update") state.saved_snippets = list.map((snippet) => (snippet.id === (event.saved_snippet as Snippet).id ? (event.saved_snippet as Snippet) : snippet));
  },

  scheduled_messages(state, event) {
    if (!("scheduled_messages" in state)) return;
    type Scheduled = { scheduled_message_id: number; scheduled_delivery_timestamp: number };
    const idOf = (m: Scheduled) => m.scheduled_message_id;
    let list = state.scheduled_messages as Scheduled[];
    if (event.op === "add") list = [...list.filter((m) => !(event.scheduled_messages as Scheduled[]).some((n) => idOf(n) === idOf(m))), ...(event.scheduled_messages as Scheduled[])];
    if (event.op === "update") list = [...list.filter((m) => idOf(m) !== idOf(event.scheduled_message as Scheduled)), event.scheduled_message as Scheduled];
    if (event.op === "remove") list = list.filter((m) => idOf(m) !== event.scheduled_message_id);
    // As /register lists them: soonest first, ties by id.
    state.scheduled_messages = list.sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || idOf(a) - idOf(b));
  },
};

/**
 * Applies events in order. With `fetched` (the section names /register fetched), only events that
 * keep one of those sections current, as Zulip's fetch_event_types limits them.
 */
export function applyEvents(
  state: State,
  events: Array<Record<string, unknown>>,
  userId: number,
  fetched: string[] | null = null,
  /**
   * The queue's user_list_incomplete capability (feature level 232), and the realm's fake email
   * domain (realm_bot_domain) for "Unknown user" placeholders when the state has no realm section.
   */
  options: { userListIncomplete?: boolean; fakeEmailDomain?: string; archivedChannels?: boolean } = {},
): State {
  for (const event of events) {
    if (!appliesToFetched(event.type as string, fetched)) continue;
    if (isLostAccessEvent(event)) applyLostAccess(state, event, options);
    else if (options.archivedChannels === true && isArchivingEvent(event)) applyArchiving(state, event);
    else APPLIERS[event.type as string]?.(state, event, userId);
  }
  return state;
}

/**
 * `stream delete` for streams that were archived (feature level 315): its deprecated `streams`
 * carry the archived streams, `is_archived` true; a stream one only lost sight of is not archived.
 */
function isArchivingEvent(event: Record<string, unknown>): boolean {
  return event.type === "stream" && event.op === "delete" && Array.isArray(event.streams) && (event.streams as Array<{ is_archived?: unknown }>).every((s) => s.is_archived === true);
}

/**
 * For archived_channels clients, an archived stream stays where it is listed, archived: its stream
 * fields become the event's (is_archived true), a subscription's own fields stay.
 */
function applyArchiving(state: State, event: Record<string, unknown>): void {
  const byId = new Map((event.streams as Array<Record<string, unknown>>).map((s) => [s.stream_id as number, s]));
  for (const key of ["streams", "subscriptions", "unsubscribed", "never_subscribed"]) {
    const list = state[key];
    if (!Array.isArray(list)) continue;
    for (const item of list as Array<Record<string, unknown>>) {
      const archived = byId.get(item.stream_id as number);
      if (archived) Object.assign(item, archived);
    }
  }
}

/**
 * `realm_user remove` naming the user "Unknown user": a restricted guest no longer may access them
 * (Zulip 9.0's send_user_remove_events_on_removing_subscriptions), not 3.x's deactivation, whose
 * remove carries the user's name.
 */
function isLostAccessEvent(event: Record<string, unknown>): boolean {
  const person = event.person as Record<string, unknown> | undefined;
  return event.type === "realm_user" && event.op === "remove" && person?.full_name === INACCESSIBLE_USER_NAME && Object.keys(person).length === 2;
}

/** As Zulip's apply_event: the user leaves the list (user_list_incomplete) or becomes a placeholder, and leaves subscriber lists. */
function applyLostAccess(state: State, event: Record<string, unknown>, options: { userListIncomplete?: boolean; fakeEmailDomain?: string }): void {
  const userId = (event.person as { user_id: number }).user_id;
  materializeSections(state, REALM_USERS_TEXT_SECTIONS);
  // /register leaves out the status and presence of users a guest may not access (as Zulip's).
  for (const section of ["user_status", "presences"]) {
    const value = state[section];
    if (!value || typeof value !== "object" || Array.isArray(value)) continue;
    materializeSections(state, [section]);
    const byKey = state[section] as Record<string, unknown>;
    const email = (state.realm_users as Person[] | undefined)?.find((p) => p.user_id === userId)?.email;
    delete byKey[String(userId)];
    if (typeof email === "string") delete byKey[email];
  }
  if ("realm_users" in state) {
    const active = state.realm_users as Person[];
    const index = active.findIndex((p) => p.user_id === userId);
    if (index >= 0) {
      if (options.userListIncomplete === true) active.splice(index, 1);
      else {
        const domain = typeof state.realm_bot_domain === "string" ? state.realm_bot_domain : (options.fakeEmailDomain ?? "");
        active[index] = inaccessibleUserDict(userId, domain) as Person;
      }
    }
  }
  for (const section of ["subscriptions", "unsubscribed", "never_subscribed"]) {
    for (const sub of (Array.isArray(state[section]) ? state[section] : []) as Array<{ subscribers?: number[] }>) {
      if (Array.isArray(sub.subscribers)) sub.subscribers = sub.subscribers.filter((id) => id !== userId);
    }
  }
}
