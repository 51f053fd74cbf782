import { Router } from "express";
import { checkRealmOwner, deactivateRealm, EDIT_HISTORY_POLICY_NAMES, fitsPostgresInteger, InvalidArgumentError, parseGroupSettingChange, parseTimeLimit, REALM_GROUP_SETTING_NAMES, type GroupSettingChange, MAX_CODE_BLOCK_LANGUAGE_LENGTH, MAX_JITSI_SERVER_URL_LENGTH, updateRealmSettings, type RealmSettingsChanges } from "@chat/core";
import { actorOf, changedSettingsBody, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

/** Seconds, or "unlimited" (Zulip's parse_message_time_limit_setting; feature levels 100, 138, 162). */
function timeLimit() {
  return params
    .custom<number | null>(parseTimeLimit, { anyOf: [{ type: "integer" }, { enum: ["unlimited"] }] })
    .maxLength(40)
    .optional()
    .describe("Seconds, or `unlimited`.");
}
const NULLABLE_SECONDS = { anyOf: [{ type: "integer" }, { type: "null" }] };

/** A group-setting value: a group's id, or an anonymous group's direct members and subgroups. */
const GROUP_SETTING_VALUE_SCHEMA = {
  anyOf: [
    { type: "integer" },
    {
      type: "object",
      properties: { direct_members: { type: "array", items: { type: "integer" } }, direct_subgroups: { type: "array", items: { type: "integer" } } },
      required: ["direct_members", "direct_subgroups"],
      additionalProperties: false,
    },
  ],
};

/**
 * A realm group setting's change (feature levels 280 to 367): `{"new": value, "old": value}`, old
 * optional; a bare value (Zulip 9.0's form, a group id) is taken as `{"new": value}`.
 */
function groupSettingChange() {
  return params
    .custom<GroupSettingChange>(
      (raw, name) => {
        let value: unknown = raw;
        try {
          value = JSON.parse(raw);
        } catch {
          // parseGroupSettingChange says what is wrong with it.
        }
        return typeof value === "number" ? parseGroupSettingChange({ new: value }, name) : parseGroupSettingChange(value, name);
      },
      { anyOf: [{ type: "integer" }, { type: "object", properties: { new: GROUP_SETTING_VALUE_SCHEMA, old: GROUP_SETTING_VALUE_SCHEMA }, required: ["new"], additionalProperties: false }] },
    )
    .maxLength(40_000)
    .optional()
    .describe('A group-setting change: `{"new": value, "old": value}` (`old` optional), or a group id.');
}

const REALM_SETTINGS = {
  name: params.jsonOrPlainString().optional(),
  description: params.jsonOrPlainString().optional(),
  invite_required: params.bool().optional(),
  create_stream_policy: params.int().optional(),
  invite_to_stream_policy: params.int().optional(),
  invite_to_realm_policy: params.int().optional(),
  user_group_edit_policy: params.int().optional(),
  private_message_policy: params.int().optional(),
  wildcard_mention_policy: params.int().optional(),
  bot_creation_policy: params.int().optional(),
  email_address_visibility: params.int().optional().describe("Zulip 3.x's organization-wide setting (1-4): sets every user's own email_address_visibility (feature level 163) and new users' default."),
  waiting_period_threshold: params.int().optional(),
  allow_message_editing: params.bool().optional(),
  message_content_edit_limit_seconds: timeLimit(),
  allow_community_topic_editing: params.bool().optional(),
  allow_message_deleting: params.bool().optional(),
  message_content_delete_limit_seconds: timeLimit(),
  // Zulip 9.0's integer permission policies (lib/permissions.ts).
  edit_topic_policy: params.int().optional(),
  move_messages_between_streams_policy: params.int().optional(),
  delete_own_message_policy: params.int().optional(),
  add_custom_emoji_policy: params.int().optional(),
  move_messages_within_stream_limit_seconds: timeLimit(),
  move_messages_between_streams_limit_seconds: timeLimit(),
  allow_edit_history: params.bool().optional().describe("Zulip 3.x's switch, kept in step with `message_edit_history_visibility_policy` (false: `none`)."),
  message_edit_history_visibility_policy: params.oneOf(EDIT_HISTORY_POLICY_NAMES).optional().describe("Who sees messages' edit history: `all`, `moves` (only moves), `none` (feature level 358)."),
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
  enable_spectator_access: params.bool().optional(),
  // Feature level 241's names for the two announcement streams (the 3.x names above still work).
  new_stream_announcements_stream_id: params.int().optional(),
  signup_announcements_stream_id: params.int().optional(),
  zulip_update_announcements_stream_id: params.int().optional(),
  // Feature level 331: the private channel message reports go to (-1: none).
  moderation_request_channel_id: params.int().optional(),
  enable_guest_user_dm_warning: params.bool().optional(),
  emails_restricted_to_domains: params.bool().optional(),
  disallow_disposable_email_addresses: params.bool().optional(),
  digest_weekday: params.int().optional(),
  message_content_allowed_in_email_notifications: params.bool().optional(),
  video_chat_provider: params.int().optional(),
  org_type: params.int().optional(),
  want_advertise_in_communities_directory: params.bool().optional(),
  jitsi_server_url: params.jsonOrPlainString().maxLength(MAX_JITSI_SERVER_URL_LENGTH + 2).optional().describe("A URL, or `default` for the server's Jitsi."),
  enable_guest_user_indicator: params.bool().optional(),
  require_unique_names: params.bool().optional(),
  giphy_rating: params.int().optional(),
  default_code_block_language: params.jsonOrPlainString().maxLength(MAX_CODE_BLOCK_LANGUAGE_LENGTH + 2).optional(),
  // Zulip 10.0's group-based permission settings: each a group-setting change.
  ...(Object.fromEntries(REALM_GROUP_SETTING_NAMES.map((name) => [name, groupSettingChange()])) as Record<(typeof REALM_GROUP_SETTING_NAMES)[number], ReturnType<typeof groupSettingChange>>),
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
      message_content_delete_limit_seconds: NULLABLE_SECONDS,
      message_content_edit_limit_seconds: NULLABLE_SECONDS,
      move_messages_within_stream_limit_seconds: NULLABLE_SECONDS,
      move_messages_between_streams_limit_seconds: NULLABLE_SECONDS,
      jitsi_server_url: { anyOf: [{ type: "string" }, { type: "null" }] },
      // A group setting's new value as the API shows it.
      ...Object.fromEntries(REALM_GROUP_SETTING_NAMES.map((name) => [name, GROUP_SETTING_VALUE_SCHEMA])),
      // As Zulip's update_realm answers it: the stored integer (1 all, 2 moves, 3 none).
      message_edit_history_visibility_policy: { type: "integer", enum: [1, 2, 3] },
    }),
    // EXPECTATION_MISMATCH: a group setting's `old` is not its value (feature level 280 on).
    errors: ["UNAUTHORIZED_PRINCIPAL", "EXPECTATION_MISMATCH"],
  }),
  deactivate: endpoint({
    method: "post",
    path: "/realm/deactivate",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Deactivate the organization (owners only)",
    description:
      "Ends every session and API key of the organization at once; every user gets a `realm` `deactivated` event. Feature level 332: `deletion_delay_days` schedules the deletion of its data (at least `server_min_deactivated_realm_deletion_days` days; `null` or absent: kept, allowed only while the server has no maximum).",
    params: {
      deletion_delay_days: params
        .json<number | null>({ anyOf: [{ type: "integer" }, { type: "null" }] })
        .maxLength(40)
        .optional()
        .describe("Days from now until the organization's data is deleted, or `null`."),
    },
    response: EMPTY_SUCCESS,
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
      const { message_retention_days, new_stream_announcements_stream_id, signup_announcements_stream_id, jitsi_server_url, message_content_edit_limit_seconds, ...p } = parseParams(req, realmEndpoints.update.params);
      const changes: RealmSettingsChanges = { ...p };
      // Stored as 3.x stored it, 0 for no limit (today's clients read null: modern-realm-settings.ts).
      if (message_content_edit_limit_seconds !== undefined) changes.message_content_edit_limit_seconds = message_content_edit_limit_seconds ?? 0;
      if (new_stream_announcements_stream_id !== undefined) changes.notifications_stream_id = new_stream_announcements_stream_id;
      if (signup_announcements_stream_id !== undefined) changes.signup_notifications_stream_id = signup_announcements_stream_id;
      if (jitsi_server_url !== undefined) changes.jitsi_server_url = jitsi_server_url === "default" ? null : jitsi_server_url;
      if (message_retention_days !== undefined) changes.message_retention_days = parseRetentionDays(message_retention_days);
      const data = await actions.run(originOf(req, actor), (tx, events) => updateRealmSettings(tx, events, ctx, actor, changes));
      // Answered under the names the client used.
      for (const [legacy, modern, sent] of [
        ["notifications_stream_id", "new_stream_announcements_stream_id", new_stream_announcements_stream_id],
        ["signup_notifications_stream_id", "signup_announcements_stream_id", signup_announcements_stream_id],
      ] as const) {
        if (sent !== undefined && legacy in data) {
          data[modern] = data[legacy];
          delete data[legacy];
        }
      }
      success(res, data);
    }),
  );
  serve(
    router,
    realmEndpoints.deactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkRealmOwner(actor);
      const { deletion_delay_days } = parseParams(req, realmEndpoints.deactivate.params);
      await actions.run(originOf(req, actor), (tx, events) => deactivateRealm(tx, events, actor, deletion_delay_days ?? null));
      success(res);
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

