import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkLinkifier, type Linkifier } from "../lib/linkifiers.ts";
import { isAdmin } from "../lib/roles.ts";
import { realmLinkifiers } from "../queries/linkifiers.ts";
import { activeUserIds } from "../queries/users.ts";

type Reader = Pick<PrismaClient, "$queryRaw">;

/** The contract's Linkifier tuples: [pattern, url_format_string, id]. */
export async function linkifierTuples(db: Reader, realmId: number): Promise<Array<[string, string, number]>> {
  return (await realmLinkifiers(db, realmId)).map((l) => [l.pattern, l.url_format_string, l.id]);
}

async function notifyLinkifiers(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  events.send({ type: "realm_filters", realm_filters: await linkifierTuples(tx, realmId) }, await activeUserIds(tx, realmId));
}

/** POST /realm/filters (Zulip's do_add_realm_filter): administrators only. */
export async function addLinkifier(tx: Tx, events: EventRecorder, actor: Actor, pattern: string, urlFormatString: string): Promise<number> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  pattern = pattern.trim();
  urlFormatString = urlFormatString.trim();
  checkLinkifier(pattern, urlFormatString);
  if (await tx.realmFilter.findFirst({ where: { realm_id: actor.realm_id, pattern } })) {
    throw badRequest("Realm filter with this Realm and Pattern already exists.");
  }
  const created = await tx.realmFilter.create({ data: { realm_id: actor.realm_id, pattern, url_format_string: urlFormatString } });
  await notifyLinkifiers(tx, events, actor.realm_id);
  return created.id;
}

/** DELETE /realm/filters/{id} (Zulip's do_remove_realm_filter): administrators only. */
export async function removeLinkifier(tx: Tx, events: EventRecorder, actor: Actor, filterId: number): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const deleted = await tx.realmFilter.deleteMany({ where: { id: filterId, realm_id: actor.realm_id } });
  if (deleted.count === 0) throw badRequest("Filter not found");
  await notifyLinkifiers(tx, events, actor.realm_id);
}
