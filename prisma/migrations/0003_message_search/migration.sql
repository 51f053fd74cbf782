-- Full-text search for the `search` narrow operator: the same expression the query uses, so the
-- planner can use the index. (An expression index: Prisma's schema language cannot state it.)
CREATE INDEX "message_search_idx" ON "message" USING gin (to_tsvector('english', "subject" || ' ' || "content"));
