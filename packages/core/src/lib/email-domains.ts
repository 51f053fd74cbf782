// Which addresses an organization takes for its users (Zulip's email_allowed_for_realm). This
// server keeps no realm domains (realm_domains is empty, emails_restricted_to_domains stays false
// and PATCH /realm does not take it), so what remains is disallow_disposable_email_addresses
// (on by default, as in Zulip), against the same public list Zulip uses.
import { readFileSync } from "node:fs";
import { badRequest } from "../errors.ts";
import type { Realm } from "../models.ts";

let disposable: Set<string> | null = null;

/** About 120,000 names: read at the first check, not at start. */
function disposableDomains(): Set<string> {
  disposable ??= new Set(JSON.parse(readFileSync(require.resolve("disposable-email-domains"), "utf8")) as string[]);
  return disposable;
}

export function isDisposableEmail(email: string): boolean {
  return disposableDomains().has(email.slice(email.lastIndexOf("@") + 1).toLowerCase());
}

/** Refuses an address the organization does not take for a new user, in Zulip's words. */
export function checkEmailAllowedForRealm(realm: Pick<Realm, "disallow_disposable_email_addresses">, email: string): void {
  if (realm.disallow_disposable_email_addresses && isDisposableEmail(email)) {
    throw badRequest("Disposable email addresses are not allowed in this organization");
  }
}
