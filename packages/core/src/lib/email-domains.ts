// Which addresses an organization takes for its users (Zulip's get_realm_email_validator): with
// emails_restricted_to_domains, only addresses at one of its domains (/realm/domains), or below one
// that allows subdomains, and none with a `+`; otherwise any address but a disposable one while
// disallow_disposable_email_addresses is on (the default, as in Zulip), against the public list Zulip uses.
import { readFileSync } from "node:fs";
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Realm } from "../models.ts";
import { getRealmDomains } from "../queries/realm-domains.ts";

let disposable: Set<string> | null = null;

/** About 120,000 names: read at the first check, not at start. */
function disposableDomains(): Set<string> {
  disposable ??= new Set(JSON.parse(readFileSync(require.resolve("disposable-email-domains"), "utf8")) as string[]);
  return disposable;
}

export function isDisposableEmail(email: string): boolean {
  return disposableDomains().has(email.slice(email.lastIndexOf("@") + 1).toLowerCase());
}

/** Why an organization refuses an address (Zulip's exceptions), or null. */
export type EmailRefusal = "domain" | "disposable" | "plus" | null;

type RealmEmailRules = Pick<Realm, "id" | "disallow_disposable_email_addresses" | "emails_restricted_to_domains">;

/** The organization's check of addresses, its domains read once (for a list of invitees). */
export async function realmEmailValidator(db: Pick<Tx, "$queryRaw">, realm: RealmEmailRules): Promise<(email: string) => EmailRefusal> {
  if (!realm.emails_restricted_to_domains) {
    return (email) => (realm.disallow_disposable_email_addresses && isDisposableEmail(email) ? "disposable" : null);
  }
  const rows = await getRealmDomains(db, realm.id);
  const domains = new Set(rows.map((row) => row.domain));
  const withSubdomains = new Set(rows.filter((row) => row.allow_subdomains).map((row) => row.domain));
  return (email) => {
    const at = email.lastIndexOf("@");
    if (email.slice(0, at).includes("+")) return "plus";
    let domain = email.slice(at + 1).toLowerCase();
    if (domains.has(domain)) return null;
    // Any parent domain that allows its subdomains.
    for (let dot = domain.indexOf("."); dot >= 0; dot = domain.indexOf(".")) {
      domain = domain.slice(dot + 1);
      if (withSubdomains.has(domain)) return null;
    }
    return "domain";
  };
}

/** Refuses an address the organization does not take for a new user, in Zulip's words (create_user_backend). */
export async function checkEmailAllowedForRealm(db: Pick<Tx, "$queryRaw">, realm: RealmEmailRules, email: string): Promise<void> {
  const refusal = (await realmEmailValidator(db, realm))(email);
  if (refusal === "domain") throw badRequest(`Email '${email}' not allowed in this organization`);
  if (refusal === "disposable") throw badRequest("Disposable email addresses are not allowed in this organization");
  if (refusal === "plus") throw badRequest("Email addresses containing + are not allowed.");
}
