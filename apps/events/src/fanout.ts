// The consumer side of the change stream: each committed batch of events is shaped for and
// written into every queue that should see it. Appends are idempotent per batch id, so a batch
// redelivered after a crash (or published twice by the outbox sweeper) adds nothing twice.
import {
  forEachEventRecipient,
  isAfterPosition,
  type ChangeBatch,
  type ChangeBatchesHandler,
  type EventPayload,
  type QueueAppend,
  type QueueTarget,
  type QueueStore,
  type StreamPosition,
} from "@chat/bus";
import { DEACTIVATED_GROUP_EVENT_KEY, defaultStreamGroupsWithIds, defaultStreamIdsOf, END_QUEUES_EVENT, eventWithEmptyTopicShown, finalizeMessage, INACCESSIBLE_USER_KEY, INHERITED_NOTIFICATION_SETTINGS_KEY, LEGACY_SETTING_EVENT_KEY, modernRealmEvent, normalizedColor, resolveLegacyShape, resolveNullNotificationSettings, type WireMessage } from "@chat/core";
import { httpLogging, logger } from "@chat/logger";
import { fanoutBatches, fanoutLag } from "@chat/metrics";
import { queueSettings, type QueueSettings } from "./queue-settings.ts";

function wantsType(settings: QueueSettings, type: string): boolean {
  return settings.eventTypes === null || settings.eventTypes.includes(type);
}

/** A narrowed queue gets only the messages its narrow matches (Zulip's build_narrow_filter). */
function matchesNarrow(settings: QueueSettings, message: WireMessage, flags: string[]): boolean {
  return settings.narrow.every(([operator, operand]) => {
    switch (operator) {
      case "stream":
        return message.type === "stream" && (message.display_recipient as string).toLowerCase() === operand.toLowerCase();
      case "topic":
        return message.type === "stream" && message.subject.toLowerCase() === operand.toLowerCase();
      case "sender":
        return message.sender_email.toLowerCase() === operand.toLowerCase();
      case "is":
        switch (operand) {
          case "private":
            return message.type === "private";
          case "starred":
            return flags.includes("starred");
          case "unread":
            return !flags.includes("read");
          default: // mentioned, alerted: Zulip 3.x matches both on the mention flag
            return flags.includes("mentioned");
        }
      default:
        // Queues are created only with operators parseEventsNarrow accepts.
        return false;
    }
  });
}

/**
 * The deprecated notification fields Zulip's message events carry. This server sends no email or
 * push notifications, so those say false; a wildcard mention notifies while unread.
 */
function deprecatedNotificationFields(flags: string[]) {
  return {
    email_notified: false,
    push_notified: false,
    stream_push_notify: false,
    stream_email_notify: false,
    wildcard_mention_notify: flags.includes("wildcard_mentioned") && !flags.includes("read"),
  };
}

/** A sent message's local echo: the sender's queue (from POST /messages) and the id its client gave. */
function localEchoOf(event: EventPayload): { queueId: string; senderId: number; localId: string } | null {
  if (event.type !== "message") return null;
  const { sender_queue_id, local_id, sender_id } = event.message as WireMessage;
  return sender_queue_id === undefined || local_id === undefined ? null : { queueId: sender_queue_id, senderId: sender_id, localId: local_id };
}

/** A one-to-one direct message: its sender, and the recipient_id its receiver sees. */
function incomingRecipientOf(event: EventPayload): { senderId: number; recipientId: number } | null {
  if (event.type !== "message") return null;
  const { sender_recipient_id, sender_id } = event.message as WireMessage;
  return sender_recipient_id === undefined ? null : { senderId: sender_id, recipientId: sender_recipient_id };
}

/** `stream create`/`occupy` and `subscription add` without archived streams; null when none is left. */
function withoutArchivedStreams(event: EventPayload): EventPayload | null {
  const key = event.type === "stream" && (event.op === "create" || event.op === "occupy") ? "streams" : event.type === "subscription" && event.op === "add" ? "subscriptions" : null;
  if (key === null) return event;
  const items = event[key] as Array<{ is_archived?: boolean }>;
  if (!items.some((item) => item.is_archived === true)) return event;
  const kept = items.filter((item) => item.is_archived !== true);
  return kept.length === 0 ? null : ({ ...event, [key]: kept } as EventPayload);
}

