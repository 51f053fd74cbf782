// The client's link to the server's changes: POST /register for the state and an event queue, then
// a long-poll of GET /events, each event handed to the handlers registered for its type. Each
// state module (unread, messages, presence, ...) registers its own handlers with onEvent and fills
// itself from the /register answer with onRegister, so adding an event type is one place (as
// Zulip's server_events_dispatch). A lost queue (BAD_EVENT_QUEUE_ID, a `restart`) re-registers;
// the onRegister handlers then reconcile (messages.ts fetches what arrived meanwhile).
import { batch, signal } from "@preact/signals";
import { api, ApiError, goToLogin, SessionEndedError, type Schemas } from "../api/client";
import type { RegisterState } from "./store";

type S = Schemas;
/** Each event type's payload, as the OpenAPI document describes it. */
export interface EventMap {
  heartbeat: S["HeartbeatEvent"];
  restart: S["RestartEvent"];
  message: S["MessageEvent"];
  update_message: S["UpdateMessageEvent"];
  delete_message: S["DeleteMessageEvent"];
  update_message_flags: S["UpdateMessageFlagsAddEvent"] | S["UpdateMessageFlagsRemoveEvent"];
  reaction: S["ReactionAddEvent"] | S["ReactionRemoveEvent"];
  submessage: S["SubmessageEvent"];
  typing: S["TypingStartEvent"] | S["TypingStopEvent"];
  alert_words: S["AlertWordsEvent"];
  muted_topics: S["MutedTopicsEvent"];
  user_topic: S["UserTopicEvent"];
  presence: S["PresenceEvent"];
  user_status: S["UserStatusEvent"] & { emoji_name?: string; emoji_code?: string; reaction_type?: string };
  user_settings: S["UserSettingsUpdateEvent"];
  attachment: S["AttachmentAddEvent"] | S["AttachmentUpdateEvent"] | S["AttachmentRemoveEvent"];
  stream: S["StreamCreateEvent"] | S["StreamOccupyEvent"] | S["StreamVacateEvent"] | S["StreamDeleteEvent"] | S["StreamUpdateEvent"];
  subscription:
    | S["SubscriptionAddEvent"]
    | S["SubscriptionRemoveEvent"]
    | S["SubscriptionUpdateEvent"]
    | S["SubscriptionPeerAddEvent"]
    | S["SubscriptionPeerRemoveEvent"];
  realm: S["RealmUpdateEvent"] | S["RealmUpdateDictEvent"];
  realm_user: S["RealmUserAddEvent"] | S["RealmUserRemoveEvent"] | S["RealmUserUpdateEvent"];
  realm_bot: S["RealmBotAddEvent"] | S["RealmBotUpdateEvent"] | S["RealmBotRemoveEvent"] | S["RealmBotDeleteEvent"];
  realm_emoji: S["RealmEmojiUpdateEvent"];
  realm_filters: S["RealmFiltersEvent"];
  realm_linkifiers: { id: number; type: "realm_linkifiers"; realm_linkifiers: NonNullable<RegisterState["realm_linkifiers"]> };
  // One schema since `op` went (feature level 45): CustomProfileFieldsEvent once the types are regenerated.
  custom_profile_fields: { id: number; type: "custom_profile_fields"; op?: "add" | "update" | "delete"; fields: NonNullable<RegisterState["custom_profile_fields"]> };
  default_streams: S["DefaultStreamsEvent"];
  default_stream_groups: S["DefaultStreamGroupsEvent"];
  user_group: S["UserGroupAddEvent"] | S["UserGroupUpdateEvent"] | S["UserGroupRemoveEvent"] | S["UserGroupAddMembersEvent"] | S["UserGroupRemoveMembersEvent"];
  /** Every event, after its own type's handlers. */
  "*": { id: number; type: string } & Record<string, unknown>;
}
export type EventType = keyof EventMap;
type AnyHandler = (event: never) => void;

const handlers = new Map<string, AnyHandler[]>();
type RegisterHandler = (state: RegisterState, reconnect: boolean) => void | Promise<void>;
const registerHandlers: RegisterHandler[] = [];

/** Calls `handler` with every event of `type`; returns a function that stops it. */
export function onEvent<T extends EventType>(type: T, handler: (event: EventMap[T]) => void): () => void {
  const list = handlers.get(type) ?? [];
  list.push(handler as AnyHandler);
  handlers.set(type, list);
  return () => {
    const at = list.indexOf(handler as AnyHandler);
    if (at >= 0) list.splice(at, 1);
  };
}

/**
 * Calls `handler` with each /register answer: the first (reconnect false) and each after a lost
 * queue (reconnect true), when the module must replace its state and catch up on what it missed.
 */
export function onRegister(handler: RegisterHandler): void {
  registerHandlers.push(handler);
}

export type ConnectionState = "connecting" | "connected" | "reconnecting" | "stopped";
/** For the UI: "reconnecting" shows a banner. */
export const connection = signal<ConnectionState>("connecting");

/** src/boot/boot.js sends the first /register with these parameters: change both. */
const CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: true,
  stream_typing_notifications: true,
  user_settings_object: true,
  empty_topic_name: false,
};

let queueId = "";
let lastEventId = -1;
let longPollSeconds = 90;
let stopped = false;
let pollController: AbortController | null = null;
let generation = 0;

