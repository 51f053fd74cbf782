// The subscription endpoints' actions: POST/PATCH/DELETE /users/me/subscriptions, by stream name,
// for the caller or for `principals`, with Zulip's authorization rules and response shapes.
import type { StreamModel, Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { badRequest, StreamDoesNotExistError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { renderMarkdown } from "../lib/markdown.ts";
import { STREAM_POST_POLICIES } from "../lib/permissions.ts";
import { canAddSubscribers, canCreatePrivateStreams, canCreatePublicStreams, hasGroupSettingPermission, STREAM_PERMISSION_GROUP_SETTINGS } from "../lib/group-permissions.ts";
import type { GroupSettingValue } from "../lib/group-setting-values.ts";
import type { StreamGroupSettingName } from "../lib/stream-format.ts";
import { isAdmin, isGuest } from "../lib/roles.ts";
import { isHexColor } from "../lib/validation.ts";
import { checkCanCreateWebPublicStreams } from "../lib/web-public.ts";
import { canSeeStream, channelAccess, isSubscribed } from "../queries/streams.ts";
import { usersByEmail } from "../queries/users.ts";
import { sendNotification } from "./notification-bot.ts";
import { checkStreamName, createStream, getStreamByName, MAX_STREAM_DESCRIPTION_LENGTH } from "./streams.ts";
import { bulkAddSubscriptions, bulkRemoveSubscriptions } from "./subscriptions.ts";
import { addDefaultStream } from "./default-streams.ts";

export type Principal = string | number;

/**
 * Streams one request may name: each new stream is several statements in the request's
 * transaction (1,000 took over a minute on a busy machine). Zulip has no such limit.
 */
export const MAX_STREAMS_PER_REQUEST = 100;
/** Subscription rows one request may add or remove (principals × streams, checked before any lookup). */
export const MAX_SUBSCRIPTIONS_PER_REQUEST = 10_000;

function checkSubscriptionCount(users: number, streams: number): void {
  if (users * streams > MAX_SUBSCRIPTIONS_PER_REQUEST) throw badRequest(`Too many subscriptions in one request (limit: ${MAX_SUBSCRIPTIONS_PER_REQUEST})`);
}

/** Users named by `principals` (emails or ids), active and in the actor's realm: one query for the ids, one for the emails. */
export async function principalsToUsers(tx: Tx, actor: Actor, principals: Principal[]): Promise<UserProfile[]> {
  const ids = principals.filter((p): p is number => typeof p === "number");
  const emails = principals.filter((p): p is string => typeof p === "string");
  const rows =
    ids.length === 0 ? [] : await tx.$queryRaw<UserProfile[]>`SELECT * FROM user_profile WHERE realm_id = ${actor.realm_id} AND is_active AND id = ANY(${ids}::int[])`;
  const byId = new Map(rows.map((u) => [u.id, u]));
  // By the address the actor was shown (lib/email-visibility.ts), or a real one they may see.
  const byEmail = await usersByEmail(tx, actor, emails);
  const users: UserProfile[] = [];
  for (const principal of principals) {
    const user = typeof principal === "number" ? byId.get(principal) : byEmail.get(principal.trim().toLowerCase());
    // 400 "No such user" since feature level 208 (it was 403 UNAUTHORIZED_PRINCIPAL).
    if (!user || !user.is_active) throw badRequest("No such user");
    if (!users.some((u) => u.id === user.id)) users.push(user);
  }
  return users;
}

export interface SubscribeRequest {
  streams: Array<{ name: string; description?: string; color?: string }>;
  principals?: Principal[];
  inviteOnly: boolean;
  /** New streams are web-public (feature level 98). */
  isWebPublic?: boolean;
  /** Streams the request creates become default streams (feature level 200; administrators). */
  isDefaultStream?: boolean;
  /**
   * The permission settings of the streams it creates, as group-setting values (feature levels
   * 320 to 357); createStream gives Zulip's defaults for the rest.
   */
  groupSettings?: Partial<Record<StreamGroupSettingName, GroupSettingValue>>;
  /** The streams it creates keep messages this long (parseStreamRetentionDays; feature level 17). */
  messageRetentionDays?: number | null;
  historyPublicToSubscribers?: boolean;
  /** 3.x's policy for the streams it creates: shorthand for can_send_message_group's system group (unless that is given). */
  streamPostPolicy: number;
  authorizationErrorsFatal: boolean;
  announce: boolean;
  /**
   * How `subscribed`/`already_subscribed` name users: by id (feature level 289, the default) or,
   * for clients written before it, by email.
   */
  usersBy?: "id" | "email";
}

export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
}

function renderDescription(description: string): string {
  return description === "" ? "" : renderMarkdown(description).html;
}

/** POST /users/me/subscriptions (Zulip's add_subscriptions_backend). */
export async function subscribeByName(tx: Tx, events: EventRecorder, ctx: ServerContext, actor: Actor, request: SubscribeRequest): Promise<SubscribeResult> {
  if (!STREAM_POST_POLICIES.includes(request.streamPostPolicy)) throw badRequest("Invalid stream_post_policy");
  checkSubscriptionCount(request.principals?.length || 1, request.streams.length);
  const users = request.principals && request.principals.length > 0 ? await principalsToUsers(tx, actor, request.principals) : [actor as UserProfile];
  const subscribingOthers = users.some((u) => u.id !== actor.id);
  // Channel administrators (and organization administrators) of each stream, for subscribing others.
  const administers = new Map<number, boolean>();

  request.streams.forEach((item, i) => {
    if (item.color !== undefined && !isHexColor(item.color)) throw badRequest(`subscriptions[${i}]["color"] is not a valid hex color code`);
  });
  const existing: StreamModel[] = [];
  const created: StreamModel[] = [];
  const unauthorized: string[] = [];
  const seen = new Set<string>();
  // A color asked for a stream is the new subscriptions' color (Zulip's color_map).
  const colors = new Map<number, string>();
  for (const item of request.streams) {
    const name = checkStreamName(item.name);
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    // An archived stream's subscriptions may be changed as any other's (feature level 362).
    const stream = await getStreamByName(tx, actor.realm_id, name, { includeArchived: true });
    if (stream) {
      if (item.color !== undefined) colors.set(stream.id, item.color);
      // Zulip 10.0's filter_stream_authorization: a public stream is any non-guest's; a private one
      // takes being subscribed, or, to subscribe others, administering it or its
      // can_add_subscribers_group (feature levels 342, 349), or, to subscribe oneself, its
      // can_subscribe_group or can_add_subscribers_group (feature level 357). Guests only where
      // they are subscribed.
      const subscribed = await isSubscribed(tx, actor.id, stream);
      const access = await channelAccess(tx, actor, stream, subscribed);
      administers.set(stream.id, access.administer);
      let allowed: boolean;
      if (subscribed) allowed = true;
      else if (isGuest(actor)) allowed = false;
      else if (!stream.invite_only) allowed = true;
      else if (subscribingOthers) allowed = access.administer || access.addSubscribers;
      else allowed = access.subscribe || access.addSubscribers;
      if (!allowed || !canSeeStream(actor, stream, subscribed || access.metadata)) unauthorized.push(stream.name);
      else existing.push(stream);
      continue;
    }
    // Zulip 9.0's can_create_public_channel_group / can_create_private_channel_group.
    if (!(await (request.inviteOnly ? canCreatePrivateStreams : canCreatePublicStreams)(tx, actor))) throw badRequest("Insufficient permission");
    // Zulip's list_to_streams: asked of streams to be created only.
    if (request.isDefaultStream && !isAdmin(actor)) throw badRequest("Insufficient permission");
    if (request.isDefaultStream && request.inviteOnly) throw badRequest("A default channel cannot be private.");
    if (request.isWebPublic) await checkCanCreateWebPublicStreams(tx, actor, ctx);
    const description = (item.description ?? "").replace(/\s+/g, " ").trim();
    if (description.length > MAX_STREAM_DESCRIPTION_LENGTH) throw badRequest(`Stream description too long (limit: ${MAX_STREAM_DESCRIPTION_LENGTH} characters).`);
    const newStream = await createStream(tx, events, actor.realm_id, {
      name,
      description,
      renderedDescription: renderDescription(description),
      inviteOnly: request.inviteOnly,
      isWebPublic: request.isWebPublic,
      streamPostPolicy: request.streamPostPolicy,
      historyPublicToSubscribers: request.historyPublicToSubscribers,
      creatorId: actor.id,
      groupSettings: request.groupSettings,
      messageRetentionDays: request.messageRetentionDays,
    });
    if (item.color !== undefined) colors.set(newStream.id, item.color);
    created.push(newStream);
  }
  if (unauthorized.length > 0 && request.authorizationErrorsFatal) {
    throw badRequest(`Unable to access stream (${unauthorized[0]}).`);
  }
  // Zulip 10.0's get_streams_to_which_user_cannot_add_subscribers: the realm's
  // can_add_subscribers_group, or the stream's own, or administering it (feature levels 341, 342).
  if (subscribingOthers) {
    for (const stream of [...existing, ...created]) {
      const administer =
        administers.get(stream.id) ??
        (isAdmin(actor) || (await hasGroupSettingPermission(tx, actor, stream.can_administer_channel_group_id, STREAM_PERMISSION_GROUP_SETTINGS.can_administer_channel_group)));
      if (!administer && !(await canAddSubscribers(tx, actor, stream.can_add_subscribers_group_id))) throw badRequest("You can't subscribe other users to streams.");
    }
  }

  if (request.isDefaultStream) for (const stream of created) await addDefaultStream(tx, events, actor, stream.id);

  const streams = [...existing, ...created];
  const createdStreamIds = new Set(created.map((s) => s.id));
  const added = new Set((await bulkAddSubscriptions(tx, events, ctx, streams, users.map((u) => u.id), { createdStreamIds, colors, realm: actor.realm })).map((a) => `${a.streamId}:${a.userId}`));
  const result: SubscribeResult = { subscribed: {}, already_subscribed: {} };
  for (const user of users) {
    for (const stream of streams) {
      const key = added.has(`${stream.id}:${user.id}`) ? "subscribed" : "already_subscribed";
      (result[key][request.usersBy === "email" ? user.email : String(user.id)] ??= []).push(stream.name);
    }
  }
  if (!request.authorizationErrorsFatal) result.unauthorized = unauthorized;

  // Zulip's notices: others learn who subscribed them; a new public stream is announced.
  for (const user of users) {
    if (user.id === actor.id || user.is_bot) continue;
    const names = streams.filter((s) => added.has(`${s.id}:${user.id}`)).map((s) => `#**${s.name}**`);
    if (names.length === 0) continue;
    const what = names.length === 1 ? `the stream ${names[0]}` : `the following streams: ${names.join(", ")}`;
    await sendNotification(tx, events, ctx, actor.realm, { type: "private", to: [user.id] }, `Hi there! @_**${actor.full_name}|${actor.id}** just subscribed you to ${what}.`);
  }
  const announced = created.filter((s) => !s.invite_only);
  if (request.announce && announced.length > 0 && actor.realm.notifications_stream_id !== null) {
    const links = announced.map((s) => `#**${s.name}**`).join(", ");
    const noun = announced.length === 1 ? "a new stream" : "new streams";
    await sendNotification(
      tx,
      events,
      ctx,
      actor.realm,
      { type: "stream", stream: actor.realm.notifications_stream_id, topic: "new streams" },
      `@_**${actor.full_name}|${actor.id}** created ${noun} ${links}.`,
    );
  }
  return result;
}

/** DELETE /users/me/subscriptions (and PATCH `delete`): by stream name, for the caller or `principals`. */
export async function unsubscribeByName(tx: Tx, events: EventRecorder, actor: Actor, names: string[], principals?: Principal[]): Promise<{ removed: string[]; not_removed: string[] }> {
  checkSubscriptionCount(principals?.length || 1, names.length);
  const users = principals && principals.length > 0 ? await principalsToUsers(tx, actor, principals) : [actor as UserProfile];
  // Oneself and one's own bots are not "others" (Zulip's user_directly_controls_user, feature level 145).
  const removingOthers = users.some((u) => u.id !== actor.id && !(u.is_bot && u.bot_owner_id === actor.id));
  const streams: StreamModel[] = [];
  for (const raw of names) {
    const stream = await getStreamByName(tx, actor.realm_id, raw, { includeArchived: true });
    const subscribed = stream ? await isSubscribed(tx, actor.id, stream) : false;
    const access = stream ? await channelAccess(tx, actor, stream, subscribed) : null;
    if (!stream || !access || !canSeeStream(actor, stream, subscribed || access.metadata)) throw new StreamDoesNotExistError(raw.trim());
    // Zulip 10.0's bulk_can_remove_subscribers_from_streams: organization administrators, the
    // channel's administrators, or its can_remove_subscribers_group (any group since feature level
    // 320; channel administrators since 349).
    if (
      removingOthers &&
      !access.administer &&
      !(await hasGroupSettingPermission(tx, actor, stream.can_remove_subscribers_group_id, STREAM_PERMISSION_GROUP_SETTINGS.can_remove_subscribers_group))
    ) {
      throw badRequest("Insufficient permission");
    }
    if (!streams.some((s) => s.id === stream.id)) streams.push(stream);
  }
  const { removed, notRemoved } = await bulkRemoveSubscriptions(tx, events, streams, users.map((u) => u.id), actor.realm);
  const nameOf = (id: number) => streams.find((s) => s.id === id)!.name;
  return { removed: removed.map((r) => nameOf(r.streamId)), not_removed: notRemoved.map((r) => nameOf(r.streamId)) };
}
