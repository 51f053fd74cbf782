// Saved snippets (Zulip's zerver/actions/saved_snippets.py; feature levels 297 and 368): a user's
// own reusable texts, a title and a content each. Every event goes to the owner alone.
import { leanSql, Prisma, type Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError } from "../errors.ts";
import { MAX_MESSAGE_LENGTH } from "../lib/message-limits.ts";
import type { Actor } from "../models.ts";

/** Zulip's SavedSnippet.MAX_TITLE_LENGTH. */
export const MAX_SAVED_SNIPPET_TITLE_LENGTH = 60;
/** Zulip's content bound: a message's. */
export const MAX_SAVED_SNIPPET_CONTENT_LENGTH = MAX_MESSAGE_LENGTH;
/** Zulip sets no count; this server keeps at most this many a user (what GET /saved_snippets and /register list). */
export const MAX_SAVED_SNIPPETS = 1000;

/** Zulip's SavedSnippet.to_api_dict. */
export interface SavedSnippetDict {
  id: number;
  title: string;
  content: string;
  /** Unix seconds. */
  date_created: number;
}

type Db = Parameters<typeof leanSql>[0];

const COLUMNS = Prisma.sql`id, title, content, floor(extract(epoch FROM date_created))::float8 AS date_created`;

function toDict(row: SavedSnippetDict): SavedSnippetDict {
  return { id: row.id, title: row.title, content: row.content, date_created: Number(row.date_created) };
}

/** GET /saved_snippets and /register's saved_snippets: oldest first. */
export async function getSavedSnippets(db: Db, userId: number): Promise<SavedSnippetDict[]> {
  const rows = await leanSql(db).query<SavedSnippetDict>(Prisma.sql`SELECT ${COLUMNS} FROM saved_snippet WHERE user_id = ${userId} ORDER BY id LIMIT ${MAX_SAVED_SNIPPETS}`);
  return rows.map(toDict);
}

async function getSavedSnippet(db: Db, userId: number, id: number): Promise<SavedSnippetDict | null> {
  const rows = await leanSql(db).query<SavedSnippetDict>(Prisma.sql`SELECT ${COLUMNS} FROM saved_snippet WHERE user_id = ${userId} AND id = ${id}`);
  return rows[0] ? toDict(rows[0]) : null;
}

/**
 * Zulip's StringConstraints(min_length=1, max_length=..., strip_whitespace=True): the text is
 * stripped first, then must be neither blank nor too long.
 */
export function cleanSnippetText(name: "title" | "content", value: string): string {
  const text = value.trim();
  const limit = name === "title" ? MAX_SAVED_SNIPPET_TITLE_LENGTH : MAX_SAVED_SNIPPET_CONTENT_LENGTH;
  if (text === "") throw new JsonableError(`${name} cannot be blank`);
  if ([...text].length > limit) throw new JsonableError(`${name} is too long (limit: ${limit} characters)`);
  return text;
}

function notFound(): JsonableError {
  return new JsonableError("Saved snippet does not exist.", { status: 404 });
}

/** POST /saved_snippets (Zulip's do_create_saved_snippet): answers the new snippet's id. */
export async function createSavedSnippet(tx: Tx, events: EventRecorder, actor: Actor, title: string, content: string): Promise<number> {
  const cleanTitle = cleanSnippetText("title", title);
  const cleanContent = cleanSnippetText("content", content);
  // The user's row, locked, counts one request at a time against the limit.
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${actor.id} FOR UPDATE`;
  const counted = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM saved_snippet WHERE user_id = ${actor.id}`;
  if (counted[0].n >= MAX_SAVED_SNIPPETS) throw badRequest(`Too many saved snippets (limit: ${MAX_SAVED_SNIPPETS})`);
  const rows = await tx.$queryRaw<{ id: number }[]>`
    INSERT INTO saved_snippet (realm_id, user_id, title, content) VALUES (${actor.realm_id}, ${actor.id}, ${cleanTitle}, ${cleanContent}) RETURNING id`;
  const snippet = (await getSavedSnippet(tx, actor.id, rows[0].id))!;
  events.send({ type: "saved_snippets", op: "add", saved_snippet: snippet }, [actor.id]);
  return snippet.id;
}

/** PATCH /saved_snippets/{id} (Zulip's do_edit_saved_snippet): the fields given change; none, nothing happens. */
export async function editSavedSnippet(tx: Tx, events: EventRecorder, actor: Actor, id: number, changes: { title?: string; content?: string }): Promise<void> {
  const title = changes.title === undefined ? undefined : cleanSnippetText("title", changes.title);
  const content = changes.content === undefined ? undefined : cleanSnippetText("content", changes.content);
  // Zulip answers success without looking for the snippet when nothing is to change.
  if (title === undefined && content === undefined) return;
  const updated = await tx.$executeRaw`
    UPDATE saved_snippet SET title = coalesce(${title ?? null}::text, title), content = coalesce(${content ?? null}::text, content)
    WHERE id = ${id} AND user_id = ${actor.id}`;
  if (updated === 0) throw notFound();
  events.send({ type: "saved_snippets", op: "update", saved_snippet: (await getSavedSnippet(tx, actor.id, id))! }, [actor.id]);
}

/** DELETE /saved_snippets/{id} (Zulip's do_delete_saved_snippet). */
export async function deleteSavedSnippet(tx: Tx, events: EventRecorder, actor: Actor, id: number): Promise<void> {
  const deleted = await tx.$executeRaw`DELETE FROM saved_snippet WHERE id = ${id} AND user_id = ${actor.id}`;
  if (deleted === 0) throw notFound();
  events.send({ type: "saved_snippets", op: "remove", saved_snippet_id: id }, [actor.id]);
}
