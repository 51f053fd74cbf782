// Keyboard shortcuts, as Zulip's: `/` search, Esc close/return, `c` compose, `n` next unread
// topic, j/k and arrows move the selected message, `r` replies to it. Keys typed into a field are
// the field's, except Esc.
import { route, closeOverlay, currentNarrow, goToNarrow } from "../../state/route";
import { currentList } from "../../state/messages";
import { myUserId, userSettings, type Message } from "../../state/store";
import { unreadTopicsInOrder } from "../../state/unread";
import { narrowStreamId, termOf, dmUserIds } from "../../narrow";
import { selectedMessageId } from "../messages/selection";
import { openCompose } from "../compose/composeState";
import { sortedSubscriptions } from "../sidebar/LeftSidebar";

function typingInField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT";
}

function moveSelection(step: number): void {
  const list = currentList.value;
  if (!list) return;
  const messages = list.messages.value;
  if (messages.length === 0) return;
  const at = messages.findIndex((m) => m.id === selectedMessageId.value);
  // Nothing selected: start from the last message (the newest is what one reads first).
  const index = at < 0 ? messages.length - 1 : Math.min(messages.length - 1, Math.max(0, at + step));
  selectedMessageId.value = messages[index].id;
}

function replyTo(message: Message): void {
  if (message.type === "stream") openCompose({ recipient: { type: "stream", streamId: message.stream_id ?? null, topic: message.subject } });
  else {
    const ids = dmUserIds(message);
    const others = ids.filter((id) => id !== myUserId.value);
    openCompose({ recipient: { type: "direct", userIds: others.length ? others : ids } });
  }
}

function nextUnreadTopic(): void {
  const order = sortedSubscriptions.value.filter((sub) => !sub.is_muted).map((sub) => sub.stream_id);
  const topics = unreadTopicsInOrder(order);
  if (topics.length === 0) return;
  const narrow = currentNarrow.value;
  const streamId = narrowStreamId(narrow);
  const topic = termOf(narrow, "topic")?.toLowerCase();
  const here = topics.findIndex((t) => t.streamId === streamId && t.topic.toLowerCase() === topic);
  const next = topics[(here + 1) % topics.length];
  if (here >= 0 && topics.length === 1) return;
  goToNarrow([
    { operator: "channel", operand: String(next.streamId) },
    { operator: "topic", operand: next.topic },
  ]);
}

export function installKeyboard(focusSearch: () => void): void {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      if (route.value.kind !== "narrow") {
        event.preventDefault();
        closeOverlay();
      } else if (typingInField(event.target)) {
        (event.target as HTMLElement).blur();
      } else if (selectedMessageId.value !== null) {
        selectedMessageId.value = null;
      } else if (currentNarrow.value.length > 0 && userSettings.value.web_escape_navigates_to_home_view !== false && !document.querySelector("[role=dialog], [role=menu]")) {
        // As Zulip's: Esc from a narrow returns to the combined feed.
        goToNarrow([]);
      }
      return;
    }
    if (typingInField(event.target) || route.value.kind !== "narrow") return;
    // Keys belong to an open dialog or menu, not to the list behind it.
    if (document.querySelector("[role=dialog][aria-modal=true], [role=menu]")) return;
    switch (event.key) {
      case "/":
        event.preventDefault();
        focusSearch();
        break;
      case "c":
        event.preventDefault();
        openCompose({ recipient: null });
        break;
      case "n":
        event.preventDefault();
        nextUnreadTopic();
        break;
      case "j":
      case "ArrowDown":
        event.preventDefault();
        moveSelection(1);
        break;
      case "k":
      case "ArrowUp":
        event.preventDefault();
        moveSelection(-1);
        break;
      case "r": {
        const list = currentList.value;
        const message = selectedMessageId.value === null ? undefined : list?.get(selectedMessageId.value);
        if (message) {
          event.preventDefault();
          replyTo(message);
        }
        break;
      }
    }
  });
}
