import { Router } from "express";
import {
  applyEvents,
  BadEventQueueIdError,
  fetchInitialState,
  fetchSections,
  finishState,
  InvalidArgumentError,
  JsonableError,
  mayReceiveAllPublicStreams,
  ROLE_GUEST,
  parseEventsNarrow,
  realmUri,
  takeJsonTextSections,
  takeStaleSections,
  withLeanRawQueries,
  type RegisterOptions,
  defaultEventsNarrow,
  getRealmForSubdomain,
  spectatorRealm,
  spectatorState,
  zulipVersionFields,
} from "@chat/core";
import {
  actorOf,
  EMPTY_SUCCESS,
  endpoint,
  ignoredParametersOf,
  params,
  parseParams,
  requestProtocol,
  requestSubdomain,
  route,
  schema,
  serve,
  spectatorRoute,
  success,
  successBody,
  successJsonBytes,
} from "@chat/http";
import type { PollAuthenticator } from "./poll-auth.ts";
import type { QueueSettings } from "./queue-settings.ts";
import { apiVersionKey } from "./restart-events.ts";
import { requireUserKnownToNode } from "./trusted-user.ts";
import type { EventServices } from "./services.ts";
import { pollEvents, readEvents } from "./long-poll.ts";
import type { LongPollWaiters } from "./waiters.ts";

const STRING_LIST = { type: "array", items: { type: "string" } };
const NARROW = { type: "array", items: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 } };
const CAPABILITIES = { type: "object", additionalProperties: { type: "boolean" } };

/**
 * Zulip has some seventy event types: a longer list names nothing more, and the fan-out checks
 * every event against it for every queue (400,000 entries made each send take a second).
 */
const MAX_EVENT_TYPES = 100;
/** The event system filters by a handful of operators; a long narrow is only work. */
const MAX_EVENTS_NARROW_TERMS = 20;

/** Zulip's MAX_QUEUE_TIMEOUT_SECS: a client may keep its queue up to a week without polling. */
const MAX_QUEUE_LIFESPAN_SECS = 7 * 24 * 60 * 60;

/**
 * Capabilities Zulip added after 3.x (feature levels 13 to 491). Declaring any of them marks a
 * client written against today's API (RegisterOptions.modernClient); unknown ones are ignored.
 */
const MODERN_CAPABILITIES = [
  "user_avatar_url_field_optional",
  "stream_typing_notifications",
  "user_settings_object",
  "linkifier_url_template",
  "user_list_incomplete",
  "include_deactivated_groups",
  "archived_channels",
  "empty_topic_name",
  "simplified_presence_events",
  "individual_emoji_changes",
];

function capabilityOptions(capabilities: Record<string, boolean>) {
  const has = (name: string) => capabilities[name] === true;
  return {
    notificationSettingsNull: has("notification_settings_null"),
    bulkMessageDeletion: has("bulk_message_deletion"),
    userSettingsObject: has("user_settings_object"),
    streamTypingNotifications: has("stream_typing_notifications"),
    userAvatarUrlFieldOptional: has("user_avatar_url_field_optional"),
    includeDeactivatedGroups: has("include_deactivated_groups"),
    userListIncomplete: has("user_list_incomplete"),
    linkifierUrlTemplate: has("linkifier_url_template"),
    emptyTopicName: has("empty_topic_name"),
    archivedChannels: has("archived_channels"),
    modernClient: MODERN_CAPABILITIES.some(has),
  };
}

export const eventEndpoints = {
  register: endpoint({
    method: "post",
    path: "/register",
    tag: "real_time_events",
    auth: "basic-or-spectator",
    description: "Without credentials (a spectator of an organization that lets them in): no queue (`queue_id` null), the state of its web-public streams; `client_gravatar` and `include_subscribers` must be false (feature level 149).",
    summary: "Register an event queue, and the state the queue's events apply to",
    params: {
      apply_markdown: params.bool().default(false),
      client_gravatar: params.bool().default(false),
      slim_presence: params.bool().default(false),
      presence_last_update_id: params.int().optional().describe("Only the presences changed after this update id (feature level 263); implies `slim_presence`."),
      presence_history_limit_days: params.int().optional().describe("Only presences reported within this many days (feature level 288); 14 when not given, none for 0."),
      all_public_streams: params.bool().optional().describe("Unset, a bot's own default."),
      include_subscribers: params.bool().default(false),
      event_types: params.json<string[]>(STRING_LIST, { maxItems: MAX_EVENT_TYPES, maxStringLength: 100 }).optional().describe("The events the queue gets (all, unset)."),
      fetch_event_types: params.json<string[]>(STRING_LIST, { maxItems: MAX_EVENT_TYPES, maxStringLength: 100 }).optional().describe("The state sections to fetch (`event_types`', unset)."),
      narrow: params.json<Array<[string, string]>>(NARROW, { maxItems: MAX_EVENTS_NARROW_TERMS }).default([]),
      client_capabilities: params.json<Record<string, boolean>>(CAPABILITIES, { maxItems: 100, maxStringLength: 100 }).default({}),
      queue_lifespan_secs: params.int().default(0).describe("How long the queue lives unpolled (0: the server's default; at most a week)."),
    },
    response: schema.ref("RegisterResponse"),
    errors: ["BAD_NARROW"],
  }),
  poll: endpoint({
    method: "get",
    path: "/events",
    tag: "real_time_events",
    auth: "basic",
    summary: "The queue's events after `last_event_id`, waiting for one unless `dont_block`",
    params: {
      queue_id: params.string().maxLength(100),
      last_event_id: params.int().default(-1).describe("The last event the client has; it and those before are dropped."),
      dont_block: params.bool().default(false),
    },
    response: successBody({ events: schema.array(schema.ref("Event")), queue_id: schema.string() }),
    errors: ["BAD_EVENT_QUEUE_ID"],
  }),
  deleteQueue: endpoint({
    method: "delete",
    path: "/events",
    tag: "real_time_events",
    auth: "basic",
    summary: "Delete an event queue",
    params: { queue_id: params.string().maxLength(100) },
    response: EMPTY_SUCCESS,
    errors: ["BAD_EVENT_QUEUE_ID"],
  }),
};

