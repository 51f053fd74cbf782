// Bots their owners manage (Zulip 3.x's add_bot_backend, patch_bot_backend, get_bots_backend,
// deactivate_bot_backend, regenerate_bot_api_key): generic, incoming webhook, outgoing webhook
// and embedded bots, each owned by the user who made it. The server's own bots (system-bots.ts)
// are no one's and stay out of all of this.
//
// Creating or changing a bot with an avatar writes the image files beside the transaction, as
// avatars.ts does: everything a client can get wrong is checked before a file is written, and
// the transaction checks it again (the database may have moved on meanwhile).
import { Prisma, type Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError, UserDeactivatedError } from "../errors.ts";
import { checkMemberOrAdmin } from "../lib/human-users.ts";
import type { Actor, UserProfile } from "../models.ts";
import {
  BOT_CREATION_LIMIT_GENERIC_BOTS,
  BOT_TYPE_EMBEDDED,
  BOT_TYPE_GENERIC,
  BOT_TYPE_INCOMING_WEBHOOK,
  BOT_TYPE_OUTGOING_WEBHOOK,
  CONFIG_BOT_TYPES,
  SERVICE_BOT_TYPES,
  SERVICE_INTERFACES,
} from "../lib/bots.ts";
import { avatarUrl } from "../lib/avatars.ts";
import { isEmbeddedBotName } from "../lib/embedded-bots.ts";
import { resizeAvatar } from "../lib/images.ts";
import { isAdmin, isGuest, ROLE_MEMBER } from "../lib/roles.ts";
import { generateApiKey } from "../lib/secrets.ts";
import type { FileActionServices } from "../lib/stored-files.ts";
import { checkFullName, isValidEmail } from "../lib/validation.ts";
import { botConfig, ownedBotDict } from "../queries/bots.ts";
import { findStreamWithSubscription } from "../queries/streams.ts";
import { getUserByDeliveryEmail } from "../queries/users.ts";
import { withAvatarFiles } from "./avatars.ts";
import { checkBotLimits, lockBotOwner, lockRealmBots, type BotLimits } from "./bot-limits.ts";
import { botDomain, isSystemBot } from "./system-bots.ts";
import { botAdministratorIds, changeAvatarSource, changeBotOwner, changeFullName } from "./user-changes.ts";
import { checkBotCreationPolicy, deactivateUser, insertUser, notifyCreatedUser, updateUser } from "./users.ts";

/** Bounds on a bot's configuration (bot_config_data): keys, and each key's and value's characters. */
export const MAX_BOT_CONFIG_KEYS = 100;
export const MAX_BOT_CONFIG_KEY_LENGTH = 100;
export const MAX_BOT_CONFIG_VALUE_LENGTH = 10_000;
/** An outgoing webhook's URL, in characters. */
export const MAX_PAYLOAD_URL_LENGTH = 2_000;

/** The transaction, or the client for checks made before one (PrismaClient is one too). */
type Db = Tx;

/**
 * Every /bots endpoint is for people who are members or administrators (Zulip's
 * require_member_or_admin): guests may not own bots, and a bot may neither own nor manage one, so
 * no bot is ever owned by a bot and deactivating a person leaves no bot of theirs running.
 */
export function checkMayManageBots(actor: Actor): void {
  checkMemberOrAdmin(actor);
}

/** The bot types there are (who may create which is checkBotCreationPolicy's: users.ts). */
export function allowedBotTypes(_actor: Actor): number[] {
  return [BOT_TYPE_GENERIC, BOT_TYPE_INCOMING_WEBHOOK, BOT_TYPE_OUTGOING_WEBHOOK, BOT_TYPE_EMBEDDED];
}

/**
 * Zulip's check_url for an outgoing webhook: an absolute http(s) URL with a host, and (as the
 * worker's client will call no other) no credentials in it. The parameter's own bound keeps it
 * within MAX_PAYLOAD_URL_LENGTH.
 */