/** One event as one queue's client should see it, or null if that client should not get it. */
export function shapeEvent(recorded: EventPayload, settings: QueueSettings, flags: string[] | null): EventPayload | null {
  if (!wantsType(settings, recorded.type)) return null;
  // A new user's "Unknown user" placeholder, for guests who may not know of them: none for clients
  // that expect an incomplete user list (Zulip's process_realm_user_add_event).
  if (INACCESSIBLE_USER_KEY in recorded) {
    if (settings.userListIncomplete === true) return null;
    const { [INACCESSIBLE_USER_KEY]: _marker, ...placeholder } = recorded;
    recorded = placeholder as EventPayload;
  }
  // Deactivated groups (feature level 294): a group's deactivation is `remove`, and nothing more
  // about it, for clients without include_deactivated_groups.
  if (recorded.type === "user_group") {
    const { [DEACTIVATED_GROUP_EVENT_KEY]: aboutDeactivated, ...groupEvent } = recorded;
    const deactivation = groupEvent.op === "update" && (groupEvent.data as Record<string, unknown> | undefined)?.deactivated === true;
    if (settings.includeDeactivatedGroups !== true) {
      if (deactivation) return { type: "user_group", op: "remove", group_id: groupEvent.group_id };
      if (aboutDeactivated === true) return null;
    }
    recorded = groupEvent as EventPayload;
  }
  // Archived streams (feature level 315) only for clients with archived_channels, as their
  // /register: a subscription to one, or one coming into sight, is nothing to the others.
  if (settings.archivedChannels !== true) {
    const shown = withoutArchivedStreams(recorded);
    if (shown === null) return null;
    recorded = shown;
  }
  // Queues stored before modernClient existed have none: they get 3.x's shapes.
  const resolved = resolveLegacyShape(recorded, settings.modernClient === true);
  // Without empty_topic_name, the empty topic by its display name (feature level 334).
  const event = settings.emptyTopicName === true ? resolved : eventWithEmptyTopicShown(resolved);
  if (event.type === "message") {
    const message = event.message as WireMessage;
    if (!matchesNarrow(settings, message, flags ?? [])) return null;
    const messageFlags = flags ?? [];
    return {
      type: "message",
      message: finalizeMessage(message, { applyMarkdown: settings.applyMarkdown, clientGravatar: settings.clientGravatar }),
      flags: messageFlags,
      ...deprecatedNotificationFields(messageFlags),
    };
  }
  if (event.type === "update_message" && flags !== null) {
    // The recipient's own flags on the edited message, as Zulip's update_message events carry.
    return { ...event, flags };
  }
  if (INHERITED_NOTIFICATION_SETTINGS_KEY in event) {
    const { [INHERITED_NOTIFICATION_SETTINGS_KEY]: inherited, ...rest } = event;
    if (settings.notificationSettingsNull || rest.type !== "subscription") return rest as EventPayload;
    const subscriptions = (rest.subscriptions as Array<Record<string, unknown>>).map((sub) => resolveNullNotificationSettings(sub, inherited as Record<string, boolean>));
    return { ...rest, subscriptions } as EventPayload;
  }
  if (event.type === "typing") {
    // A stream's typing only to clients that declared stream_typing_notifications; direct
    // typing says `message_type: "direct"` to today's clients (feature level 215), and to 3.x
    // clients comes without it, as Zulip 3.x sent it.
    if (event.message_type === "stream") return settings.streamTypingNotifications === true ? event : null;
    if (settings.modernClient !== true) {
      const { message_type: _type, ...legacy } = event;
      return legacy as EventPayload;
    }
    return event;
  }
  // Linkifiers as templates only for clients with linkifier_url_template, as 3.x's tuples only for
  // the others (feature level 176); each gets the other list empty, as its /register state.
  if (event.type === "realm_linkifiers" && settings.linkifierUrlTemplate !== true) return { ...event, realm_linkifiers: [] };
  if (event.type === "realm_filters" && settings.linkifierUrlTemplate === true) return { ...event, realm_filters: [] };
  // No organization-wide email_address_visibility since feature level 163 (each user's own: the
  // user_settings events of the change reach today's clients); 3.x clients still follow it.
  if (settings.modernClient === true && event.type === "realm" && event.property === "email_address_visibility") return null;
  if (settings.modernClient === true && event.type === "realm") return modernRealmEvent(event);
  if (settings.modernClient === true && event.type === "subscription" && event.property === "color" && typeof event.value === "string") {
    return { ...event, value: normalizedColor(event.value) };
  }
  // Default channels as ids for today's clients (feature level 330); 3.x-era clients read whole streams.
  if (settings.modernClient === true && event.type === "default_streams") return { ...event, default_streams: defaultStreamIdsOf(event.default_streams) };
  if (settings.modernClient === true && event.type === "default_stream_groups") return { ...event, default_stream_groups: defaultStreamGroupsWithIds(event.default_stream_groups) };
  if (event.type === "presence" && (settings.slimPresence || settings.modernClient === true)) {
    // slim_presence clients key presence by user id; the deprecated email is left out.
    const { email: _email, ...slim } = event;
    const shown = settings.slimPresence ? slim : event;
    // Today's clients get no client names (feature level 178): the report is `website`'s.
    if (settings.modernClient !== true) return shown as EventPayload;
    const report = Object.values(event.presence as Record<string, { status: string; timestamp: number }>)[0];
    return { ...shown, presence: { website: { client: "website", status: report.status, timestamp: report.timestamp, pushable: false } } } as EventPayload;
  }
  return event;
}

