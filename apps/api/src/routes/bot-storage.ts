import { Router } from "express";
import { getBotStorage, putBotStorage, removeBotStorage } from "@chat/core";
import { actorOf, params, parseParams, route, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

const KEYS = { type: "array", items: { type: "string" } };

/**
 * Bot storage, as Zulip's zerver/views/storage.py: the python library's get_storage sends `keys`
 * in the query string, update_storage a form body; DELETE reads `keys` from either.
 */
export function botStorageRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const keysSpec = { keys: params.json<string[]>(KEYS).optional() };
  const storageSpec = { storage: params.stringDict() };

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
      await actions.run(actor.realm_id, (tx) => putBotStorage(tx, actor, p.storage));
      success(res);
    }),
  );

  router.delete(
    "/bot_storage",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, keysSpec);
      await actions.run(actor.realm_id, (tx) => removeBotStorage(tx, actor, p.keys));
      success(res);
    }),
  );
  return router;
}