export function isPayloadUrl(raw: string): boolean {
  if (!/^https?:\/\/[^\s/?#]/i.test(raw) || /\s/.test(raw)) return false;
  try {
    const url = new URL(raw);
    return url.hostname !== "" && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

// An address's local part as Django's EmailValidator takes it unquoted (its dot-atom): a short
// name with spaces, quotes or letters outside ASCII makes no address, so no look-alike one.
const DOT_ATOM = /^[-!#$%&'*+/=?^_`{|}~0-9A-Za-z]+(\.[-!#$%&'*+/=?^_`{|}~0-9A-Za-z]+)*$/;

function isValidBotEmail(email: string): boolean {
  const at = email.lastIndexOf("@");
  // Django's validator (Zulip's) also takes `localhost`, the domain of the default EXTERNAL_HOST.
  const domainOk = isValidEmail(email) || (email.slice(at + 1) === "localhost" && email.length <= 254);
  return domainOk && DOT_ATOM.test(email.slice(0, at));
}

/**
 * Zulip's check_bot_name_available: no active user of the realm has the name already. Not a
 * guarantee (reactivating a bot can make two), just a guard against doing it by accident.
 */
async function checkBotNameAvailable(db: Db, realmId: number, fullName: string): Promise<void> {
  const taken = await db.userProfile.findFirst({ where: { realm_id: realmId, full_name: fullName, is_active: true }, select: { id: true } });
  if (taken) throw badRequest("Name is already in use!");
}

/**
 * A stream a bot may use by default (Zulip's access_stream_by_name): a public stream, or a
 * private one the actor is subscribed to.
 */
async function accessBotStream(db: Db, actor: Actor, name: string): Promise<number> {
  const found = await findStreamWithSubscription(db, actor.realm_id, name, [actor.id]);
  if (!found || (found.stream.invite_only && !found.subscribed) || (isGuest(actor) && !found.subscribed)) {
    throw badRequest(`Invalid stream name '${name}'`);
  }
  return found.stream.id;
}

/** Bounds on configuration a client sends (Zulip's BOT_CONFIG_SIZE_LIMIT, per key and value here). */
function checkConfigData(config: Record<string, string>, keysAfter: number): void {
  if (keysAfter > MAX_BOT_CONFIG_KEYS) throw badRequest(`config_data has too many keys (limit: ${MAX_BOT_CONFIG_KEYS})`);
  for (const [key, value] of Object.entries(config)) {
    if (key.includes("\u0000") || value.includes("\u0000")) throw badRequest("config_data contains NULL (0x00) characters.");
    if (key.length > MAX_BOT_CONFIG_KEY_LENGTH) throw badRequest(`config_data has a key that is too long (limit: ${MAX_BOT_CONFIG_KEY_LENGTH} characters)`);
    if (value.length > MAX_BOT_CONFIG_VALUE_LENGTH) throw badRequest(`config_data has a value that is too long (limit: ${MAX_BOT_CONFIG_VALUE_LENGTH} characters)`);
  }
}

function checkConfigAllowed(botType: number, config: Record<string, string>): void {
  if (Object.keys(config).length > 0 && !CONFIG_BOT_TYPES.includes(botType)) {
    throw badRequest("Only incoming webhook and embedded bots have configuration data");
  }
}

async function writeConfig(tx: Tx, botId: number, config: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(config)) {
    await tx.botConfigData.upsert({
      where: { bot_profile_id_key: { bot_profile_id: botId, key } },
      create: { bot_profile_id: botId, key, value },
      update: { value },
    });
  }
}

// ---------------------------------------------------------------------------------------------
// POST /bots

export interface NewBotRequest {
  fullName: string;
  shortName: string;
  botType: number;
  /** An outgoing webhook's URL ("" when not given); its form is the route's to check. */
  payloadUrl: string;
  serviceName: string | null;
  interfaceType: number;
  configData: Record<string, string>;
  /** Stream names; null leaves the default unset. */
  defaultSendingStream: string | null;
  defaultEventsRegisterStream: string | null;
  defaultAllPublicStreams: boolean | null;
}

interface CheckedNewBot {
  email: string;
  shortName: string;
  fullName: string;
  botType: number;
  serviceName: string | null;
  payloadUrl: string;
  interfaceType: number;
  configData: Record<string, string>;
  defaultSendingStreamId: number | null;
  defaultEventsRegisterStreamId: number | null;
  defaultAllPublicStreams: boolean;
}

/** Zulip's checks of add_bot_backend, in its order (so a request gets the error Zulip gives it). */
export async function checkNewBot(db: Db, ctx: ServerContext, actor: Actor, request: NewBotRequest): Promise<CheckedNewBot> {
  checkMayManageBots(actor);
  const shortName = request.shortName.trim();
  if (shortName === "") throw badRequest("Bad name or username");
  // An incoming webhook's service name is its integration; other bots are their own service.
  const serviceName = request.botType === BOT_TYPE_INCOMING_WEBHOOK ? request.serviceName || null : request.serviceName || shortName;
  const fullName = checkFullName(request.fullName);
  const email = `${shortName}-bot@${botDomain(ctx)}`;
  if (request.botType === BOT_TYPE_EMBEDDED && !isEmbeddedBotName(serviceName ?? "")) throw badRequest("Invalid embedded bot name.");
  if (!isValidBotEmail(email)) throw badRequest("Bad name or username");
  if (await getUserByDeliveryEmail(db, actor.realm_id, email)) throw badRequest("Username already in use");
  await checkBotNameAvailable(db, actor.realm_id, fullName);
  await checkBotCreationPolicy(db, actor, request.botType);
  if (!allowedBotTypes(actor).includes(request.botType)) throw badRequest("Invalid bot type");
  if (!SERVICE_INTERFACES.includes(request.interfaceType)) throw badRequest("Invalid interface type");
  if (request.botType === BOT_TYPE_OUTGOING_WEBHOOK && !isPayloadUrl(request.payloadUrl)) throw badRequest("payload_url is not a URL");
  const defaultSendingStreamId = request.defaultSendingStream === null ? null : await accessBotStream(db, actor, request.defaultSendingStream);
  const defaultEventsRegisterStreamId = request.defaultEventsRegisterStream === null ? null : await accessBotStream(db, actor, request.defaultEventsRegisterStream);
  // This server has no incoming webhook integrations to configure (realm_incoming_webhook_bots).
  if (request.botType === BOT_TYPE_INCOMING_WEBHOOK && serviceName !== null) throw badRequest(`Invalid integration '${serviceName}'.`);
  checkConfigAllowed(request.botType, request.configData);
  checkConfigData(request.configData, Object.keys(request.configData).length);
  await checkBotLimits(db, ctx.bots, actor.realm_id, actor.id, "yours");
  return {
    email,
    shortName: `${shortName}-bot`,
    fullName,
    botType: request.botType,
    serviceName,
    payloadUrl: request.botType === BOT_TYPE_OUTGOING_WEBHOOK ? request.payloadUrl : "",
    interfaceType: request.interfaceType,
    configData: CONFIG_BOT_TYPES.includes(request.botType) ? request.configData : {},
    defaultSendingStreamId,
    defaultEventsRegisterStreamId,
    defaultAllPublicStreams: request.defaultAllPublicStreams ?? false,
  };
}

/**
 * Creates a bot owned by the actor (Zulip's do_create_user and notify_created_bot): its row, its
 * service (outgoing webhook and embedded bots), its configuration; `realm_user add` to everyone
 * and `realm_bot add` with the whole bot to its owner and the administrators. Bots get no
 * default-stream subscriptions (Zulip subscribes only humans).
 */
export async function createBot(
  tx: Tx,
  events: EventRecorder,
  ctx: ServerContext,
  actor: Actor,
  request: NewBotRequest,
  avatar: { id?: number; source: "G" | "U" } = { source: "G" },
): Promise<UserProfile> {
  await lockRealmBots(tx, actor.realm_id);
  // The creator may have been deactivated since the request was authenticated.
  if (!(await lockBotOwner(tx, actor.realm_id, actor.id))?.is_active) throw new UserDeactivatedError();
  const checked = await checkNewBot(tx, ctx, actor, request);
  const bot = await insertUser(tx, actor.realm, {
    id: avatar.id,
    email: checked.email,
    fullName: checked.fullName,
    shortName: checked.shortName,
    passwordHash: null,
    role: ROLE_MEMBER,
    timezone: "",
    bot: {
      botType: checked.botType,
      ownerId: actor.id,
      avatarSource: avatar.source,
      defaultSendingStreamId: checked.defaultSendingStreamId,
      defaultEventsRegisterStreamId: checked.defaultEventsRegisterStreamId,
      defaultAllPublicStreams: checked.defaultAllPublicStreams,
    },
  });
  if (SERVICE_BOT_TYPES.includes(checked.botType)) {
    await tx.service.create({ data: { user_id: bot.id, name: checked.serviceName!, base_url: checked.payloadUrl, token: generateApiKey(), interface: checked.interfaceType } });
  }
  await writeConfig(tx, bot.id, checked.configData);
  await notifyCreatedUser(tx, events, bot);
  events.send({ type: "realm_bot", op: "add", bot: await ownedBotDict(tx, bot) }, await botAdministratorIds(tx, bot));
  return bot;
}

/** A user id drawn ahead of its row, so that files named after it can be written first. */
async function nextUserId(db: FileActionServices["prisma"]): Promise<number> {
  const [row] = await db.$queryRaw<{ id: number }[]>(Prisma.sql`SELECT nextval(pg_get_serial_sequence('user_profile', 'id'))::int AS id`);
  return row.id;
}

/** POST /bots once its body is read: the bot, with its uploaded avatar if one came. */
export async function addBot(services: FileActionServices, ctx: ServerContext, actor: Actor, request: NewBotRequest, upload: Buffer | null, requestId?: string): Promise<UserProfile> {
  const create = (avatar?: { id: number; source: "U" }) => services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => createBot(tx, events, ctx, actor, request, avatar));
  if (upload === null) return create();
  // Refused requests write no file: the checks, then the image, then the files and the row.
  await checkNewBot(services.prisma, ctx, actor, request);
  const images = await resizeAvatar(upload, `${actor.realm_id}:${actor.id}`);
  const id = await nextUserId(services.prisma);
  return withAvatarFiles(services.storage, actor.realm_id, id, false, images, () => create({ id, source: "U" }));
}

// ---------------------------------------------------------------------------------------------
// Access, GET /bots, DELETE /bots/{id}, POST /bots/{id}/api_key/regenerate

/**
 * A bot the actor may manage (Zulip's access_bot_by_id): its owner or an administrator may.
 * Missing, another realm's, not a bot, or one of the server's own bots: `No such bot`.
 */
export async function accessBotById(db: Pick<Tx, "userProfile">, actor: Actor, botId: number): Promise<UserProfile> {
  const bot = await db.userProfile.findFirst({ where: { id: botId, realm_id: actor.realm_id } });
  if (!bot || !bot.is_bot || isSystemBot(bot)) throw badRequest("No such bot");
  if (bot.bot_owner_id !== actor.id && !isAdmin(actor)) throw badRequest("Insufficient permission");
  return bot;
}

/** GET /bots: the actor's active bots, oldest first (Zulip's get_bots_backend). */
export async function ownBots(db: Pick<Tx, "userProfile">, actor: Actor): Promise<UserProfile[]> {
  checkMayManageBots(actor);
  return db.userProfile.findMany({ where: { realm_id: actor.realm_id, is_bot: true, is_active: true, bot_owner_id: actor.id }, orderBy: [{ date_joined: "asc" }, { id: "asc" }] });
}

/** DELETE /bots/{id}: deactivates the bot (its owner or an administrator may). */
export async function deactivateBot(tx: Tx, events: EventRecorder, actor: Actor, botId: number): Promise<void> {
  checkMayManageBots(actor);
  const bot = await accessBotById(tx, actor, botId);
  if (!bot.is_active) throw badRequest("User is already deactivated");
  await deactivateUser(tx, events, actor, bot);
}

// ---------------------------------------------------------------------------------------------
// PATCH /bots/{id}

export interface BotChanges {
  fullName?: string;
  botOwnerId?: number;
  /** A stream name; "" clears the default. */
  defaultSendingStream?: string;
  defaultEventsRegisterStream?: string;
  defaultAllPublicStreams?: boolean;
  /** An outgoing webhook's new URL (its form is the route's to check) and interface. */
  servicePayloadUrl?: string;
  serviceInterface?: number;
  /** Keys to set in an incoming webhook or embedded bot's configuration (others are kept). */
  configData?: Record<string, string>;
  /** The bot's role (feature level 130): administrators only, as for a person. */
  role?: number;
}

interface CheckedBotChanges {
  fullName?: string;
  defaultSendingStreamId?: number | null;
  defaultEventsRegisterStreamId?: number | null;
}

/** Everything a PATCH can get wrong, before anything changes (Zulip checks as it goes). */
export async function checkBotChanges(db: Db, actor: Actor, bot: UserProfile, changes: BotChanges, limits: BotLimits): Promise<CheckedBotChanges> {
  const checked: CheckedBotChanges = {};
  if (changes.fullName !== undefined) {
    const fullName = checkFullName(changes.fullName);
    // The web app sends the name unchanged with every edit: that is no change, and no clash.
    if (fullName !== bot.full_name) {
      await checkBotNameAvailable(db, bot.realm_id, fullName);
      checked.fullName = fullName;
    }
  }
  if (changes.botOwnerId !== undefined) {
    const owner = await db.userProfile.findFirst({ where: { id: changes.botOwnerId, realm_id: bot.realm_id } });
    if (!owner) throw badRequest("Failed to change owner, no such user");
    if (!owner.is_active) throw badRequest("Failed to change owner, user is deactivated");
    if (owner.is_bot) throw badRequest("Failed to change owner, bots can't own other bots");
    if (owner.id !== bot.bot_owner_id && bot.is_active) await checkBotLimits(db, limits, bot.realm_id, owner.id, "new owner");
  }
  const stream = async (name: string) => (name === "" ? null : accessBotStream(db, actor, name));
  if (changes.defaultSendingStream !== undefined) checked.defaultSendingStreamId = await stream(changes.defaultSendingStream);
  if (changes.defaultEventsRegisterStream !== undefined) checked.defaultEventsRegisterStreamId = await stream(changes.defaultEventsRegisterStream);
  if (changes.servicePayloadUrl !== undefined || changes.serviceInterface !== undefined) {
    if (bot.bot_type !== BOT_TYPE_OUTGOING_WEBHOOK) throw badRequest("Only outgoing webhook bots have a service URL and interface");
    if (changes.servicePayloadUrl !== undefined && !isPayloadUrl(changes.servicePayloadUrl)) throw badRequest("service_payload_url is not a URL");
    if (changes.serviceInterface !== undefined && !SERVICE_INTERFACES.includes(changes.serviceInterface)) throw badRequest("Invalid interface type");
  }
  if (changes.configData !== undefined) {
    checkConfigAllowed(bot.bot_type ?? BOT_TYPE_GENERIC, changes.configData);
    const keys = new Set([...Object.keys(await botConfig(db, bot.id)), ...Object.keys(changes.configData)]);
    checkConfigData(changes.configData, keys.size);
  }
  return checked;
}

function streamName(db: Db, id: number | null): Promise<string | null> {
  return id === null ? Promise.resolve(null) : db.stream.findUnique({ where: { id }, select: { name: true } }).then((row) => row?.name ?? null);
}

/**
 * Changes a bot (Zulip's patch_bot_backend), all in the caller's transaction: name, owner,
 * default streams, its outgoing webhook, its configuration, and (`avatarUploaded`, the files
 * already written) its avatar. Each change sends what Zulip's do_* function sends: `realm_bot
 * update` to the bot's owner and administrators, and `realm_user update` where others see it.
 */
export async function updateBot(
  tx: Tx,
  events: EventRecorder,
  ctx: Pick<ServerContext, "bots">,
  actor: Actor,
  botId: number,
  changes: BotChanges,
  avatarUploaded = false,
): Promise<UserProfile> {
  checkMayManageBots(actor);
  let bot = await accessBotById(tx, actor, botId);
  const checked = await checkBotChanges(tx, actor, bot, changes, ctx.bots);
  const administrators = () => botAdministratorIds(tx, bot);
  const update = async (fields: Record<string, unknown>, data: Prisma.UserProfileUncheckedUpdateInput) => {
    bot = await tx.userProfile.update({ where: { id: bot.id }, data });
    events.send({ type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, ...fields } }, await administrators());
  };

  if (checked.fullName !== undefined) bot = await changeFullName(tx, events, bot, checked.fullName);
  if (changes.botOwnerId !== undefined && changes.botOwnerId !== bot.bot_owner_id) {
    await changeBotOwner(tx, events, actor, bot, changes.botOwnerId, ctx.bots);
    bot = await tx.userProfile.findUniqueOrThrow({ where: { id: bot.id } });
  }
  if (checked.defaultSendingStreamId !== undefined) {
    await update({ default_sending_stream: await streamName(tx, checked.defaultSendingStreamId) }, { default_sending_stream_id: checked.defaultSendingStreamId });
  }
  if (checked.defaultEventsRegisterStreamId !== undefined) {
    await update({ default_events_register_stream: await streamName(tx, checked.defaultEventsRegisterStreamId) }, { default_events_register_stream_id: checked.defaultEventsRegisterStreamId });
  }
  if (changes.defaultAllPublicStreams !== undefined) {
    await update({ default_all_public_streams: changes.defaultAllPublicStreams }, { default_all_public_streams: changes.defaultAllPublicStreams });
  }
  if (changes.servicePayloadUrl !== undefined || changes.serviceInterface !== undefined) {
    // One service a bot, as Zulip (do_update_outgoing_webhook_service takes the first).
    const service = await tx.service.findFirst({ where: { user_id: bot.id }, orderBy: { id: "asc" } });
    if (!service) throw new JsonableError("This bot has no outgoing webhook service");
    const updated = await tx.service.update({
      where: { id: service.id },
      data: { base_url: changes.servicePayloadUrl ?? service.base_url, interface: changes.serviceInterface ?? service.interface },
    });
    events.send(
      { type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, services: [{ base_url: updated.base_url, interface: updated.interface, token: updated.token }] } },
      await administrators(),
    );
  }
  if (changes.configData !== undefined && Object.keys(changes.configData).length > 0) {
    await writeConfig(tx, bot.id, changes.configData);
    // realm_bots shows an embedded bot's configuration; an incoming webhook's services are empty.
    const service = bot.bot_type === BOT_TYPE_EMBEDDED ? await tx.service.findFirst({ where: { user_id: bot.id }, orderBy: { id: "asc" } }) : null;
    if (service) {
      events.send(
        { type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, services: [{ config_data: await botConfig(tx, bot.id), service_name: service.name }] } },
        await administrators(),
      );
    }
  }
  if (changes.role !== undefined && changes.role !== bot.role) {
    await updateUser(tx, events, actor, bot, { role: changes.role });
    bot = await tx.userProfile.findUniqueOrThrow({ where: { id: bot.id } });
  }
  if (avatarUploaded) bot = await changeAvatarSource(tx, events, actor, bot, "U");
  return bot;
}

