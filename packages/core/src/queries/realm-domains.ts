// An organization's email domains (Zulip's get_realm_domains): GET /realm/domains, /register's
// realm_domains, and the sign-up check (lib/email-domains.ts).
import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export interface RealmDomainDict {
  domain: string;
  allow_subdomains: boolean;
}

export async function getRealmDomains(db: Reader, realmId: number): Promise<RealmDomainDict[]> {
  return db.$queryRaw<RealmDomainDict[]>`SELECT domain, allow_subdomains FROM realm_domain WHERE realm_id = ${realmId} ORDER BY id`;
}
