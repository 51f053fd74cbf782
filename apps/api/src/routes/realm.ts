import { Router } from "express";
import { fitsPostgresInteger, InvalidArgumentError, updateRealmSettings, type RealmSettingsChanges } from "@chat/core";
import { actorOf, changedSettingsBody, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

const REALM_SETTINGS = {
  name: params.jsonOrPlainString().optional(),
  description: params.jsonOrPlainString().optional(),
  invite_required: params.bool().optional(),
  create_stream_policy: params.int().optional(),
  invite_to_stream_policy: params.int().optional(),
  user_group_edit_policy: params.int().optional(),
  private_message_policy: params.int().optional(),
  wildcard_mention_policy: params.int().optional(),
  bot_creation_policy: params.int().optional(),
  email_address_visibility: params.int().optional(),
  waiting_period_threshold: params.int().optional(),
  allow_message_editing: params.bool().optional(),
  message_content_edit_limit_seconds: params.int().optional(),
  allow_community_topic_editing: params.bool().optional(),
  allow_message_deleting: params.bool().optional(),
  message_content_delete_limit_seconds: params.int().optional(),
  allow_edit_history: params.bool().optional(),
  mandatory_topics: params.bool().optional(),
  default_language: params.jsonOrPlainString().optional(),
  default_twenty_four_hour_time: params.bool().optional(),
  inline_image_preview: params.bool().optional(),
  inline_url_embed_preview: params.bool().optional(),
  send_welcome_emails: params.bool().optional(),
  digest_emails_enabled: params.bool().optional(),
  message_retention_days: params
    .custom<string>((raw) => raw, { anyOf: [{ type: "integer", minimum: 1 }, { enum: ["forever", "unlimited"] }] })
    .maxLength(40)
    .optional()
    .describe("Days, or `forever` (also `unlimited`)."),
  name_changes_disabled: params.bool().optional(),
  email_changes_disabled: params.bool().optional(),
  avatar_changes_disabled: params.bool().optional(),
  add_emoji_by_admins_only: params.bool().optional(),
  notifications_stream_id: params.int().optional(),
  signup_notifications_stream_id: params.int().optional(),
  enable_read_receipts: params.bool().optional(),
};

export const realmEndpoints = {
  update: endpoint({
    method: "patch",
    path: "/realm",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Change the organization's settings (administrators; some, owners)",
    params: REALM_SETTINGS,
    response: changedSettingsBody(REALM_SETTINGS, {
      // null: forever; no limit.
      message_retention_days: { anyOf: [{ type: "integer" }, { type: "null" }] },
      message_content_delete_limit_seconds: { anyOf: [{ type: "integer" }, { type: "null" }] },
    }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

export function realmRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions, ctx } = services;

  serve(
    router,
    realmEndpoints.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { message_retention_days, ...p } = parseParams(req, realmEndpoints.update.params);
      const changes: RealmSettingsChanges = { ...p };
      if (message_retention_days !== undefined) changes.message_retention_days = parseRetentionDays(message_retention_days);
      const data = await actions.run(originOf(req, actor), (tx, events) => updateRealmSettings(tx, events, ctx, actor, changes));
      success(res, data);
    }),
  );
  return router;
}

/** Zulip's parse_message_retention_days: a positive number of days, or "forever"/"unlimited". */
function parseRetentionDays(raw: string): number | null {
  const value = raw.trim().replace(/^"(.*)"$/, "$1");
  if (value === "forever" || value === "unlimited") return null;
  if (!/^-?\d+$/.test(value) || !fitsPostgresInteger(value)) throw new InvalidArgumentError(`Bad value for 'message_retention_days': ${raw}`, "message_retention_days");
  return Number(value);
}

