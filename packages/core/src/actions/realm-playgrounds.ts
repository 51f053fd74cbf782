// Code playgrounds (Zulip's zerver/actions/realm_playgrounds.py, feature levels 49 and 196): for a
// code block's language, a named site the web app offers to open the code in, from an RFC 6570
// URL template whose only variable is `code`. Administrators add and remove them; every change
// goes to everyone as `realm_playgrounds` with the whole list.
import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin } from "../lib/roles.ts";
import { expandUrlTemplate, isValidUrlTemplate, urlTemplateVariables } from "../lib/url-templates.ts";
import { activeUserIds } from "../queries/users.ts";

/** Zulip's RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH. */
export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
/** Zulip leaves these unbounded; a bound keeps a list every client gets small. */
export const MAX_PLAYGROUND_NAME_LENGTH = 100;
export const MAX_PLAYGROUND_URL_TEMPLATE_LENGTH = 1000;
export const MAX_PLAYGROUNDS_PER_REALM = 200;

export interface RealmPlaygroundDict {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

/** The realm's playgrounds, oldest first (Zulip's get_realm_playgrounds). */
export async function getRealmPlaygrounds(db: Pick<PrismaClient, "$queryRaw">, realmId: number): Promise<RealmPlaygroundDict[]> {
  return db.$queryRaw<RealmPlaygroundDict[]>`SELECT id, name, pygments_language, url_template FROM realm_playground WHERE realm_id = ${realmId} ORDER BY id`;
}

async function notifyPlaygrounds(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  events.send({ type: "realm_playgrounds", realm_playgrounds: await getRealmPlaygrounds(tx, realmId) }, await activeUserIds(tx, realmId));
}

/** Zulip's ValidationFailureError, by its message (its per-field `errors` are left out: this API's `errors` is a list). */
function validationFailure(_field: string, msg: string): JsonableError {
  return new JsonableError(msg);
}

function capped(name: string, value: string, limit: number): void {
  if (value.length > limit) throw new JsonableError(`${name} is too long (limit: ${limit} characters)`);
}

/** Zulip's check_pygments_language and the model's url_template checks. */
function checkPlayground(name: string, pygmentsLanguage: string, urlTemplate: string): void {
  capped("name", name, MAX_PLAYGROUND_NAME_LENGTH);
  capped("pygments_language", pygmentsLanguage, MAX_PYGMENTS_LANGUAGE_LENGTH);
  capped("url_template", urlTemplate, MAX_PLAYGROUND_URL_TEMPLATE_LENGTH);
  // Zulip's pattern [ a-zA-Z0-9_+-./#]: +-. is a range, so commas pass too.
  if (!/^[ a-zA-Z0-9_+,\-./#]*$/.test(pygmentsLanguage)) throw new JsonableError("Invalid characters in pygments language");
  if (name.trim() === "") throw validationFailure("name", "This field cannot be blank.");
  if (pygmentsLanguage.trim() === "") throw validationFailure("pygments_language", "This field cannot be blank.");
  if (urlTemplate.trim() === "" || !isValidUrlTemplate(urlTemplate)) throw validationFailure("url_template", "Invalid URL template.");
  const variables = urlTemplateVariables(urlTemplate);
  if (!variables.includes("code")) throw validationFailure("__all__", 'Missing the required variable "code" in the URL template');
  if (variables.length !== 1) throw validationFailure("__all__", '"code" should be the only variable present in the URL template');
  // Stricter than Zulip: clients open these, so they are web addresses.
  if (!/^https?:\/\/[^/?#\s]/i.test(expandUrlTemplate(urlTemplate, { code: "x" }))) throw validationFailure("url_template", "Invalid URL template.");
}

/** Zulip's require_realm_admin, which it checks before reading the request's parameters. */
export function checkRealmAdministrator(actor: Actor): void {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
}

/** POST /realm/playgrounds (Zulip's check_add_realm_playground): administrators only. */
export async function addRealmPlayground(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  playground: { name: string; pygmentsLanguage: string; urlTemplate: string },
): Promise<number> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const name = playground.name.trim();
  const pygmentsLanguage = playground.pygmentsLanguage.trim();
  const urlTemplate = playground.urlTemplate.trim();
  checkPlayground(name, pygmentsLanguage, urlTemplate);
  // One change to a realm's playgrounds at a time, so the uniqueness check and the count hold.
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  const [{ count, taken }] = await tx.$queryRaw<Array<{ count: number; taken: boolean }>>`
    SELECT count(*)::int AS count, coalesce(bool_or(pygments_language = ${pygmentsLanguage} AND name = ${name}), false) AS taken
    FROM realm_playground WHERE realm_id = ${actor.realm_id}`;
  if (taken) throw validationFailure("__all__", "Realm playground with this Realm, Pygments language and Name already exists.");
  if (count >= MAX_PLAYGROUNDS_PER_REALM) throw new JsonableError(`An organization can have at most ${MAX_PLAYGROUNDS_PER_REALM} code playgrounds.`);
  const created = await tx.realmPlayground.create({ data: { realm_id: actor.realm_id, name, pygments_language: pygmentsLanguage, url_template: urlTemplate } });
  await notifyPlaygrounds(tx, events, actor.realm_id);
  return created.id;
}

/** DELETE /realm/playgrounds/{playground_id} (Zulip's do_remove_realm_playground). */
export async function removeRealmPlayground(tx: Tx, events: EventRecorder, actor: Actor, playgroundId: number): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const deleted = await tx.realmPlayground.deleteMany({ where: { id: playgroundId, realm_id: actor.realm_id } });
  if (deleted.count === 0) throw new JsonableError("Invalid playground");
  await notifyPlaygrounds(tx, events, actor.realm_id);
}