/**
 * Clients without bulk_message_deletion get one delete_message event per message; 3.x clients one
 * peer_add or peer_remove per stream and user (`stream_id`, `user_id`), where today's Zulip
 * (feature level 35) sends lists, as recorded.
 */
export function expandForClient(event: EventPayload, settings: QueueSettings): EventPayload[] {
  if (event.type === "delete_message" && !settings.bulkMessageDeletion && Array.isArray(event.message_ids)) {
    const { message_ids, ...rest } = event;
    return (message_ids as number[]).map((id) => ({ ...rest, message_id: id }) as EventPayload);
  }
  if (event.type === "subscription" && (event.op === "peer_add" || event.op === "peer_remove") && settings.modernClient !== true && Array.isArray(event.stream_ids)) {
    const { stream_ids, user_ids, ...rest } = event;
    return (stream_ids as number[]).flatMap((streamId) => (user_ids as number[]).map((userId) => ({ ...rest, stream_id: streamId, user_id: userId }) as EventPayload));
  }
  return [event];
}

/**
 * A settings change (actions/settings.ts): its `user_settings` event for the queues that want it,
 * after the 3.x event it carries for the queues without user_settings_object that want that one
 * (Zulip sends both; a 3.x client that follows every type reads the one it knows first).
 */
function personalSettingEvents(event: EventPayload, settings: QueueSettings): EventPayload[] {
  const { [LEGACY_SETTING_EVENT_KEY]: legacy, ...modern } = event;
  const events: EventPayload[] = [];
  const legacyEvent = legacy as EventPayload | undefined;
  if (legacyEvent !== undefined && settings.userSettingsObject !== true && wantsType(settings, legacyEvent.type)) events.push(legacyEvent);
  if (wantsType(settings, modern.type as string)) events.push(modern as EventPayload);
  return events;
}

/** Every event one queue gets for a recorded one. */
export function shapeEvents(event: EventPayload, settings: QueueSettings, flags: string[] | null): EventPayload[] {
  if (LEGACY_SETTING_EVENT_KEY in event) return personalSettingEvents(event, settings);
  const shaped = shapeEvent(event, settings, flags);
  return shaped ? expandForClient(shaped, settings) : [];
}

/** The users a batch reaches (or whose queues it ends), and whether it needs the realm's all_public_streams queues. */
function recipientsOf(batch: ChangeBatch, userIds: Set<number>): boolean {
  let needsPublicQueues = false;
  const addUser = (id: number) => userIds.add(id);
  for (const routed of batch.events) {
    forEachEventRecipient(routed.users, addUser);
    if (routed.allPublicStreams) needsPublicQueues = true;
  }
  return needsPublicQueues;
}

/**
 * One queue's append while a batch's appends are gathered. Its events are at first the shape's own
 * array, shared with every queue of that shape; a second event reaching the queue copies them.
 * When a message reaches a big stream each queue gets one event, and a list of its own per queue
 * was garbage made on every send.
 */
class GatheredAppend implements QueueAppend {
  private owned = false;

  constructor(
    readonly queueId: string,
    public events: EventPayload[],
  ) {}

