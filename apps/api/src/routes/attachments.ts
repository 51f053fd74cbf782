// The uploader's files (Zulip's zerver/views/attachments.py).
import { Router } from "express";
import { attachmentDicts, deleteUploadedFile, usedUploadSpace } from "@chat/core";
import { actorOf, route, success, requestIdOf } from "@chat/http";
import { pathId } from "./path-ids.ts";
import type { ApiServices } from "../services.ts";

export function attachmentRoutes(services: ApiServices): Router {
  const router = Router();

  router.get(
    "/attachments",
    route(async (_req, res) => {
      const actor = actorOf(res);
      const [attachments, used] = await Promise.all([attachmentDicts(services.prisma, actor.id), usedUploadSpace(services.prisma, actor.realm_id)]);
      success(res, { attachments, upload_space_used: used });
    }),
  );

  router.delete(
    "/attachments/:attachment_id",
    route(async (req, res) => {
      await deleteUploadedFile(services, actorOf(res), pathId(req, "attachment_id"), requestIdOf(req));
      success(res);
    }),
  );
  return router;
}
