// A message's edit history (Zulip's get_message_edit_history and fill_edit_history_entries), and
// its raw content (GET /messages/{message_id}). message_edit rows hold what changed in each edit;
// the snapshots are rebuilt by walking back from the message's current state.
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { DIFF_TIMEOUT_MS, htmlDiff } from "../lib/html-diff.ts";
import { accessMessage } from "./messages.ts";
import { EDIT_HISTORY_POLICY } from "../lib/edit-history-policy.ts";
import { topicForClient } from "../lib/empty-topic.ts";

export interface EditHistoryEntry {
  user_id: number;
  timestamp: number;
  topic: string;
  content: string;
  rendered_content: string | null;
  prev_topic?: string;
  prev_content?: string;
  prev_rendered_content?: string | null;
  content_html_diff?: string;
  /** With a move (feature level 118): the stream after the edit and the one before. */
  stream?: number;
  prev_stream?: number;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * GET /messages/{message_id}/history: the original first, then one snapshot per edit. Under the
 * organization's "moves" policy (feature level 358), only the original and the moves, without
 * what the content was before or its diff; under "none", an error.
 */
export async function messageEditHistory(tx: Tx, actor: Actor, messageId: number, allowEmptyTopicName = false): Promise<EditHistoryEntry[]> {
  const policy = actor.realm.message_edit_history_visibility_policy;
  if (policy === EDIT_HISTORY_POLICY.none || !actor.realm.allow_edit_history) throw badRequest("Message edit history is disabled in this organization");
  const movesOnly = policy === EDIT_HISTORY_POLICY.moves;
  const accessed = await accessMessage(tx, actor, messageId);
  const message = await tx.message.findUniqueOrThrow({ where: { id: messageId } });
  const edits = await tx.messageEdit.findMany({ where: { message_id: messageId }, orderBy: { id: "desc" } });

  // One request's diffs share a time budget, so a message edited many times cannot stall the node;
  // once it is spent, the rest are plain replacements.
  // (The event-loop test holds any request under 250 ms of blocking.)
  const diffDeadline = performance.now() + 2 * DIFF_TIMEOUT_MS;
  // Newest edit first: each entry shows the state after its edit, then steps back to before it.
  let topic = message.subject;
  let content = message.content;
  let rendered = message.rendered_content;
  let streamId = accessed.stream?.id ?? null;
  const entries: EditHistoryEntry[] = [];
  for (const edit of edits) {
    const entry: EditHistoryEntry = { user_id: edit.user_id, timestamp: seconds(edit.timestamp), topic, content, rendered_content: rendered };
    if (edit.prev_topic !== null) {
      entry.prev_topic = edit.prev_topic;
      topic = edit.prev_topic;
    }
    if (edit.prev_stream_id !== null) {
      if (streamId !== null) entry.stream = streamId;
      entry.prev_stream = edit.prev_stream_id;
      streamId = edit.prev_stream_id;
    }
    if (edit.prev_content !== null) {
      if (!movesOnly) {
        entry.prev_content = edit.prev_content;
        entry.prev_rendered_content = edit.prev_rendered_content;
        const timeout = Math.min(DIFF_TIMEOUT_MS, Math.floor(diffDeadline - performance.now()));
        entry.content_html_diff = htmlDiff(edit.prev_rendered_content ?? "", rendered ?? "", Math.max(0, timeout));
      }
      content = edit.prev_content;
      rendered = edit.prev_rendered_content;
    }
    // Moves only: an edit of the content alone is not shown at all.
    if (movesOnly && edit.prev_topic === null && edit.prev_stream_id === null) continue;
    entries.push(entry);
  }
  entries.push({ user_id: message.sender_id, timestamp: seconds(message.date_sent), topic, content, rendered_content: rendered });
  // A channel message's empty topic as its display name, unless the client allows "" (feature level 334).
  if (accessed.stream && !allowEmptyTopicName) {
    for (const entry of entries) {
      entry.topic = topicForClient(entry.topic, false);
      if (entry.prev_topic !== undefined) entry.prev_topic = topicForClient(entry.prev_topic, false);
    }
  }
  return entries.reverse();
}

/** GET /messages/{message_id}: the Markdown source of a message the user may read. */
export async function messageRawContent(tx: Tx, actor: Actor, messageId: number): Promise<string> {
  await accessMessage(tx, actor, messageId);
  const message = await tx.message.findUniqueOrThrow({ where: { id: messageId }, select: { content: true } });
  return message.content;
}