  add(events: EventPayload[]): void {
    if (events.length === 0) return;
    if (!this.owned) {
      this.events = [...this.events];
      this.owned = true;
    }
    this.events.push(...events);
  }
}

/** An event's shapes for one kind of queue, by the flags array given and by its content. */
interface ShapesOfSettings {
  byArray: Map<string[] | null, EventPayload[]>;
  byContent: Map<string, EventPayload[]>;
}

/**
 * What a batch appends to each queue it reaches, given the queues of its realm's users, and the
 * queues it ends (END_QUEUES_EVENT): those get nothing after the event that ends them.
 */
function batchAppends(
  batch: ChangeBatch,
  position: StreamPosition,
  userQueues: QueueTarget[],
  publicQueues: QueueTarget[],
): { appends: QueueAppend[]; ended: QueueTarget[] } {
  // A queue created after this batch was published has its change in its /register state already.
  const current = (queue: QueueTarget) => isAfterPosition(position, queue.since);
  // Nearly every user has one queue: the first is kept alone, any others in a list of their own.
  const firstQueueOf = new Map<number, QueueTarget>();
  const otherQueuesOf = new Map<number, QueueTarget[]>();
  for (const queue of userQueues) {
    if (!current(queue)) continue;
    if (!firstQueueOf.has(queue.userId)) firstQueueOf.set(queue.userId, queue);
    else {
      const others = otherQueuesOf.get(queue.userId);
      if (others === undefined) otherQueuesOf.set(queue.userId, [queue]);
      else others.push(queue);
    }
  }

  const appends = new Map<string, GatheredAppend>();
  const ended: QueueTarget[] = [];
  const revoke = (userId: number, allPublicStreamsOnly: boolean) => {
    const first = firstQueueOf.get(userId);
    if (first === undefined) return;
    const own = [first, ...(otherQueuesOf.get(userId) ?? [])];
    const gone = own.filter((queue) => !allPublicStreamsOnly || queue.allPublicStreams);
    if (gone.length === 0) return;
    const goneIds = new Set(gone.map((queue) => queue.id));
    const left = own.filter((queue) => !goneIds.has(queue.id));
    firstQueueOf.delete(userId);
    otherQueuesOf.delete(userId);
    if (left.length > 0) firstQueueOf.set(userId, left[0]);
    if (left.length > 1) otherQueuesOf.set(userId, left.slice(1));
    publicQueues = publicQueues.filter((queue) => !goneIds.has(queue.id));
    for (const id of goneIds) appends.delete(id);
    ended.push(...gone);
  };
  for (const routed of batch.events) {
    if (routed.event.type === END_QUEUES_EVENT) {
      const allPublicStreamsOnly = routed.event.all_public_streams_only === true;
      forEachEventRecipient(routed.users, (id) => revoke(id, allPublicStreamsOnly));
      continue;
    }
    // Only a public stream's message also goes to all_public_streams queues, once per queue.
    const reached = routed.allPublicStreams && publicQueues.length > 0 ? new Set<string>() : null;
    // Most queues of a send ask for the same shape (the store gives queues with the same settings
    // one settings object) and their users share flags (often one array, for a group of users):
    // each shape is made once, and the store serializes each distinct event object once.
    const shapes = new Map<QueueSettings, ShapesOfSettings>();
    const shapeFor = (settings: QueueSettings, flags: string[] | null): EventPayload[] => {
      let ofSettings = shapes.get(settings);
      if (ofSettings === undefined) shapes.set(settings, (ofSettings = { byArray: new Map(), byContent: new Map() }));
      let events = ofSettings.byArray.get(flags);
      if (events === undefined) {
        const key = flags === null ? "" : `[${flags.join(",")}`;
        events = ofSettings.byContent.get(key);
        if (events === undefined) {
          ofSettings.byContent.set(key, (events = shapeEvents(routed.event, settings, flags)));
        }
        ofSettings.byArray.set(flags, events);
      }
      return events;
    };
    const echo = localEchoOf(routed.event);
    const incoming = incomingRecipientOf(routed.event);
    const add = (queue: QueueTarget, flags: string[] | null) => {
      reached?.add(queue.id);
      let events = shapeFor(queueSettings(queue), flags);
      // Only the sender's own queue: a queue id named by someone else echoes nothing.
      if (echo !== null && echo.queueId === queue.id && queue.userId === echo.senderId) {
        events = events.map((event) => (event.type === "message" ? { ...event, local_message_id: echo.localId } : event));
      }
      // A one-to-one message's receiver sees the recipient_id their reply would have (feature level 327).
      if (incoming !== null && queue.userId !== incoming.senderId) {
        events = events.map((event) => (event.type === "message" ? { ...event, message: { ...(event.message as object), recipient_id: incoming.recipientId } } : event));
      }
      const gathered = appends.get(queue.id);
      if (gathered !== undefined) gathered.add(events);
      else if (events.length > 0) appends.set(queue.id, new GatheredAppend(queue.id, events));
    };
    forEachEventRecipient(routed.users, (id, flags) => {
      const first = firstQueueOf.get(id);
      if (first === undefined) return;
      add(first, flags);
      const others = otherQueuesOf.get(id);
      if (others !== undefined) for (const queue of others) add(queue, flags);
    });
    if (reached !== null) {
      for (const queue of publicQueues) {
        if (reached.has(queue.id) || !current(queue)) continue;
        add(queue, []);
      }
    }
  }
  return { appends: [...appends.values()], ended };
}

