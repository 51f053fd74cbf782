import { Router } from "express";
import {
  accessBotById,
  accessStreamById,
  findStreamWithSubscription,
  accessStreamForAdministration,
  hasContentAccessViaGroups,
  privateStreamIdsViaGroups,
  canCreatePrivateStreams,
  canCreatePublicStreams,
  formatStreams,
  MAX_ANONYMOUS_GROUP_MEMBERS,
  MAX_ANONYMOUS_GROUP_SUBGROUPS,
  parseGroupSettingChange,
  parseGroupSettingValue,
  STREAM_GROUP_SETTING_NAMES,
  type GroupSettingChange,
  type StreamGroupSettingName,
  accessStreamByIdAsMember,
  accessStreamForContent,
  addDefaultStream,
  badRequest,
  archivedStreams,
  archiveStream,
  canSeeStream,
  checkCanCreateWebPublicStreams,
  getStreamByName,
  isAdmin,
  isGuest,
  isSubscribed,
  occupiedStreams,
  topicForClient,
  removeDefaultStream,
  renderMarkdown,
  updateStream,
  parseStreamRetentionDays,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const renderDescription = (text: string) => (text === "" ? "" : renderMarkdown(text).html);

/** A group-setting value as clients send it (feature level 309): a group's id, or an anonymous group's members and subgroups. */
const GROUP_SETTING_VALUE_SCHEMA = {
  anyOf: [
    { type: "integer", minimum: 0 },
    {
      type: "object",
      required: ["direct_members", "direct_subgroups"],
      additionalProperties: false,
      properties: {
        direct_members: { type: "array", maxItems: MAX_ANONYMOUS_GROUP_MEMBERS, items: { type: "integer", minimum: 0 } },
        direct_subgroups: { type: "array", maxItems: MAX_ANONYMOUS_GROUP_SUBGROUPS, items: { type: "integer", minimum: 0 } },
      },
    },
  ],
};
const GROUP_SETTING_BOUNDS = { maxItems: MAX_ANONYMOUS_GROUP_MEMBERS };

/** A channel setting as POST /users/me/subscriptions takes it for the channels it creates. */
export const streamGroupSettingParam = (description: string) =>
  params.json<unknown>(GROUP_SETTING_VALUE_SCHEMA, GROUP_SETTING_BOUNDS).optional().describe(description);

/**
 * A channel setting as PATCH /streams/{id} takes it: `{"new": value, "old": value}` (`old`
 * optional; a stale one is EXPECTATION_MISMATCH), or, as clients before Zulip 10.0 sent
 * can_remove_subscribers_group, a bare group id.
 */
const streamGroupSettingChangeParam = (description: string) =>
  params
    .json<unknown>(
      {
        anyOf: [
          { type: "integer", minimum: 0 },
          { type: "object", required: ["new"], additionalProperties: false, properties: { new: GROUP_SETTING_VALUE_SCHEMA, old: GROUP_SETTING_VALUE_SCHEMA } },
        ],
      },
      GROUP_SETTING_BOUNDS,
    )
    .optional()
    .describe(description);

const STREAM_SETTING_DESCRIPTIONS: Record<StreamGroupSettingName, string> = {
  can_add_subscribers_group: "Who may subscribe anyone to the channel (feature level 342).",
  can_administer_channel_group: "Who may administer the channel (feature level 325).",
  can_remove_subscribers_group: "Who may unsubscribe others (feature levels 142, 197; any group since 320).",
  can_send_message_group: "Who may post (feature level 333; replaces `stream_post_policy`).",
  can_subscribe_group: "Who may subscribe themselves to the private channel (feature level 357).",
};

/** The settings a POST /users/me/subscriptions or a PATCH /streams/{id} request carries, parsed. */
export function streamGroupSettingParams(make: (description: string) => ReturnType<typeof streamGroupSettingParam>) {
  return Object.fromEntries(STREAM_GROUP_SETTING_NAMES.map((name) => [name, make(STREAM_SETTING_DESCRIPTIONS[name])])) as Record<StreamGroupSettingName, ReturnType<typeof streamGroupSettingParam>>;
}

function groupSettingChanges(p: Partial<Record<StreamGroupSettingName, unknown>>): Partial<Record<StreamGroupSettingName, GroupSettingChange>> {
  const changes: Partial<Record<StreamGroupSettingName, GroupSettingChange>> = {};
  for (const name of STREAM_GROUP_SETTING_NAMES) {
    const raw = p[name];
    if (raw === undefined) continue;
    changes[name] = typeof raw === "number" ? { new: parseGroupSettingValue(raw, name) } : parseGroupSettingChange(raw, name);
  }
  return changes;
}

export const streamEndpoints = {
  getId: endpoint({
    method: "get",
    path: "/get_stream_id",
    tag: "streams",
    auth: "basic",
    summary: "A stream's id, by name",
    params: { stream: params.string() },
    response: successBody({ stream_id: schema.integer() }),
  }),
  list: endpoint({
    method: "get",
    path: "/streams",
    tag: "streams",
    auth: "basic",
    summary: "The streams the user can see, chosen by the flags",
    params: {
      include_public: params.bool().default(true),
      include_web_public: params.bool().default(false),
      include_subscribed: params.bool().default(true),
      include_all: params.bool().optional().describe("Every stream the user can see (feature level 356; administrators: private ones too)."),
      include_all_active: params.bool().optional().describe("Deprecated name of `include_all` (feature level 356)."),
      include_can_access_content: params.bool().default(false).describe("Every stream whose messages the user can read (feature level 356)."),
      exclude_archived: params.bool().default(true).describe("Leave out archived streams (feature level 315)."),
      include_default: params.bool().default(false),
      include_owner_subscribed: params.bool().default(false),
    },
    response: successBody({ streams: schema.array(schema.ref("Stream")) }),
  }),
  // Zulip's get_stream_backend (feature level 132).
  get: endpoint({
    method: "get",
    path: "/streams/{stream_id}",
    tag: "streams",
    auth: "basic",
    summary: "A stream the user can see",
    params: {},
    response: successBody({ stream: schema.ref("Stream") }),
  }),
  // Zulip's get_stream_email_address (feature level 226). This server has no incoming email
  // gateway, so, as Zulip without EMAIL_GATEWAY_PATTERN, the address is empty.
  emailAddress: endpoint({
    method: "get",
    path: "/streams/{stream_id}/email_address",
    tag: "streams",
    auth: "basic",
    summary: "The address that posts to a stream by email (empty: no email gateway)",
    params: {
      sender_id: params
        .int()
        .optional()
        .describe("Who should appear as the sender of what the address posts (feature level 335): the user, or a bot they may manage; by default the email gateway."),
    },
    response: successBody({ email: schema.string() }),
  }),
  update: endpoint({
    method: "patch",
    path: "/streams/{stream_id}",
    tag: "streams",
    auth: "basic",
    summary: "Change a stream (administrators)",
    params: {
      description: params.jsonOrPlainString().optional(),
      new_name: params.jsonOrPlainString().optional(),
      is_private: params.bool().optional(),
      is_web_public: params.bool().optional().describe("Readable by people who are not logged in (feature level 98; organization owners)."),
      is_announcement_only: params.bool().optional().describe("Deprecated (3.x): `stream_post_policy` 2 (true) or 1 (false)."),
      stream_post_policy: params.int().optional().describe("Deprecated (removed in Zulip 10.0): sets `can_send_message_group` to the system group the policy means."),
      history_public_to_subscribers: params.bool().optional(),
      ...streamGroupSettingParams(streamGroupSettingChangeParam),
      is_default_stream: params.bool().optional().describe("Make it a default stream for new users, or stop (feature level 200); a private stream cannot be one."),
      message_retention_days: params.jsonOrPlainString().maxLength(40).optional().describe("`realm_default`, `unlimited`, or days (feature levels 17, 91; owners)."),
    },
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL", "EXPECTATION_MISMATCH"],
  }),
  deactivate: endpoint({ method: "delete", path: "/streams/{stream_id}", tag: "streams", auth: "basic", summary: "Archive a stream (administrators; feature level 315)", params: {}, response: EMPTY_SUCCESS, errors: ["UNAUTHORIZED_PRINCIPAL"] }),
  topics: endpoint({
    method: "get",
    path: "/users/me/{stream_id}/topics",
    tag: "streams",
    auth: "basic-or-spectator",
    summary: "A stream's topics the user can read, newest first",
    params: {
      allow_empty_topic_name: params.bool().default(false).describe("Whether the empty topic is named `\"\"`; else `realm_empty_topic_display_name` (feature level 334)."),
    },
    response: successBody({ topics: schema.array(schema.ref("Topic")) }),
  }),
};

export function streamRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = streamEndpoints;

  serve(
    router,
    E.getId,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { stream: name } = parseParams(req, E.getId.params);
      const stream = await getStreamByName(prisma, actor.realm_id, name);
      if (!stream || !canSeeStream(actor, stream, await isSubscribed(prisma, actor.id, stream))) throw badRequest(`Invalid stream name '${name}'`);
      success(res, { stream_id: stream.id });
    }),
  );

  serve(
    router,
    E.list,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.list.params);
      // Feature level 356: include_all, for everyone, is what include_all_active was for administrators.
      const includeAll = p.include_all ?? p.include_all_active ?? false;
      const streams = [...(await occupiedStreams(prisma, actor.realm_id)), ...(p.exclude_archived ? [] : await archivedStreams(prisma, actor.realm_id))];
      const subscribedTo = async (userId: number) =>
        new Set((await prisma.subscription.findMany({ where: { user_id: userId, active: true }, select: { recipient_id: true } })).map((s) => s.recipient_id));
      const mine = await subscribedTo(actor.id);
      const owners = p.include_owner_subscribed && actor.is_bot && actor.bot_owner_id ? await subscribedTo(actor.bot_owner_id) : new Set<number>();
      const defaults = p.include_default ? new Set((await prisma.defaultStream.findMany({ where: { realm_id: actor.realm_id } })).map((d) => d.stream_id)) : new Set<number>();
      // Private streams the user's groups let them see or read (feature levels 349, 354).
      const viaGroups = includeAll || p.include_can_access_content ? await privateStreamIdsViaGroups(prisma, actor) : { metadata: new Set<number>(), content: new Set<number>() };
      const chosen = streams.filter((stream) => {
        const subscribed = mine.has(stream.recipient_id!);
        // Every stream whose metadata the user may see (administrators: private ones too).
        if (includeAll && (canSeeStream(actor, stream, subscribed) || viaGroups.metadata.has(stream.id))) return true;
        // Content access: web-public, subscribed, public to a non-guest, or through the stream's groups.
        if (p.include_can_access_content && (stream.is_web_public || subscribed || (!stream.invite_only && !isGuest(actor)) || viaGroups.content.has(stream.id))) return true;
        if (p.include_public && !stream.invite_only && !isGuest(actor)) return true;
        if (p.include_web_public && stream.is_web_public) return true;
        if (p.include_subscribed && mine.has(stream.recipient_id!)) return true;
        if (owners.has(stream.recipient_id!)) return true;
        return defaults.has(stream.id);
      });
      chosen.sort((a, b) => a.name.localeCompare(b.name));
      success(res, { streams: await formatStreams(prisma, chosen) });
    }),
  );

  serve(
    router,
    E.get,
    route(async (req, res) => {
      // An archived stream too, with is_archived (feature level 315).
      const stream = await accessStreamByIdAsMember(prisma, actorOf(res), pathId(req, "stream_id"), { includeArchived: true });
      success(res, { stream: (await formatStreams(prisma, [stream]))[0] });
    }),
  );

  serve(
    router,
    E.emailAddress,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.emailAddress.params);
      await accessStreamForContent(prisma, actor, pathId(req, "stream_id"));
      // As Zulip's: the user themselves, or a bot they may manage (there is no email gateway bot here).
      if (p.sender_id !== undefined && p.sender_id !== actor.id) await accessBotById(prisma, actor, p.sender_id);
      success(res, { email: "" });
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const streamId = pathId(req, "stream_id");
      const p = parseParams(req, E.update.params);
      await actions.run(originOf(req, actor), async (tx, events) => {
        // An archived stream's settings may change too (its privacy: feature level 362). Organization
        // administrators and the channel's can_administer_channel_group (feature level 325).
        const { stream, access } = await accessStreamForAdministration(tx, actor, streamId, { includeArchived: true });
        // Zulip's update_stream_backend: privacy as the actor could create it.
        if (p.is_private !== undefined && !isAdmin(actor) && !(await (p.is_private ? canCreatePrivateStreams : canCreatePublicStreams)(tx, actor))) throw badRequest("Insufficient permission");
        const streamPostPolicy = p.stream_post_policy ?? (p.is_announcement_only === undefined ? undefined : p.is_announcement_only ? 2 : 1);
        // Only making a stream web-public is restricted (Zulip's update_stream_backend).
        if (p.is_web_public === true) await checkCanCreateWebPublicStreams(tx, actor, services.ctx);
        await updateStream(
          tx,
          events,
          services.ctx,
          stream,
          { description: p.description, newName: p.new_name, isPrivate: p.is_private, isWebPublic: p.is_web_public, streamPostPolicy, historyPublicToSubscribers: p.history_public_to_subscribers, groupSettings: groupSettingChanges(p), hasContentAccess: access.content, isDefaultStream: p.is_default_stream, messageRetentionDays: p.message_retention_days === undefined ? undefined : parseStreamRetentionDays(actor, p.message_retention_days) },
          renderDescription,
        );
        // After the permission change: a stream made public may then become a default one.
        if (p.is_default_stream === true) await addDefaultStream(tx, events, actor, stream.id);
        if (p.is_default_stream === false) await removeDefaultStream(tx, events, actor, stream.id);
      });
      success(res);
    }),
  );

  serve(
    router,
    E.deactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const streamId = pathId(req, "stream_id");
      await actions.run(originOf(req, actor), async (tx, events) => {
        // Organization administrators and the channel's can_administer_channel_group (feature level
        // 325); an archived stream is "already deactivated".
        const { stream } = await accessStreamForAdministration(tx, actor, streamId, { includeArchived: true });
        await archiveStream(tx, events, stream);
      });
      success(res);
    }),
  );

  serve(
    router,
    E.topics,
    route(async (req, res) => {
      const actor = actorOf(res);
      const streamId = pathId(req, "stream_id");
      const found = await findStreamWithSubscription(prisma, actor.realm_id, streamId, [actor.id]);
      // Those a private stream's groups let read it read it as its subscribers do (feature level 354).
      const subscribed = found !== null && (found.subscribed || (found.stream.invite_only && (await hasContentAccessViaGroups(prisma, actor, found.stream.id))));
      if (!found || !canSeeStream(actor, found.stream, subscribed)) throw badRequest("Invalid stream id");
      const { stream } = found;
      // Topics of the history the user can read: all of it for a public stream (or a private one
      // with shared history, to its subscribers), otherwise only messages the user received.
      const fullHistory = subscribed ? stream.history_public_to_subscribers : !stream.invite_only && (!isGuest(actor) || stream.is_web_public);
      const topics = fullHistory
        ? await prisma.$queryRaw<{ name: string; max_id: number }[]>`
            SELECT DISTINCT ON (upper(subject)) subject AS name, id AS max_id
            FROM message WHERE recipient_id = ${stream.recipient_id} ORDER BY upper(subject), id DESC`
        : await prisma.$queryRaw<{ name: string; max_id: number }[]>`
            SELECT DISTINCT ON (upper(m.subject)) m.subject AS name, m.id AS max_id
            FROM message m JOIN user_message um ON um.message_id = m.id AND um.user_id = ${actor.id}
            WHERE m.recipient_id = ${stream.recipient_id} ORDER BY upper(m.subject), m.id DESC`;
      topics.sort((a, b) => b.max_id - a.max_id);
      const { allow_empty_topic_name: allowEmpty } = parseParams(req, E.topics.params);
      success(res, { topics: topics.map((topic) => ({ ...topic, name: topicForClient(topic.name, allowEmpty) })) });
    }),
  );
  return router;
}
