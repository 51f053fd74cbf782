-- Password reset links (POST /accounts/password/reset/, the CLI): a random token per link, of
-- which only its SHA-256 is kept, valid until expires_at and used at most once. Setting a password
-- marks every outstanding token of the user used. Rows are swept by the worker a day after they
-- expire.
CREATE TABLE "password_reset_token" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "used_at" TIMESTAMPTZ(6),
    CONSTRAINT "password_reset_token_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "password_reset_token_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE
);
CREATE UNIQUE INDEX "password_reset_token_token_hash_key" ON "password_reset_token"("token_hash");
CREATE INDEX "password_reset_token_user_id_idx" ON "password_reset_token"("user_id");
CREATE INDEX "password_reset_token_expires_at_idx" ON "password_reset_token"("expires_at");
