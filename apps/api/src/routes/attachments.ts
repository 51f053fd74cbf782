// The uploader's files (Zulip's zerver/views/attachments.py).
import { Router } from "express";
import { attachmentDicts, deleteUploadedFile, usedUploadSpace } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, requestIdOf, route, schema, serve, success, successBody } from "@chat/http";
import { pathId } from "./path-ids.ts";
import type { ApiServices } from "../services.ts";

export const attachmentEndpoints = {
  list: endpoint({
    method: "get",
    path: "/attachments",
    tag: "attachments",
    auth: "basic",
    summary: "The user's uploaded files, and the organization's upload space used",
    params: {},
    response: successBody({ attachments: schema.array(schema.ref("Attachment")), upload_space_used: schema.integer() }),
  }),
  remove: endpoint({ method: "delete", path: "/attachments/{attachment_id}", tag: "attachments", auth: "basic", summary: "Delete an uploaded file", params: {}, response: EMPTY_SUCCESS }),
};

export function attachmentRoutes(services: ApiServices): Router {
  const router = Router();
  const E = attachmentEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      const actor = actorOf(res);
      const [attachments, used] = await Promise.all([attachmentDicts(services.prisma, actor.id), usedUploadSpace(services.prisma, actor.realm_id)]);
      success(res, { attachments, upload_space_used: used });
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      await deleteUploadedFile(services, actorOf(res), pathId(req, "attachment_id"), requestIdOf(req));
      success(res);
    }),
  );
  return router;
}
