-- The email domains an organization takes its users from (Zulip's RealmDomain, /realm/domains;
-- owners only since feature level 143). With the realm's emails_restricted_to_domains, only
-- addresses at one of these domains (or below one that allows subdomains) may join.
CREATE TABLE "realm_domain" (
  "id" SERIAL PRIMARY KEY,
  "realm_id" INTEGER NOT NULL REFERENCES "realm"("id") ON DELETE CASCADE,
  "domain" TEXT NOT NULL,
  "allow_subdomains" BOOLEAN NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX "realm_domain_realm_id_domain_key" ON "realm_domain"("realm_id", "domain");
