// The legacy push registration a mobile app makes after login (zulip-flutter below feature level
// 468): an Android (FCM) registration id or an Apple (APNs) device token. This server offers no
// push notifications (/server_settings says push_notifications_enabled: false, /register
// realm_push_notifications_enabled: false), so a valid token is accepted and not kept: the app
// carries on as with any server without push. Tokens are checked as Zulip checks them.
import { Router } from "express";
import { checkHumanUser, JsonableError } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, params, parseParams, route, serve, success } from "@chat/http";

/** Zulip's bound on a token (validate_token): none is empty or longer. */
const MAX_TOKEN_LENGTH = 4096;
/** An iOS app's bundle id, as Zulip accepts `appid`. */
const APP_ID = /^[.a-zA-Z0-9-]+$/;
const MAX_APP_ID_LENGTH = 255;

const token = params.string().maxLength(MAX_TOKEN_LENGTH, "Empty or invalid length token").describe("The device's token, as the platform's push service gave it.");
const apnsToken = token.describe("The device's APNs token, in hexadecimal.");
const common = { tag: "users", auth: "basic", response: EMPTY_SUCCESS } as const;

export const pushDeviceEndpoints = {
  addAndroid: endpoint({ ...common, method: "post", path: "/users/me/android_gcm_reg_id", summary: "Register an Android device for push notifications (accepted, not kept: this server sends none)", params: { token } }),
  removeAndroid: endpoint({ ...common, method: "delete", path: "/users/me/android_gcm_reg_id", summary: "Unregister an Android device", params: { token } }),
  addApple: endpoint({
    ...common,
    method: "post",
    path: "/users/me/apns_device_token",
    summary: "Register an Apple device for push notifications (accepted, not kept: this server sends none)",
    params: { token: apnsToken, appid: params.string().maxLength(MAX_APP_ID_LENGTH, "Invalid app ID").optional().describe("The iOS app's bundle id.") },
  }),
  removeApple: endpoint({ ...common, method: "delete", path: "/users/me/apns_device_token", summary: "Unregister an Apple device", params: { token: apnsToken } }),
};

/** Zulip's validate_token: not empty (the length bound is the parameter's), and hexadecimal for APNs. */
function checkToken(value: string, kind: "fcm" | "apns"): void {
  if (value === "") throw new JsonableError("Empty or invalid length token");
  if (kind === "apns" && !/^(?:[0-9a-fA-F]{2})+$/.test(value)) throw new JsonableError("Invalid APNS token");
}

export function pushDeviceRoutes(): Router {
  const router = Router();
  const E = pushDeviceEndpoints;
  for (const contract of [E.addAndroid, E.removeAndroid]) {
    serve(
      router,
      contract,
      route((req, res) => {
        checkHumanUser(actorOf(res));
        checkToken(parseParams(req, contract.params).token, "fcm");
        success(res);
      }),
    );
  }
  serve(
    router,
    E.addApple,
    route((req, res) => {
      checkHumanUser(actorOf(res));
      const p = parseParams(req, E.addApple.params);
      checkToken(p.token, "apns");
      if (p.appid !== undefined && !APP_ID.test(p.appid)) throw new JsonableError("Invalid app ID");
      success(res);
    }),
  );
  serve(
    router,
    E.removeApple,
    route((req, res) => {
      checkHumanUser(actorOf(res));
      checkToken(parseParams(req, E.removeApple.params).token, "apns");
      success(res);
    }),
  );
  return router;
}
