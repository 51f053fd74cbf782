import { Router } from "express";
import { checkRealmAdministrator, markOnboardingStepAsRead, REALM_USER_DEFAULT_SETTINGS, updateRealmUserDefaults, type PersonalSetting, type RealmUserDefaultsRequest } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

function settingParam(setting: PersonalSetting) {
  if (setting.type === "boolean") return params.bool().optional();
  return setting.type === "integer" ? params.int().optional() : params.string().maxLength(200).optional();
}

/** Zulip 9.0's RealmUserDefault settings by name (actions/realm-user-defaults.ts). */
const DEFAULT_PARAMS = {
  ...Object.fromEntries(REALM_USER_DEFAULT_SETTINGS.map((setting) => [setting.name, settingParam(setting)])),
  email_address_visibility: params.int().optional().describe("New users' email_address_visibility (feature level 163): 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators."),
};

export const realmUserDefaultEndpoints = {
  update: endpoint({
    method: "patch",
    path: "/realm/user_settings_defaults",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Change the personal settings new users start with (feature level 95)",
    description:
      "Administrators only. Each setting as PATCH /settings takes it (not default_language, timezone, enable_login_emails, enable_marketing_emails); each change is a `realm_user_settings_defaults` event to everyone. twenty_four_hour_time is the organization's default_twenty_four_hour_time.",
    params: DEFAULT_PARAMS,
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  markOnboardingStep: endpoint({
    method: "post",
    path: "/users/me/onboarding_steps",
    tag: "users",
    auth: "basic",
    summary: "Mark an onboarding step as read (feature level 233)",
    description: "One of Zulip 9.0's one-time notices (`Unknown onboarding_step: …` otherwise); an `onboarding_steps` event lists those still to come. Bots are refused.",
    params: { onboarding_step: params.string().maxLength(100) },
    response: EMPTY_SUCCESS,
  }),
};

export function realmUserDefaultRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = realmUserDefaultEndpoints;

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkRealmAdministrator(actor);
      const request = parseParams(req, E.update.params) as RealmUserDefaultsRequest;
      await actions.run(originOf(req, actor), (tx, events) => updateRealmUserDefaults(tx, events, actor, request));
      success(res);
    }),
  );

  serve(
    router,
    E.markOnboardingStep,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.markOnboardingStep.params);
      await actions.run(originOf(req, actor), (tx, events) => markOnboardingStepAsRead(tx, events, actor, p.onboarding_step));
      success(res);
    }),
  );
  return router;
}
