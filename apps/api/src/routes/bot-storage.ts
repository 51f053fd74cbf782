import { Router } from "express";
import { BOT_STORAGE_KEYS_PER_REQUEST, getBotStorage, putBotStorage, removeBotStorage } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, MAX_FORM_BYTES, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

const KEYS = { type: "array", items: { type: "string" } };

/**
 * Bot storage, as Zulip's zerver/views/storage.py: the python library's get_storage sends `keys`
 * in the query string, update_storage a form body; DELETE reads `keys` from either.
 */
// The action refuses more than BOT_STORAGE_KEYS_PER_REQUEST keys in Zulip's words; this bounds
// what reaches it.
const keysSpec = { keys: params.json<string[]>(KEYS, { maxItems: 2 * BOT_STORAGE_KEYS_PER_REQUEST }).optional() };
// Up to the quota (lib/bot-storage.ts), which the action checks; the form body bounds the text.
const storageSpec = { storage: params.stringDict().maxLength(MAX_FORM_BYTES) };

export const botStorageEndpoints = {
  get: endpoint({
    method: "get",
    path: "/bot_storage",
    tag: "bots",
    auth: "basic",
    summary: "The bot's stored values (all, or those of `keys`)",
    params: keysSpec,
    response: successBody({ storage: schema.dict(schema.string()) }),
  }),
  put: endpoint({ method: "put", path: "/bot_storage", tag: "bots", auth: "basic", summary: "Store values", params: storageSpec, response: EMPTY_SUCCESS }),
  remove: endpoint({ method: "delete", path: "/bot_storage", tag: "bots", auth: "basic", summary: "Remove stored values (all, or those of `keys`)", params: keysSpec, response: EMPTY_SUCCESS }),
};

export function botStorageRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = botStorageEndpoints;

  serve(
    router,
    E.get,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.get.params);
      success(res, { storage: await getBotStorage(prisma, actor.id, p.keys) });
    }),
  );

  serve(
    router,
    E.put,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.put.params);
      await actions.run(originOf(req, actor), (tx) => putBotStorage(tx, actor, p.storage));
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.remove.params);
      await actions.run(originOf(req, actor), (tx) => removeBotStorage(tx, actor, p.keys));
      success(res);
    }),
  );
  return router;
}
