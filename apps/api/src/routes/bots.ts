// Bots their owners manage (Zulip 3.x's /bots endpoints). POST /bots and PATCH /bots/{id} may
// carry the bot's avatar, so they read their own body (multipart.ts leaves it to them), after
// the checks that need none of it.
import { Router } from "express";
import {
  accessBotById,
  addBot,
  avatarUrl,
  badRequest,
  botExtras,
  checkMayManageBots,
  deactivateBot,
  formatBotInfo,
  isPayloadUrl,
  MAX_PAYLOAD_URL_LENGTH,
  ownBots,
  patchBot,
  patchBotResult,
  regenerateApiKey,
  type BotChanges,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, requestIdOf, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { checkBeforeFileBody, receiveFormWithImage } from "./file-bodies.ts";
import { pathId } from "./path-ids.ts";

/** Zulip's Service.name: at most a name's length. */
const MAX_SERVICE_NAME_LENGTH = 100;

/** Zulip reads the URLs JSON-encoded (check_url); a plain one is taken as sent. */
const payloadUrl = () => params.jsonOrPlainString().maxLength(MAX_PAYLOAD_URL_LENGTH);

/** A URL a client sent must be one, whatever the bot (Zulip's REQ validator runs first). */
function checkUrlParam(value: string | undefined, name: string): void {
  if (value !== undefined && value !== "" && !isPayloadUrl(value)) throw badRequest(`${name} is not a URL`);
}

const STREAM_NAME_OR_NULL = schema.nullable(schema.string());
const AVATAR = { name: "file", description: "The bot's avatar: one image (any field name).", required: false };

export const botEndpoints = {
  list: endpoint({
    method: "get",
    path: "/bots",
    tag: "bots",
    auth: "basic",
    summary: "The bots the user owns (all the organization's, for an administrator)",
    params: {},
    response: successBody({ bots: schema.array(schema.ref("Bot")) }),
  }),
  create: endpoint({
    method: "post",
    path: "/bots",
    tag: "bots",
    auth: "basic",
    summary: "Create a bot",
    params: {
      full_name: params.string(),
      short_name: params.string(),
      bot_type: params.int().default(1),
      payload_url: payloadUrl().default(""),
      service_name: params.string().maxLength(MAX_SERVICE_NAME_LENGTH).optional(),
      config_data: params.stringDict().default({}),
      interface_type: params.int().default(1),
      default_sending_stream: params.string().optional(),
      default_events_register_stream: params.string().optional(),
      default_all_public_streams: params.bool().optional(),
    },
    file: AVATAR,
    response: successBody({
      user_id: schema.integer(),
      api_key: schema.string(),
      avatar_url: schema.string(),
      default_sending_stream: STREAM_NAME_OR_NULL,
      default_events_register_stream: STREAM_NAME_OR_NULL,
      default_all_public_streams: schema.boolean(),
    }),
    // bot_creation_policy may leave some bots to administrators.
    errors: ["BAD_IMAGE", "UNAUTHORIZED_PRINCIPAL"],
  }),
  update: endpoint({
    method: "patch",
    path: "/bots/{bot_id}",
    tag: "bots",
    auth: "basic",
    summary: "Change a bot",
    params: {
      full_name: params.string().optional(),
      bot_owner_id: params.int().optional(),
      config_data: params.stringDict().optional(),
      service_payload_url: payloadUrl().optional(),
      service_interface: params.int().optional(),
      default_sending_stream: params.string().optional(),
      default_events_register_stream: params.string().optional(),
      default_all_public_streams: params.bool().optional(),
      role: params.int().optional().describe("The bot's role (feature level 130; administrators only)."),
    },
    file: AVATAR,
    response: successBody(
      {
        full_name: schema.string(),
        avatar_url: schema.string(),
        service_interface: schema.integer(),
        service_payload_url: STREAM_NAME_OR_NULL,
        config_data: schema.nullable(schema.dict(schema.string())),
        default_sending_stream: STREAM_NAME_OR_NULL,
        default_events_register_stream: STREAM_NAME_OR_NULL,
        default_all_public_streams: schema.boolean(),
      },
      { bot_owner: schema.string() },
    ),
    errors: ["BAD_IMAGE", "UNAUTHORIZED_PRINCIPAL"],
  }),
  deactivate: endpoint({ method: "delete", path: "/bots/{bot_id}", tag: "bots", auth: "basic", summary: "Deactivate a bot", params: {}, response: EMPTY_SUCCESS, errors: ["UNAUTHORIZED_PRINCIPAL"] }),
  regenerateApiKey: endpoint({
    method: "post",
    path: "/bots/{bot_id}/api_key/regenerate",
    tag: "bots",
    auth: "basic",
    summary: "A new API key for a bot",
    params: {},
    response: successBody({ api_key: schema.string() }),
  }),
};

export function botRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions, ctx } = services;
  const { maxImageBytes } = services.uploads;
  const E = botEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      const actor = actorOf(res);
      const bots = await ownBots(prisma, actor);
      const extras = await botExtras(prisma, bots);
      success(res, { bots: bots.map((bot) => formatBotInfo(bot, extras.get(bot.id)!)) });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      await checkBeforeFileBody(res, () => checkMayManageBots(actor));
      const upload = await receiveFormWithImage(req, res, maxImageBytes);
      const p = parseParams(req, E.create.params);
      checkUrlParam(p.payload_url, "payload_url");
      const bot = await addBot(services, ctx, actor, {
        fullName: p.full_name,
        shortName: p.short_name,
        botType: p.bot_type,
        payloadUrl: p.payload_url,
        serviceName: p.service_name ?? null,
        interfaceType: p.interface_type,
        configData: p.config_data,
        defaultSendingStream: p.default_sending_stream ?? null,
        defaultEventsRegisterStream: p.default_events_register_stream ?? null,
        defaultAllPublicStreams: p.default_all_public_streams ?? null,
      }, upload, requestIdOf(req));
      const extras = (await botExtras(prisma, [bot])).get(bot.id)!;
      success(res, {
        user_id: bot.id,
        api_key: bot.api_key,
        avatar_url: avatarUrl(bot, false),
        default_sending_stream: extras.defaultSendingStream,
        default_events_register_stream: extras.defaultEventsRegisterStream,
        default_all_public_streams: bot.default_all_public_streams,
      });
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      // Which bot, and whether the actor may change it, before its body is read.
      const botId = await checkBeforeFileBody(res, async () => {
        const id = pathId(req, "bot_id");
        checkMayManageBots(actor);
        await accessBotById(prisma, actor, id);
        return id;
      });
      const upload = await receiveFormWithImage(req, res, maxImageBytes);
      const p = parseParams(req, E.update.params);
      if (p.service_payload_url !== undefined && !isPayloadUrl(p.service_payload_url)) throw badRequest("service_payload_url is not a URL");
      const changes: BotChanges = {
        fullName: p.full_name,
        botOwnerId: p.bot_owner_id,
        configData: p.config_data,
        servicePayloadUrl: p.service_payload_url,
        serviceInterface: p.service_interface,
        defaultSendingStream: p.default_sending_stream,
        defaultEventsRegisterStream: p.default_events_register_stream,
        defaultAllPublicStreams: p.default_all_public_streams,
        role: p.role,
      };
      const bot = await patchBot(services, ctx, actor, botId, changes, upload, requestIdOf(req));
      success(res, await patchBotResult(prisma, bot, changes));
    }),
  );

  serve(
    router,
    E.deactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const botId = pathId(req, "bot_id");
      await actions.run(originOf(req, actor), (tx, events) => deactivateBot(tx, events, actor, botId));
      success(res);
    }),
  );

  serve(
    router,
    E.regenerateApiKey,
    route(async (req, res) => {
      const actor = actorOf(res);
      const botId = pathId(req, "bot_id");
      checkMayManageBots(actor);
      const apiKey = await actions.run(originOf(req, actor), async (tx, events) => regenerateApiKey(tx, events, await accessBotById(tx, actor, botId)));
      success(res, { api_key: apiKey });
    }),
  );
  return router;
}
