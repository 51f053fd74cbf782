import { Router } from "express";
import { BOT_STORAGE_KEYS_PER_REQUEST, getBotStorage, putBotStorage, removeBotStorage } from "@chat/core";
import { actorOf, MAX_FORM_BYTES, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";

const KEYS = { type: "array", items: { type: "string" } };

/**
 * Bot storage, as Zulip's zerver/views/storage.py: the python library's get_storage sends `keys`
 * in the query string, update_storage a form body; DELETE reads `keys` from either.
 */
export function botStorageRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  // The action refuses more than BOT_STORAGE_KEYS_PER_REQUEST keys in Zulip's words; this bounds
  // what reaches it.
  const keysSpec = { keys: params.json<string[]>(KEYS, { maxItems: 2 * BOT_STORAGE_KEYS_PER_REQUEST }).optional() };
  // Up to the quota (lib/bot-storage.ts), which the action checks; the form body bounds the text.
  const storageSpec = { storage: params.stringDict().maxLength(MAX_FORM_BYTES) };

  router.get(
    "/bot_storage",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, keysSpec);
      success(res, { storage: await getBotStorage(prisma, actor.id, p.keys) });
    }),
  );

  router.put(
    "/bot_storage",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, storageSpec);
      await actions.run(originOf(req, actor), (tx) => putBotStorage(tx, actor, p.storage));
      success(res);
    }),
  );

  router.delete(
    "/bot_storage",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, keysSpec);
      await actions.run(originOf(req, actor), (tx) => removeBotStorage(tx, actor, p.keys));
      success(res);
    }),
  );
  return router;
}
