-- Invitations (POST /invites, POST /invites/multiuse) and who may send them.
--
-- realm.invite_to_realm_policy: who may send email invitations (Zulip's, feature level 50):
-- 1 members, 2 administrators, 3 full members, 4 moderators, 6 nobody. realm.max_invites: the
-- email invitations the organization may send in a day (null: the server's default).
--
-- An invitation is an email invitation (one address, used once) or a reusable link (is_multiuse,
-- used by anyone the organization takes an address from). Its link is `/join/<key>/`, where the
-- key is 15 random bytes in lowercase base32 (24 characters, as Zulip's confirmation keys):
-- only the key's SHA-256 is kept for an email invitation (resending one makes a new key and ends
-- the old link); a reusable link's key is kept too (link_key), since GET /invites lists its URL.
-- status: 0 pending, 1 used (an email invitation accepted), 2 revoked (withdrawn, or another
-- invitation of the same address accepted). expires_at null: never expires.
ALTER TABLE "realm" ADD COLUMN "invite_to_realm_policy" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "realm" ADD COLUMN "max_invites" INTEGER;

CREATE TABLE "invite" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "referred_by_id" INTEGER NOT NULL,
    "is_multiuse" BOOLEAN NOT NULL DEFAULT false,
    "email" TEXT,
    "key_hash" TEXT NOT NULL,
    "link_key" TEXT,
    "invited_as" INTEGER NOT NULL DEFAULT 400,
    "stream_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "include_realm_default_subscriptions" BOOLEAN NOT NULL DEFAULT false,
    "notify_referrer_on_join" BOOLEAN NOT NULL DEFAULT true,
    "invited_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "expires_at" TIMESTAMPTZ(6),
    "status" INTEGER NOT NULL DEFAULT 0,
    "created_user_id" INTEGER,
    CONSTRAINT "invite_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "invite_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE,
    CONSTRAINT "invite_referred_by_id_fkey" FOREIGN KEY ("referred_by_id") REFERENCES "user_profile"("id") ON DELETE CASCADE,
    CONSTRAINT "invite_created_user_id_fkey" FOREIGN KEY ("created_user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL
);
CREATE UNIQUE INDEX "invite_key_hash_key" ON "invite"("key_hash");
CREATE INDEX "invite_realm_id_status_idx" ON "invite"("realm_id", "status");
CREATE INDEX "invite_referred_by_id_idx" ON "invite"("referred_by_id");
CREATE INDEX "invite_realm_id_invited_at_idx" ON "invite"("realm_id", "invited_at");
