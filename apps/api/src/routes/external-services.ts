// Endpoints of services this server does not offer (Zulip 9.0 with none of them configured):
// each answers Zulip's own refusal rather than a 404, so clients show the reason. Nothing is
// stored or sent; /server_settings and /register already say none is available.
import { Router } from "express";
import { checkHumanUser, JsonableError } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, params, parseParams, requireRealm, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

/** Zulip's bound on a push token (validate_token). */
const MAX_TOKEN_LENGTH = 4096;
const MAX_MEETING_NAME_LENGTH = 1000;
/** A JSON web token is a few hundred characters; a longer one is refused unread. */
const MAX_JWT_LENGTH = 8192;

export const externalServiceEndpoints = {
  zoomCreate: endpoint({
    method: "post",
    path: "/calls/zoom/create",
    tag: "streams",
    auth: "basic",
    summary: "Create a Zoom call: refused, Zoom is not configured on this server (400 \"Zoom credentials have not been configured\")",
    params: { is_video_call: params.bool().default(true).describe("Whether the call starts with video (feature level 206).") },
    response: successBody({ url: schema.string() }),
  }),
  bigBlueButtonCreate: endpoint({
    method: "get",
    path: "/calls/bigbluebutton/create",
    tag: "streams",
    auth: "basic",
    summary: "Create a BigBlueButton call: refused, BigBlueButton is not configured on this server (400 \"BigBlueButton is not configured.\")",
    params: {
      meeting_name: params.string().maxLength(MAX_MEETING_NAME_LENGTH),
      voice_only: params.bool().default(false),
    },
    response: successBody({ url: schema.string() }),
  }),
  testPushNotification: endpoint({
    method: "post",
    path: "/mobile_push/test_notification",
    tag: "users",
    auth: "basic",
    summary: "Send a test push notification (feature level 217): this server keeps no devices, so a `token` is 400 INVALID_PUSH_DEVICE_TOKEN \"Device not recognized\", and without one there is nothing to send",
    params: { token: params.string().maxLength(MAX_TOKEN_LENGTH).optional().describe("The device to send to; without it, every device the user registered (none here).") },
    response: EMPTY_SUCCESS,
    errors: ["INVALID_PUSH_DEVICE_TOKEN"],
  }),
  jwtFetchApiKey: endpoint({
    method: "post",
    path: "/jwt/fetch_api_key",
    tag: "authentication",
    auth: "none",
    summary: "An API key for a JSON web token (feature level 160): refused, JWT authentication is not enabled here (400 \"JWT authentication is not enabled for this organization\")",
    params: {
      token: params.string().maxLength(MAX_JWT_LENGTH).optional().describe("The JSON web token."),
      include_profile: params.bool().default(false),
    },
    response: successBody({ api_key: schema.string(), email: schema.string() }, { user: schema.object({}) }),
  }),
};

export function externalServiceRoutes(): Router {
  const router = Router();
  const E = externalServiceEndpoints;

  serve(
    router,
    E.zoomCreate,
    route((req) => {
      parseParams(req, E.zoomCreate.params);
      throw new JsonableError("Zoom credentials have not been configured");
    }),
  );

  serve(
    router,
    E.bigBlueButtonCreate,
    route((req) => {
      parseParams(req, E.bigBlueButtonCreate.params);
      throw new JsonableError("BigBlueButton is not configured.");
    }),
  );

  serve(
    router,
    E.testPushNotification,
    route((req, res) => {
      checkHumanUser(actorOf(res));
      const p = parseParams(req, E.testPushNotification.params);
      // No device is ever kept (push-devices.ts), so none is recognized.
      if (p.token !== undefined) throw new JsonableError("Device not recognized", { code: "INVALID_PUSH_DEVICE_TOKEN" });
      success(res);
    }),
  );
  return router;
}

/** POST /jwt/fetch_api_key needs no credentials: mounted before authentication, in an organization's host. */
export function jwtRoutes(services: ApiServices): Router {
  const router = Router();
  const E = externalServiceEndpoints;
  serve(
    router,
    E.jwtFetchApiKey,
    requireRealm({ prisma: services.prisma, externalHost: services.ctx.externalHost }),
    route((req) => {
      parseParams(req, E.jwtFetchApiKey.params);
      throw new JsonableError("JWT authentication is not enabled for this organization");
    }),
  );
  return router;
}
