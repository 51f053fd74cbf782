// Drafts synchronised between a user's clients (Zulip's zerver/lib/drafts.py; feature level 87).
// Only while the user's enable_drafts_synchronization is on; turning it off deletes them, with no
// events (the clients keep their own copies: only the synchronising stops).
import { leanSql, Prisma, type Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError } from "../errors.ts";
import { isGuest } from "../lib/roles.ts";
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "../lib/message-limits.ts";
import type { Actor } from "../models.ts";
import { getDraft, MAX_DRAFTS, type DraftDict } from "../queries/drafts.ts";
import { findStreamWithSubscription } from "../queries/streams.ts";

/** A draft as a client sends it (POST /drafts, PATCH /drafts/{draft_id}). */
export interface DraftData {
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  timestamp?: number | null;
}

/** What each draft may hold: the bounds its JSON is read with. */
export const DRAFT_BOUNDS = { maxItems: MAX_DRAFTS, maxStringLength: MAX_MESSAGE_LENGTH };

/** Unix seconds a draft's timestamp may name at most (Postgres' integer, the year 2038). */
const MAX_TIMESTAMP = 2_147_483_647;

interface CleanDraft {
  type: DraftDict["type"];
  to: number[];
  topic: string;
  content: string;
  /** Unix seconds, to the microsecond. */
  at: number;
}

/** Zulip's draft_endpoint: every draft endpoint refuses a user who turned synchronising off. */
export function checkDraftsEnabled(actor: Actor): void {
  if (!actor.enable_drafts_synchronization) throw badRequest("User has disabled synchronizing drafts.");
}

/** Locks the user's row (so a concurrent switch-off, which deletes every draft, is seen) and checks the setting again. */
async function lockUserWithDrafts(tx: Tx, actor: Actor): Promise<void> {
  const rows = await tx.$queryRaw<{ enabled: boolean }[]>`SELECT enable_drafts_synchronization AS enabled FROM user_profile WHERE id = ${actor.id} FOR UPDATE`;
  if (!rows[0]?.enabled) throw badRequest("User has disabled synchronizing drafts.");
}

/** Zulip's truncate_topic: a topic too long keeps its start and ends with an ellipsis. */
function truncateTopic(topic: string): string {
  const chars = [...topic];
  return chars.length > MAX_TOPIC_LENGTH ? `${chars.slice(0, MAX_TOPIC_LENGTH - 3).join("")}...` : topic;
}

/** Zulip's normalize_body: no trailing whitespace nor leading blank lines, and something left. */
function normalizeContent(content: string): string {
  const body = content.trimEnd().replace(/^\n+/, "");
  if (body === "") throw badRequest("Message must not be empty");
  if (body.includes("\u0000")) throw badRequest("Message must not contain null bytes");
  return body;
}

/**
 * Zulip's further_validated_draft_dict: the stream must be one the user can read; the people must
 * be the realm's. A private draft to nobody is kept as a draft to nowhere (type "").
 */
