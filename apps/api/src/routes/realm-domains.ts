import { Router } from "express";
import { addRealmDomain, changeRealmDomain, getRealmDomains, MAX_DOMAIN_LENGTH, removeRealmDomain } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

const DOMAIN_PATH = { domain: { schema: { type: "string", maxLength: MAX_DOMAIN_LENGTH }, description: "The domain, as listed." } };
/** Zulip's `allow_subdomains: Json[bool]`. */
const allowSubdomains = params.bool().describe("Whether addresses at the domain's subdomains are allowed too.");
const OWNERS = "Organization owners only (feature level 143).";

export const realmDomainEndpoints = {
  list: endpoint({
    method: "get",
    path: "/realm/domains",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "The email domains of the organization",
    params: {},
    response: successBody({ domains: schema.array(schema.object({ domain: schema.string(), allow_subdomains: schema.boolean() })) }),
  }),
  add: endpoint({
    method: "post",
    path: "/realm/domains",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Add an email domain to the organization",
    description: OWNERS,
    params: { domain: params.string().maxLength(1000).describe("The domain (lowered, trimmed)."), allow_subdomains: allowSubdomains },
    response: successBody({ new_domain: schema.array(schema.anyOf(schema.integer(), schema.string())) }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  change: endpoint({
    method: "patch",
    path: "/realm/domains/{domain}",
    pathParams: DOMAIN_PATH,
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Change whether an email domain's subdomains are allowed",
    description: OWNERS,
    params: { allow_subdomains: allowSubdomains },
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  remove: endpoint({
    method: "delete",
    path: "/realm/domains/{domain}",
    pathParams: DOMAIN_PATH,
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Remove an email domain from the organization",
    description: `${OWNERS} Removing the last one also turns emails_restricted_to_domains off.`,
    params: {},
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

export function realmDomainRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = realmDomainEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { domains: await getRealmDomains(prisma, actorOf(res).realm_id) });
    }),
  );

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.add.params);
      const newDomain = await actions.run(originOf(req, actor), (tx, events) => addRealmDomain(tx, events, actor, p.domain, p.allow_subdomains));
      success(res, { new_domain: newDomain });
    }),
  );

  serve(
    router,
    E.change,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.change.params);
      const domain = String(req.params.domain);
      await actions.run(originOf(req, actor), (tx, events) => changeRealmDomain(tx, events, actor, domain, p.allow_subdomains));
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const domain = String(req.params.domain);
      await actions.run(originOf(req, actor), (tx, events) => removeRealmDomain(tx, events, actor, domain));
      success(res);
    }),
  );
  return router;
}