/** PATCH /bots/{id} once its body is read, with the bot's new avatar if one came. */
export async function patchBot(
  services: FileActionServices,
  ctx: Pick<ServerContext, "bots">,
  actor: Actor,
  botId: number,
  changes: BotChanges,
  upload: Buffer | null,
  requestId?: string,
): Promise<UserProfile> {
  const change = (avatarUploaded: boolean) => services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => updateBot(tx, events, ctx, actor, botId, changes, avatarUploaded));
  if (upload === null) return change(false);
  const bot = await accessBotById(services.prisma, actor, botId);
  await checkBotChanges(services.prisma, actor, bot, changes, ctx.bots);
  const images = await resizeAvatar(upload, `${actor.realm_id}:${actor.id}`);
  return withAvatarFiles(services.storage, bot.realm_id, bot.id, bot.avatar_source === "U", images, () => change(true));
}

/** What PATCH /bots/{id} answers (Zulip's patch_bot_backend): the bot as it now is, the changes as sent. */
export async function patchBotResult(db: Db, bot: UserProfile, changes: BotChanges): Promise<Record<string, unknown>> {
  const service = bot.bot_type === BOT_TYPE_OUTGOING_WEBHOOK ? await db.service.findFirst({ where: { user_id: bot.id }, orderBy: { id: "asc" } }) : null;
  const owner = bot.bot_owner_id === null ? null : await db.userProfile.findUnique({ where: { id: bot.bot_owner_id }, select: { email: true } });
  return {
    full_name: bot.full_name,
    avatar_url: avatarUrl(bot, false),
    service_interface: changes.serviceInterface ?? service?.interface ?? 1,
    service_payload_url: changes.servicePayloadUrl ?? null,
    config_data: changes.configData ?? null,
    default_sending_stream: await streamName(db, bot.default_sending_stream_id),
    default_events_register_stream: await streamName(db, bot.default_events_register_stream_id),
    default_all_public_streams: bot.default_all_public_streams,
    ...(owner ? { bot_owner: owner.email } : {}),
  };
}
