// An organization's email domains (Zulip's do_add_realm_domain / do_change_realm_domain /
// do_remove_realm_domain): owners only since feature level 143. Every active user gets a
// `realm_domains` event. Removing the last domain also lifts emails_restricted_to_domains, which
// would otherwise let nobody in (as Zulip does).
import type { Tx } from "@chat/db";
import { badRequest, OwnerRequiredError } from "../errors.ts";
import type { EventRecorder } from "../events.ts";
import type { Actor } from "../models.ts";
import { isOwner } from "../lib/roles.ts";
import { activeUserIds } from "../queries/users.ts";

/** Zulip's validate_domain bounds a domain at 255 characters; an organization keeps a few domains. */
export const MAX_DOMAIN_LENGTH = 255;
export const MAX_REALM_DOMAINS = 500;

/** Zulip's validate_domain: why `domain` (already lowered) is not a domain, or null. */
export function domainError(domain: string): string | null {
  if (domain.length === 0) return "Domain can't be empty.";
  if (!domain.includes(".")) return "Domain must have at least one dot (.)";
  if (domain.length > MAX_DOMAIN_LENGTH) return "Domain is too long";
  if (domain.startsWith(".") || domain.endsWith(".")) return "Domain cannot start or end with a dot (.)";
  for (const part of domain.split(".")) {
    if (part === "") return "Consecutive '.' are not allowed.";
    if (part.startsWith("-") || part.endsWith("-")) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(part)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}

function checkOwner(actor: Actor): void {
  if (!isOwner(actor)) throw new OwnerRequiredError();
}

async function lockRealm(tx: Tx, realmId: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${realmId} FOR UPDATE`;
}

const notFound = (domain: string) => badRequest(`No entry found for domain ${domain}.`);

/** POST /realm/domains: returns the new row's id and domain (Zulip's `new_domain`). */
export async function addRealmDomain(tx: Tx, events: EventRecorder, actor: Actor, rawDomain: string, allowSubdomains: boolean): Promise<[number, string]> {
  checkOwner(actor);
  const domain = rawDomain.trim().toLowerCase();
  const error = domainError(domain);
  if (error !== null) throw badRequest(`Invalid domain: ${error}`);
  await lockRealm(tx, actor.realm_id);
  const [{ n }] = await tx.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM realm_domain WHERE realm_id = ${actor.realm_id}`;
  const [existing] = await tx.$queryRaw<Array<{ id: number }>>`SELECT id FROM realm_domain WHERE realm_id = ${actor.realm_id} AND domain = ${domain}`;
  if (existing) throw badRequest(`The domain ${domain} is already a part of your organization.`);
  if (n >= MAX_REALM_DOMAINS) throw badRequest(`An organization can have at most ${MAX_REALM_DOMAINS} domains.`);
  const [row] = await tx.$queryRaw<Array<{ id: number }>>`
    INSERT INTO realm_domain (realm_id, domain, allow_subdomains) VALUES (${actor.realm_id}, ${domain}, ${allowSubdomains}) RETURNING id`;
  events.send({ type: "realm_domains", op: "add", realm_domain: { domain, allow_subdomains: allowSubdomains } }, await activeUserIds(tx, actor.realm_id));
  return [row.id, domain];
}

/** PATCH /realm/domains/{domain}: the domain as stored (Zulip looks it up exactly). */
export async function changeRealmDomain(tx: Tx, events: EventRecorder, actor: Actor, domain: string, allowSubdomains: boolean): Promise<void> {
  checkOwner(actor);
  await lockRealm(tx, actor.realm_id);
  const updated = await tx.$queryRaw<Array<{ id: number }>>`
    UPDATE realm_domain SET allow_subdomains = ${allowSubdomains} WHERE realm_id = ${actor.realm_id} AND domain = ${domain} RETURNING id`;
  if (updated.length === 0) throw notFound(domain);
  events.send({ type: "realm_domains", op: "change", realm_domain: { domain, allow_subdomains: allowSubdomains } }, await activeUserIds(tx, actor.realm_id));
}

/** DELETE /realm/domains/{domain}. */
export async function removeRealmDomain(tx: Tx, events: EventRecorder, actor: Actor, domain: string): Promise<void> {
  checkOwner(actor);
  await lockRealm(tx, actor.realm_id);
  const removed = await tx.$queryRaw<Array<{ id: number }>>`DELETE FROM realm_domain WHERE realm_id = ${actor.realm_id} AND domain = ${domain} RETURNING id`;
  if (removed.length === 0) throw notFound(domain);
  const everyone = await activeUserIds(tx, actor.realm_id);
  const [{ left }] = await tx.$queryRaw<Array<{ left: number }>>`SELECT count(*)::int AS left FROM realm_domain WHERE realm_id = ${actor.realm_id}`;
  if (left === 0) {
    const lifted = await tx.$queryRaw<Array<{ id: number }>>`
      UPDATE realm SET emails_restricted_to_domains = false WHERE id = ${actor.realm_id} AND emails_restricted_to_domains RETURNING id`;
    if (lifted.length > 0) events.send({ type: "realm", op: "update", property: "emails_restricted_to_domains", value: false }, everyone);
  }
  events.send({ type: "realm_domains", op: "remove", domain }, everyone);
}