/** Exported for tests and the benchmark: the current queue. */
export function queueState(): { queueId: string; lastEventId: number } {
  return { queueId, lastEventId };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** 1 s, 2 s, 4 s ... capped at 60 s, with jitter so that clients of a restarted server do not come back at once. */
function backoffMs(failures: number): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.min(failures - 1, 6));
  return base / 2 + Math.random() * (base / 2);
}

function dispatch(event: { id: number; type: string } & Record<string, unknown>): void {
  for (const type of [event.type, "*"]) {
    for (const handler of handlers.get(type) ?? []) {
      try {
        (handler as (e: unknown) => void)(event);
      } catch (error) {
        // One module's bug must not stop the others' updates or the poll loop.
        console.error(`event handler for ${event.type} failed`, error);
      }
    }
  }
}

async function registerOnce(): Promise<RegisterState> {
  return (await api.post("/register", {
    apply_markdown: true,
    client_gravatar: false,
    slim_presence: true,
    include_subscribers: false,
    client_capabilities: CAPABILITIES,
  })) as RegisterState;
}

async function applyRegister(state: RegisterState, reconnect: boolean): Promise<void> {
  // A signed-in registration always has a queue (only a spectator's has none).
  if (state.queue_id === null || state.last_event_id === undefined) throw new Error("registered without an event queue");
  queueId = state.queue_id;
  lastEventId = state.last_event_id;
  longPollSeconds = state.event_queue_longpoll_timeout_seconds ?? 90;
  const pending: Promise<void>[] = [];
  batch(() => {
    for (const handler of registerHandlers) {
      try {
        const result = handler(state, reconnect);
        if (result) pending.push(result.catch((error: unknown) => console.error("register handler failed", error)));
      } catch (error) {
        console.error("register handler failed", error);
      }
    }
  });
  await Promise.all(pending);
}

/** Registers until it succeeds (backing off), then applies the state. */
async function registerWithRetry(reconnect: boolean): Promise<void> {
  for (let failures = 1; !stopped; failures++) {
    try {
      const state = await registerOnce();
      await applyRegister(state, reconnect);
      return;
    } catch (error) {
      if (error instanceof SessionEndedError) return sessionEnded();
      connection.value = "reconnecting";
      await sleep(backoffMs(failures));
    }
  }
}

function sessionEnded(): void {
  stopped = true;
  connection.value = "stopped";
  goToLogin();
}

async function reRegister(): Promise<void> {
  connection.value = "reconnecting";
  pollController?.abort();
  await registerWithRetry(true);
  if (!stopped) connection.value = "connected";
}

async function pollLoop(myGeneration: number): Promise<void> {
  let failures = 0;
  while (!stopped && myGeneration === generation) {
    const controller = new AbortController();
    pollController = controller;
    // The server answers within its long-poll timeout (with a heartbeat at worst); no answer well
    // after it means a dead connection (a laptop's sleep, a proxy), so give up and poll again.
    const watchdog = setTimeout(() => controller.abort(), (longPollSeconds + 20) * 1000);
    try {
      const answer = await api.get("/events", { queue_id: queueId, last_event_id: lastEventId }, { signal: controller.signal });
      failures = 0;
      if (connection.value !== "connected") connection.value = "connected";
      const events = answer.events as Array<{ id: number; type: string } & Record<string, unknown>>;
      let restart = false;
      batch(() => {
        for (const event of events) {
          // An event we already have (a retried poll whose first answer was lost) is skipped.
          if (event.id <= lastEventId) continue;
          lastEventId = event.id;
          if (event.type === "restart") restart = true;
          dispatch(event);
        }
      });
      if (restart) {
        // The server restarted: its queues may be gone. Come back at a random moment so that every
        // client does not register in the same second.
        await sleep(Math.random() * 3000);
        await reRegister();
      }
    } catch (error) {
      if (stopped || myGeneration !== generation) return;
      if (error instanceof SessionEndedError) return sessionEnded();
      if (error instanceof ApiError && error.code === "BAD_EVENT_QUEUE_ID") {
        await reRegister();
        failures = 0;
        continue;
      }
      const aborted = error instanceof DOMException && error.name === "AbortError";
      if (aborted && controller.signal.aborted && !stopped) {
        // Our own watchdog: poll again at once.
        continue;
      }
      failures++;
      connection.value = "reconnecting";
      const retryAfter = error instanceof ApiError && typeof error.body["retry-after"] === "number" ? error.body["retry-after"] * 1000 : 0;
      await sleep(Math.max(retryAfter, backoffMs(failures)));
    } finally {
      clearTimeout(watchdog);
    }
  }
}

/** Registers (resolving once the state is filled), then polls in the background until stopEvents. */
export async function startEvents(): Promise<void> {
  stopped = false;
  connection.value = "connecting";
  await registerWithRetry(false);
  if (stopped) return;
  connection.value = "connected";
  const myGeneration = ++generation;
  void pollLoop(myGeneration);
}

export function stopEvents(): void {
  stopped = true;
  generation++;
  pollController?.abort();
  connection.value = "stopped";
}

// A laptop waking up: its poll may hang on a dead socket until the watchdog; poll again now.
if (typeof document !== "undefined") {
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && connection.value === "reconnecting") pollController?.abort();
  });
  window.addEventListener("online", () => pollController?.abort());
}

/** For unit tests of the state modules: apply a /register answer or an event without a server. */
export const testing = { applyRegister, dispatch };
