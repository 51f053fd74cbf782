import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest, JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkLinkifier, checkUrlTemplate, compileLinkifierPattern, formatStringToTemplate, templateToFormatString } from "../lib/linkifiers.ts";
import { isAdmin } from "../lib/roles.ts";
import { realmLinkifiers } from "../queries/linkifiers.ts";
import { activeUserIds } from "../queries/users.ts";

type Reader = Pick<PrismaClient, "$queryRaw">;

/** The contract's Linkifier tuples: [pattern, url_format_string, id]. */
export async function linkifierTuples(db: Reader, realmId: number): Promise<Array<[string, string, number]>> {
  return (await realmLinkifiers(db, realmId)).map((l) => [l.pattern, l.url_format_string, l.id]);
}

/** Zulip 9.0's linkifiers (feature level 176): `{pattern, url_template, id}` in their order. */
export async function linkifierDicts(db: Reader, realmId: number): Promise<Array<{ pattern: string; url_template: string; id: number }>> {
  return (await realmLinkifiers(db, realmId)).map((l) => ({ pattern: l.pattern, url_template: l.url_template ?? formatStringToTemplate(l.url_format_string), id: l.id }));
}

/**
 * Each change goes to everyone as Zulip 9.0's `realm_linkifiers` and as 3.x's `realm_filters`
 * (tuples), which clients of each era follow.
 */
async function notifyLinkifiers(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  const users = await activeUserIds(tx, realmId);
  events.send({ type: "realm_linkifiers", realm_linkifiers: await linkifierDicts(tx, realmId) }, users);
  events.send({ type: "realm_filters", realm_filters: await linkifierTuples(tx, realmId) }, users);
}

/** A linkifier's URL in both forms: from Zulip 9.0's url_template, or from 3.x's url_format_string. */
export type LinkifierUrl = { urlTemplate: string } | { urlFormatString: string };

function checkedUrl(pattern: string, url: LinkifierUrl): { url_template: string; url_format_string: string } {
  if ("urlTemplate" in url) {
    const urlTemplate = url.urlTemplate.trim();
    checkUrlTemplate(urlTemplate, compileLinkifierPattern(pattern).groups);
    return { url_template: urlTemplate, url_format_string: templateToFormatString(urlTemplate) };
  }
  const urlFormatString = url.urlFormatString.trim();
  checkLinkifier(pattern, urlFormatString);
  return { url_template: formatStringToTemplate(urlFormatString), url_format_string: urlFormatString };
}

function checkAdmin(actor: Actor): void {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
}

async function checkPatternAvailable(tx: Tx, realmId: number, pattern: string, exceptId?: number): Promise<void> {
  const existing = await tx.realmFilter.findFirst({ where: { realm_id: realmId, pattern, ...(exceptId === undefined ? {} : { NOT: { id: exceptId } }) } });
  if (existing) throw badRequest("Realm filter with this Realm and Pattern already exists.");
}

/** POST /realm/filters (Zulip's do_add_linkifier): administrators only; last in the order. */
export async function addLinkifier(tx: Tx, events: EventRecorder, actor: Actor, pattern: string, url: LinkifierUrl | string): Promise<number> {
  checkAdmin(actor);
  pattern = pattern.trim();
  const urls = checkedUrl(pattern, typeof url === "string" ? { urlFormatString: url } : url);
  // One change to a realm's linkifiers at a time, so orders and patterns do not collide.
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  await checkPatternAvailable(tx, actor.realm_id, pattern);
  const [{ max }] = await tx.$queryRaw<Array<{ max: number | null }>>`SELECT max("order") AS max FROM realm_filter WHERE realm_id = ${actor.realm_id}`;
  const created = await tx.realmFilter.create({ data: { realm_id: actor.realm_id, pattern, ...urls, order: max === null ? 0 : max + 1 } });
  await notifyLinkifiers(tx, events, actor.realm_id);
  return created.id;
}

/** PATCH /realm/filters/{id} (Zulip's do_update_linkifier, feature level 57): a new pattern and URL template. */
export async function updateLinkifier(tx: Tx, events: EventRecorder, actor: Actor, filterId: number, pattern: string, url: LinkifierUrl): Promise<void> {
  checkAdmin(actor);
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  const linkifier = await tx.realmFilter.findFirst({ where: { id: filterId, realm_id: actor.realm_id } });
  if (!linkifier) throw new JsonableError("Linkifier not found.");
  pattern = pattern.trim();
  const urls = checkedUrl(pattern, url);
  await checkPatternAvailable(tx, actor.realm_id, pattern, linkifier.id);
  await tx.realmFilter.update({ where: { id: linkifier.id }, data: { pattern, ...urls } });
  await notifyLinkifiers(tx, events, actor.realm_id);
}

/** PATCH /realm/linkifiers (Zulip's check_reorder_linkifiers, feature level 202): every linkifier's id once, in the new order. */
export async function reorderLinkifiers(tx: Tx, events: EventRecorder, actor: Actor, orderedIds: number[]): Promise<void> {
  checkAdmin(actor);
  const wanted = new Set(orderedIds);
  if (wanted.size < orderedIds.length) throw new JsonableError("The ordered list must not contain duplicated linkifiers");
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  const existing = await tx.realmFilter.findMany({ where: { realm_id: actor.realm_id }, select: { id: true } });
  if (existing.length !== wanted.size || !existing.every((l) => wanted.has(l.id))) {
    throw new JsonableError("The ordered list must enumerate all existing linkifiers exactly once");
  }
  if (existing.length === 0) return;
  await tx.$executeRaw`
    UPDATE realm_filter f SET "order" = o.ord - 1
    FROM unnest(${orderedIds}::int[]) WITH ORDINALITY AS o(id, ord)
    WHERE f.id = o.id AND f.realm_id = ${actor.realm_id}`;
  await notifyLinkifiers(tx, events, actor.realm_id);
}

/** DELETE /realm/filters/{id} (Zulip's do_remove_linkifier): administrators only. */
export async function removeLinkifier(tx: Tx, events: EventRecorder, actor: Actor, filterId: number): Promise<void> {
  checkAdmin(actor);
  const deleted = await tx.realmFilter.deleteMany({ where: { id: filterId, realm_id: actor.realm_id } });
  if (deleted.count === 0) throw badRequest("Filter not found");
  await notifyLinkifiers(tx, events, actor.realm_id);
}