async function cleanDraft(tx: Tx, actor: Actor, draft: DraftData): Promise<CleanDraft> {
  const content = normalizeContent(draft.content);
  const timestamp = draft.timestamp ?? Date.now() / 1000;
  if (timestamp < 0) throw badRequest("Timestamp must not be negative.");
  if (timestamp > MAX_TIMESTAMP) throw badRequest("Invalid timestamp");
  const at = Math.round(timestamp * 1e6) / 1e6;
  if (draft.type === "stream") {
    const topic = truncateTopic(draft.topic);
    if (topic.includes("\u0000")) throw badRequest("Topic must not contain null bytes");
    if (draft.to.length !== 1) throw badRequest("Must specify exactly 1 channel ID for channel messages");
    // Zulip's access_stream_by_id: an active stream the user is subscribed to, or a public one for a non-guest.
    const found = await findStreamWithSubscription(tx, actor.realm_id, draft.to[0], [actor.id]);
    if (!found || (!found.subscribed && (found.stream.invite_only || isGuest(actor)))) throw badRequest("Invalid channel ID");
    return { type: "stream", to: [found.stream.id], topic, content, at };
  }
  if (draft.type === "private" && draft.to.length > 0) {
    const ids = [...new Set(draft.to)];
    const rows = await leanSql(tx).query<{ id: number }>(Prisma.sql`SELECT id FROM user_profile WHERE realm_id = ${actor.realm_id} AND id = ANY(${ids}::int[])`);
    const found = new Set(rows.map((row) => row.id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    // As the conversation's recipient shows it: the others, or the user alone for a note to self.
    const others = ids.filter((id) => id !== actor.id).sort((a, b) => a - b);
    return { type: "private", to: others.length > 0 ? others : [actor.id], topic: "", content, at };
  }
  return { type: "", to: [], topic: "", content, at };
}

async function countDrafts(tx: Tx, userId: number): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM draft WHERE user_id = ${userId}`;
  return rows[0].n;
}

/** POST /drafts (Zulip's do_create_drafts): all or none; answers their ids in order. */
export async function createDrafts(tx: Tx, events: EventRecorder, actor: Actor, drafts: DraftData[]): Promise<number[]> {
  await lockUserWithDrafts(tx, actor);
  const clean: CleanDraft[] = [];
  for (const draft of drafts) clean.push(await cleanDraft(tx, actor, draft));
  if (clean.length === 0) return [];
  if ((await countDrafts(tx, actor.id)) + clean.length > MAX_DRAFTS) throw badRequest(`Too many drafts (limit: ${MAX_DRAFTS})`);
  const created: DraftDict[] = [];
  for (const d of clean) {
    const rows = await tx.$queryRaw<{ id: number }[]>`
      INSERT INTO draft (user_id, type, to_ids, topic, content, last_edit_time)
      VALUES (${actor.id}, ${d.type}, ${d.to}::int[], ${d.topic}, ${d.content}, to_timestamp(${d.at}::float8)) RETURNING id`;
    created.push((await getDraft(tx, actor.id, rows[0].id))!);
  }
  events.send({ type: "drafts", op: "add", drafts: created }, [actor.id]);
  return created.map((draft) => draft.id);
}

function draftNotFound(): JsonableError {
  return new JsonableError("Draft does not exist", { status: 404 });
}

/** PATCH /drafts/{draft_id} (Zulip's do_edit_draft): the draft is replaced whole. */
export async function editDraft(tx: Tx, events: EventRecorder, actor: Actor, draftId: number, draft: DraftData): Promise<void> {
  await lockUserWithDrafts(tx, actor);
  if (!(await getDraft(tx, actor.id, draftId))) throw draftNotFound();
  const d = await cleanDraft(tx, actor, draft);
  await tx.$executeRaw`
    UPDATE draft SET type = ${d.type}, to_ids = ${d.to}::int[], topic = ${d.topic}, content = ${d.content}, last_edit_time = to_timestamp(${d.at}::float8)
    WHERE id = ${draftId} AND user_id = ${actor.id}`;
  events.send({ type: "drafts", op: "update", draft: (await getDraft(tx, actor.id, draftId))! }, [actor.id]);
}

/** DELETE /drafts/{draft_id} (Zulip's do_delete_draft). */
export async function deleteDraft(tx: Tx, events: EventRecorder, actor: Actor, draftId: number): Promise<void> {
  await lockUserWithDrafts(tx, actor);
  const deleted = await tx.$executeRaw`DELETE FROM draft WHERE id = ${draftId} AND user_id = ${actor.id}`;
  if (deleted === 0) throw draftNotFound();
  events.send({ type: "drafts", op: "remove", draft_id: draftId }, [actor.id]);
}

/**
 * Turning enable_drafts_synchronization off (actions/settings.ts): the user's drafts go, without
 * events, as in Zulip: clients keep theirs, only the synchronising stops.
 */
export async function deleteAllDrafts(tx: Tx, userId: number): Promise<void> {
  await tx.$executeRaw`DELETE FROM draft WHERE user_id = ${userId}`;
}
