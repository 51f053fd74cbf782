// The message actions menu's items, each offered only when the user may do it (permissions.ts).
// The dialogs behind them load on first use.
import { api } from "../../api/client";
import { myUserId, type Message } from "../../state/store";
import { matchesNarrow, narrowToApi } from "../../narrow";
import { currentNarrow } from "../../state/route";
import { openCompose } from "../compose/composeState";
import { recipientFromNarrow } from "../compose/recipient";
import { absoluteLink, conversationNarrow, copyText, messageHash } from "./links";
import { openMenu, type MenuItem } from "./menu";
import { canDelete, canEditContent, canEditTopic, canViewHistory, canViewReadReceipts } from "./permissions";
import { showError, showToast } from "./toast";

/** A fence longer than any the quoted text holds, so the quote cannot end early. */
function quoteFence(raw: string): string {
  let longest = 0;
  for (const m of raw.matchAll(/^\s*(`{3,}|~{3,})/gm)) longest = Math.max(longest, m[1].length);
  return "`".repeat(Math.max(3, longest + 1));
}

export function quoteText(message: Message, raw: string): string {
  const fence = quoteFence(raw);
  const link = absoluteLink(messageHash(message));
  return `@_**${message.sender_full_name}|${message.sender_id}** [wrote](${link}):\n${fence}quote\n${raw}\n${fence}\n`;
}

async function quoteAndReply(message: Message): Promise<void> {
  const answer = await api.get("/messages/{message_id}", { message_id: message.id, apply_markdown: false });
  const raw = typeof answer.raw_content === "string" ? answer.raw_content : answer.message.content;
  openCompose({ recipient: recipientFromNarrow(conversationNarrow(message)), text: quoteText(message, raw) });
}

async function setStarred(message: Message, starred: boolean): Promise<void> {
  await api.post("/messages/flags", { messages: [message.id], op: starred ? "add" : "remove", flag: "starred" });
}

/**
 * Marks unread this message and those after it in the view's narrow (its conversation when the
 * message is not of the view, as from a link), up to the server's limit of 5000.
 */
async function markUnreadFromHere(message: Message): Promise<void> {
  const view = currentNarrow.value.filter((t) => !["near", "id", "with"].includes(t.operator));
  const narrow = matchesNarrow(view, message, myUserId.value) === false ? conversationNarrow(message) : view;
  await api.post("/messages/flags/narrow", {
    anchor: message.id,
    include_anchor: true,
    num_before: 0,
    num_after: 5000,
    narrow: narrowToApi(narrow),
    op: "remove",
    flag: "read",
  });
}

async function deleteMessage(message: Message): Promise<void> {
  const { confirmDialog } = await import("./dialog");
  const ok = await confirmDialog({
    title: "Delete message?",
    text: "The message will be removed for everyone. This cannot be undone.",
    confirmLabel: "Delete",
    danger: true,
  });
  if (ok) await api.delete("/messages/{message_id}", { message_id: message.id });
}

function run(action: () => Promise<void>): () => void {
  return () => {
    action().catch(showError);
  };
}

export function messageActionItems(message: Message, anchor: HTMLElement): MenuItem[] {
  const starred = message.flags?.includes("starred") ?? false;
  const items: MenuItem[] = [
    { label: "Add reaction", onSelect: run(async () => (await import("./reaction-picker")).openReactionPicker(message, anchor)) },
    { label: "Reply", onSelect: () => openCompose({ recipient: recipientFromNarrow(conversationNarrow(message)) }) },
    { label: "Quote and reply", onSelect: run(() => quoteAndReply(message)) },
  ];
  if (canEditContent(message)) items.push({ label: "Edit message", onSelect: run(async () => (await import("./edit-dialog")).openEditDialog(message)) });
  if (canEditTopic(message)) {
    items.push({ label: "Move message or rename topic", onSelect: run(async () => (await import("./move-dialog")).openMoveDialog(message)) });
  }
  items.push(
    { label: starred ? "Unstar message" : "Star message", separated: true, onSelect: run(() => setStarred(message, !starred)) },
    { label: "Mark as unread from here", onSelect: run(() => markUnreadFromHere(message)) },
    {
      label: "Copy link to message",
      onSelect: run(async () => {
        await copyText(absoluteLink(messageHash(message)));
        showToast("Link copied");
      }),
    },
  );
  if (canViewHistory(message)) items.push({ label: "View edit history", onSelect: run(async () => (await import("./history-dialog")).openHistoryDialog(message)) });
  if (canViewReadReceipts()) items.push({ label: "View read receipts", onSelect: run(async () => (await import("./receipts-dialog")).openReceiptsDialog(message)) });
  if (canDelete(message)) items.push({ label: "Delete message", danger: true, separated: true, onSelect: run(() => deleteMessage(message)) });
  return items;
}

export function openMessageActionsNow(message: Message, anchor: HTMLElement): void {
  openMenu(anchor, messageActionItems(message, anchor), `Actions for the message from ${message.sender_id === myUserId.value ? "you" : message.sender_full_name}`);
}