/**
 * A read of batches at once (ChangeStream.consumeInOrder): one lookup of queues per realm for all
 * of them, and their appends issued one after another without waiting in between, which the store
 * applies in that order. Under a steady stream of sends a batch waited its turn in the event loop
 * three times (lookup, append, announcement), and those waits, not the work, bounded the rate.
 */
export function createReadFanout(queues: QueueStore): ChangeBatchesHandler {
  return async (items) => {
    const byRealm = new Map<number, { userIds: Set<number>; needsPublicQueues: boolean }>();
    for (const { batch } of items) {
      const realm = byRealm.get(batch.realmId) ?? { userIds: new Set<number>(), needsPublicQueues: false };
      if (recipientsOf(batch, realm.userIds)) realm.needsPublicQueues = true;
      byRealm.set(batch.realmId, realm);
    }
    const found = new Map<number, { userQueues: QueueTarget[]; publicQueues: QueueTarget[] }>();
    await Promise.all(
      [...byRealm].map(async ([realmId, { userIds, needsPublicQueues }]) => {
        const [userQueues, publicQueues] = await Promise.all([
          queues.queuesOfUsers(realmId, [...userIds]),
          needsPublicQueues ? queues.allPublicStreamsQueues(realmId) : Promise.resolve([] as QueueTarget[]),
        ]);
        found.set(realmId, { userQueues, publicQueues });
      }),
    );
    const appending: Promise<void>[] = [];
    const reached: number[] = [];
    for (const { batch, position } of items) {
      const { userQueues, publicQueues } = found.get(batch.realmId)!;
      const { appends: list, ended } = batchAppends(batch, position, userQueues, publicQueues);
      if (list.length > 0) appending.push(queues.append(batch.id, list));
      reached.push(list.length);
      if (ended.length > 0) {
        // The read's later batches must not reach them either; the store drops any append of this
        // read that arrives after the invalidation, and one before it goes with the queue.
        const gone = new Set(ended.map((q) => q.id));
        found.set(batch.realmId, { userQueues: userQueues.filter((q) => !gone.has(q.id)), publicQueues: publicQueues.filter((q) => !gone.has(q.id)) });
        appending.push(queues.invalidate(ended.map((q) => q.id)).then(() => undefined));
      }
    }
    await Promise.all(appending);
    recordFanout(items.map((item) => item.position));
    // Beside the request's own line (LOG_LEVEL=http), this follows a request to the queues it reached.
    if (httpLogging()) {
      items.forEach(({ batch, position }, i) =>
        logger.http("change delivered", { batchId: batch.id, realmId: batch.realmId, requestIds: batch.requestIds, queues: reached[i], position }),
      );
    }
  };
}

/** The read in the metrics: its batches, and how far behind the stream the newest was (Redis positions are `ms-seq`). */
function recordFanout(positions: StreamPosition[]): void {
  if (positions.length === 0) return;
  fanoutBatches.inc(positions.length);
  const newest = positions[positions.length - 1];
  const publishedMs = Number(newest.slice(0, newest.indexOf("-")));
  // The embedded stream's positions are `0-seq`: no time in them.
  if (publishedMs > 0) fanoutLag.set(Math.max(0, Date.now() - publishedMs) / 1000);
}