/**
 * POST /register for a spectator (Zulip's events_register_backend without a user): no queue
 * (`queue_id` null, no `last_event_id`), and the state of the organization's web-public streams
 * as a new guest would see it, if the organization lets spectators in (else the usual 401).
 */
function spectatorRegister(services: EventServices, db: EventServices["prisma"]) {
  const { prisma, ctx } = services;
  return spectatorRoute(services, async (req, res) => {
    const realm = await spectatorRealm(prisma, await getRealmForSubdomain(prisma, requestSubdomain(req, ctx.externalHost)), ctx);
    const p = parseParams(req, eventEndpoints.register.params);
    // Feature level 149: these must be false for anonymous requests.
    if (p.client_gravatar) throw new JsonableError("Invalid 'client_gravatar' parameter for anonymous request");
    if (p.include_subscribers) throw new JsonableError("Invalid 'include_subscribers' parameter for anonymous request");
    const options: RegisterOptions = {
      eventTypes: p.fetch_event_types ?? p.event_types ?? null,
      applyMarkdown: p.apply_markdown,
      clientGravatar: false,
      slimPresence: p.slim_presence,
      allPublicStreams: false,
      includeSubscribers: false,
      narrow: [],
      ...capabilityOptions(p.client_capabilities),
      realmUri: realmUri(realm.string_id, ctx.externalHost, requestProtocol(req)),
      heartbeatSeconds: services.heartbeatMs / 1000,
    };
    const state = finishState(await spectatorState(db, realm, options, ctx));
    success(res, { queue_id: null, ...zulipVersionFields(), ...state });
  });
}

