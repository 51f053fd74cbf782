-- Browser sessions (the web client: POST /accounts/login/, /json/...): the `sessionid` cookie holds
-- 32 random bytes of which only the SHA-256 is kept, as the primary key, so each request's lookup
-- is one index probe and a copy of the database opens no session. A session lasts 14 days from its
-- last use (renewed at most once an hour); logging out, a password change or reset and the user's
-- deactivation delete the rows. Expired rows are swept by the worker.
CREATE TABLE "browser_session" (
    "id" TEXT NOT NULL,
    "user_id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "last_used_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "user_agent" TEXT NOT NULL DEFAULT '',
    CONSTRAINT "browser_session_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "browser_session_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE,
    CONSTRAINT "browser_session_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE
);
CREATE INDEX "browser_session_user_id_idx" ON "browser_session"("user_id");
CREATE INDEX "browser_session_realm_id_idx" ON "browser_session"("realm_id");
CREATE INDEX "browser_session_expires_at_idx" ON "browser_session"("expires_at");
