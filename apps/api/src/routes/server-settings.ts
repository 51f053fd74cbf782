import { Router } from "express";
import { getRealmForSubdomain, realmUri, renderMarkdown } from "@chat/core";
import { requestProtocol, requestSubdomain, route, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

/** The Zulip release whose API this server speaks; the official clients check these two. */
export const ZULIP_VERSION = "3.0";
export const ZULIP_FEATURE_LEVEL = 1;

export function serverSettingsRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, ctx } = services;

  // No authentication, as in Zulip: clients read it before they have credentials.
  router.get(
    "/server_settings",
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
        zulip_version: ZULIP_VERSION,
        zulip_feature_level: ZULIP_FEATURE_LEVEL,
        service_version: ZULIP_VERSION,
        push_notifications_enabled: false,
        is_incompatible: false,
        email_auth_enabled: true,
        require_email_format_usernames: true,
      };
      const subdomain = requestSubdomain(req, ctx.externalHost);
      const realm = await getRealmForSubdomain(prisma, subdomain).catch(() => null);
      if (realm) {
        Object.assign(settings, {
          realm_uri: realmUri(subdomain, ctx.externalHost, requestProtocol(req)),
          realm_name: realm.name,
          realm_icon: "/static/images/logo/zulip-icon-128x128.png",
          // Markdown to HTML; raw HTML in the description is escaped, never passed through.
          realm_description: realm.description === "" ? "" : renderMarkdown(realm.description).html,
          realm_web_public_access_enabled: false,
        });
      }
      success(res, settings);
    }),
  );
  return router;
}