export function eventRoutes(services: EventServices, waiters: LongPollWaiters, auth: PollAuthenticator): Router {
  const router = Router();
  const { prisma, bus, ctx } = services;
  // /register's statements, raw ones on the driver (lean-reader.ts).
  const registerDb = withLeanRawQueries(prisma);
  const { queues, changes } = bus;
  // A spectator's registration (no credentials at all) comes first; every other request goes on to authentication.
  serve(router, eventEndpoints.register, spectatorRegister(services, registerDb));
  router.use(["/register", "/events"], requireUserKnownToNode(auth, { prisma, externalHost: ctx.externalHost, rateLimits: services.rateLimits }));

  serve(
    router,
    eventEndpoints.register,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, eventEndpoints.register.params);
      if (p.queue_lifespan_secs < 0) throw new InvalidArgumentError("Invalid queue_lifespan_secs", "queue_lifespan_secs");
      // Unset, a bot's own defaults apply (Zulip's _default_all_public_streams and _default_narrow).
      const allPublicStreams = p.all_public_streams ?? actor.default_all_public_streams;
      const narrow = p.narrow.length === 0 ? await defaultEventsNarrow(prisma, actor) : p.narrow;
      // Zulip's events_register_backend: a guest may not see streams they are not in.
      if (allPublicStreams && actor.role === ROLE_GUEST) throw new JsonableError("User not authorized for this query");
      const options: RegisterOptions = {
        eventTypes: p.event_types ?? null,
        applyMarkdown: p.apply_markdown,
        clientGravatar: p.client_gravatar,
        // Feature level 263's incremental presence is in the modern form only.
        slimPresence: p.slim_presence || p.presence_last_update_id !== undefined,
        presenceLastUpdateId: p.presence_last_update_id,
        presenceHistoryLimitDays: p.presence_history_limit_days,
        allPublicStreams,
        includeSubscribers: p.include_subscribers,
        narrow: parseEventsNarrow(narrow),
        ...capabilityOptions(p.client_capabilities),
        realmUri: realmUri(actor.realm.string_id, ctx.externalHost, requestProtocol(req)),
        heartbeatSeconds: services.heartbeatMs / 1000,
      };
      const settings: QueueSettings = {
        eventTypes: options.eventTypes,
        applyMarkdown: options.applyMarkdown,
        clientGravatar: options.clientGravatar,
        slimPresence: options.slimPresence,
        narrow: options.narrow,
        notificationSettingsNull: options.notificationSettingsNull,
        bulkMessageDeletion: options.bulkMessageDeletion,
        userSettingsObject: options.userSettingsObject,
        streamTypingNotifications: options.streamTypingNotifications,
        userAvatarUrlFieldOptional: options.userAvatarUrlFieldOptional,
        includeDeactivatedGroups: options.includeDeactivatedGroups,
        userListIncomplete: options.userListIncomplete,
        linkifierUrlTemplate: options.linkifierUrlTemplate,
        archivedChannels: options.archivedChannels,
        emptyTopicName: options.emptyTopicName,
        modernClient: options.modernClient,
        apiVersion: apiVersionKey(),
      };

      // Race-free as in Zulip: the queue exists before the state is read, and whatever reached it
      // meanwhile is applied to the state and acknowledged through last_event_id. Sections kept in an
      // internal form while events apply (raw_unread_msgs) take their client form last.
      // Batches published before the queue existed are in that state, and the fan-out skips them:
      // a change the client saw in its response does not reach it again as an event.
      const since = await changes.position(actor.realm_id);
      // queue_lifespan_secs 0 is the server's default idle time (EVENT_QUEUE_IDLE_SECONDS).
      const idleTimeoutMs = p.queue_lifespan_secs > 0 ? Math.min(p.queue_lifespan_secs, MAX_QUEUE_LIFESPAN_SECS) * 1000 : undefined;
      const queue = await queues.create({ userId: actor.id, realmId: actor.realm_id, allPublicStreams: options.allPublicStreams, settings: { ...settings }, since, idleTimeoutMs });
      // The check above read the request's copy of the user. A demotion that committed since, whose
      // batch the fan-out handled before this queue existed, would never end it (END_QUEUES_EVENT):
      // asked again now, any later demotion comes after the queue's position and the fan-out ends it.
      if (options.allPublicStreams && !(await mayReceiveAllPublicStreams(prisma, actor.id))) {
        await queues.delete(queue.id);
        throw new JsonableError("User not authorized for this query");
      }
      // fetch_event_types chooses the state; event_types, the events the queue gets (as Zulip).
      const fetchOptions = p.fetch_event_types ? { ...options, eventTypes: p.fetch_event_types } : options;
      // The node's copies read as of one moment for this registration (after its queue exists).
      const state = await fetchInitialState(registerDb, actor, fetchOptions, { ...ctx, realmState: ctx.realmState?.forRegistration?.() ?? ctx.realmState });
      const arrived = (await queues.read(queue.id, -1)) ?? [];
      applyEvents(state, arrived, actor.id, fetchOptions.eventTypes);
      const stale = takeStaleSections(state);
      if (stale.length > 0) Object.assign(state, await fetchSections(registerDb, actor, fetchOptions, ctx, stale));
      finishState(state);
      const lastEventId = arrived.length > 0 ? arrived[arrived.length - 1].id : -1;
      // The realm's users may be JSON text already (realm-state-cache.ts): spliced in as they are.
      const texts = takeJsonTextSections(state);
      res
        .type("json")
        .send(successJsonBytes({ queue_id: queue.id, last_event_id: lastEventId, ...zulipVersionFields(), ...state, ...ignoredParametersOf(req) }, texts));
    }),
  );

  async function ownedQueue(queueId: string, userId: number) {
    const queue = await queues.get(queueId);
    if (!queue || queue.userId !== userId) throw new BadEventQueueIdError(queueId);
    return queue;
  }

  serve(
    router,
    eventEndpoints.poll,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, eventEndpoints.poll.params);
      const poll = { queueId: p.queue_id, lastEventId: p.last_event_id, dontBlock: p.dont_block, userId: actor.id };
      const events = await pollEvents({ queues, waiters, heartbeatMs: services.heartbeatMs }, poll, res, readEvents);
      if (events === null) throw new BadEventQueueIdError(p.queue_id);
      if (events === "closed") return;
      if (waiters.draining) res.set("Connection", "close");
      success(res, { events, queue_id: p.queue_id });
    }),
  );

  serve(
    router,
    eventEndpoints.deleteQueue,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { queue_id } = parseParams(req, eventEndpoints.deleteQueue.params);
      await ownedQueue(queue_id, actor.id);
      await queues.delete(queue_id);
      success(res);
    }),
  );
  return router;
}
