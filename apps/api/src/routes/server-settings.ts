import { Router } from "express";
import { NonexistentSubdomainError, realmUri, spectatorsAllowed, renderMarkdown, ZULIP_FEATURE_LEVEL, ZULIP_VERSION, zulipVersionFields } from "@chat/core";
import { endpoint, requestProtocol, requestSubdomain, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

export { ZULIP_FEATURE_LEVEL, ZULIP_VERSION };

export const serverSettingsEndpoints = {
  // No authentication, as in Zulip: clients read it before they have credentials.
  get: endpoint({
    method: "get",
    path: "/server_settings",
    tag: "server_and_organizations",
    auth: "none",
    summary: "How to log in, and the server's version; the organization's name and icon when the host names one",
    description: "The `realm_*` keys are present when the host names an organization (the root host names the organization at the root, if there is one).",
    params: {},
    response: successBody(
      {
        // zulip-flutter requires `ldap` (it offers the password form when email or ldap is on).
        authentication_methods: { type: "object", required: ["password", "email", "ldap"], additionalProperties: schema.boolean() },
        external_authentication_methods: schema.array(schema.ref("ExternalAuthenticationMethod")),
        zulip_version: schema.string(),
        zulip_feature_level: schema.integer(),
        zulip_merge_base: schema.string(),
        service_version: schema.string(),
        push_notifications_enabled: schema.boolean(),
        is_incompatible: schema.boolean(),
        email_auth_enabled: schema.boolean(),
        require_email_format_usernames: schema.boolean(),
      },
      {
        realm_url: schema.string(),
        realm_uri: schema.string({ description: "`realm_url`'s name before feature level 257, which clients still read." }),
        realm_name: schema.string(),
        realm_icon: schema.string(),
        realm_description: schema.string(),
        realm_web_public_access_enabled: schema.boolean(),
      },
    ),
  }),
};

export function serverSettingsRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, ctx } = services;

  serve(
    router,
    serverSettingsEndpoints.get,
    route(async (req, res) => {
      const authentication_methods = {
        password: true,
        dev: ctx.devMode,
        email: true,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        google: false,
        apple: false,
        saml: false,
        openid_connect: false,
      };
      const settings: Record<string, unknown> = {
        authentication_methods,
        external_authentication_methods: [],
        ...zulipVersionFields(),
        service_version: ZULIP_VERSION,
        push_notifications_enabled: false,
        is_incompatible: false,
        email_auth_enabled: true,
        require_email_format_usernames: true,
      };
      const subdomain = requestSubdomain(req, ctx.externalHost);
      const realm = await prisma.realm.findUnique({ where: { string_id: subdomain } });
      // A host naming no organization is a mistyped address: say so, as Zulip does, rather than
      // answer as if it were the server's root (which may host none and still answer).
      if (!realm && subdomain !== "") throw new NonexistentSubdomainError();
      if (realm) {
        const url = realmUri(subdomain, ctx.externalHost, requestProtocol(req));
        Object.assign(settings, {
          realm_url: url,
          realm_uri: url,
          realm_name: realm.name,
          realm_icon: "/static/images/logo/zulip-icon-128x128.png",
          // Markdown to HTML; raw HTML in the description is escaped, never passed through.
          realm_description: realm.description === "" ? "" : renderMarkdown(realm.description).html,
          // Whether spectators may read its web-public streams (feature level 116).
          realm_web_public_access_enabled: await spectatorsAllowed(prisma, realm, ctx),
        });
      }
      success(res, settings);
    }),
  );
  return router;
}
