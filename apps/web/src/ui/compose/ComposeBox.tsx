// The compose box: collapsed, buttons that open it for the conversation in view, a new topic or a
// new direct message; open, the recipient row above the editor. Enter sends (POST /messages with
// the event queue's id and our local id, so the server's message event is recognised as ours),
// the text is kept as a draft per conversation, and typing notifications go out while typing.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../../api/client";
import type { Narrow } from "../../narrow";
import { myUserId, registered, subscriptionsById } from "../../state/store";
import { EditorCore } from "./ComposeEditor";
import { composeOpen, composeRecipient, composeRequest, composeText, notifySend, type SentMessage } from "./composeState";
import { clearDraft, loadDraft, saveDraft } from "./drafts";
import { describeRecipient, recipientFromNarrow, recipientKey, type ComposeRecipient } from "./recipient";
import { DmRecipients, StreamPicker, TopicInput } from "./RecipientRow";
import { insertAtCaret, spacedForCaret } from "./textarea";
import { TypingNotifier } from "./typing";
import "./compose.css";

export interface ComposeBoxProps {
  narrow: Narrow;
}

let localCounter = 0;
/** Our id for a message being sent: unique within this page's life. */
function nextLocalId(): string {
  return `${Date.now()}.${++localCounter}`;
}

function newTopicRecipient(from: ComposeRecipient | null): ComposeRecipient {
  if (from?.type === "stream") return { type: "stream", streamId: from.streamId, topic: "" };
  // No stream in view: the first subscribed one, by name, as a start.
  const first = [...subscriptionsById.value.values()].sort((a, b) => a.name.localeCompare(b.name))[0];
  return { type: "stream", streamId: first?.stream_id ?? null, topic: "" };
}

function validate(recipient: ComposeRecipient, text: string): string | null {
  if (recipient.type === "stream") {
    if (recipient.streamId === null) return "Choose a channel.";
    if (recipient.topic.trim() === "" && registered.value?.realm_mandatory_topics) return "Topics are required in this organization.";
  } else if (recipient.userIds.length === 0) return "Add at least one recipient.";
  if (text.trim() === "") return "The message is empty.";
  return null;
}

const DRAFT_SAVE_DELAY_MS = 400;

export function ComposeBox({ narrow }: ComposeBoxProps) {
  const open = composeOpen.value;
  const fromNarrow = recipientFromNarrow(narrow);
  // Module-level signals, so that text and recipient survive the box being unmounted (overlays).
  const recipient = composeRecipient.value ?? fromNarrow ?? newTopicRecipient(null);
  const setRecipient = (next: ComposeRecipient) => (composeRecipient.value = next);
  const text = composeText.value;
  const setText = (next: string) => (composeText.value = next);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const textareaRef = useRef<HTMLTextAreaElement | null>(null);
  const streamRef = useRef<HTMLInputElement | null>(null);
  const topicRef = useRef<HTMLInputElement | null>(null);
  const dmRef = useRef<HTMLInputElement | null>(null);
  const uploaderRef = useRef<((files: File[]) => void) | null>(null);
  const typing = useRef(new TypingNotifier());
  /** The conversation the text is saved under. */
  const draftKey = useRef<string | null>(null);
  /** What to do once the editor is on screen: focus a field, insert text, upload files. */
  const pending = useRef<{ focus?: "auto"; text?: string; files?: File[] }>({});

  const focusFirstEmpty = (r: ComposeRecipient) => {
    if (r.type === "stream" && r.streamId === null) streamRef.current?.focus();
    else if (r.type === "stream" && r.topic === "") topicRef.current?.focus();
    else if (r.type === "direct" && r.userIds.length === 0) dmRef.current?.focus();
    else textareaRef.current?.focus();
  };

  const openFor = (r: ComposeRecipient, extra: { text?: string; files?: File[] } = {}) => {
    setRecipient(r);
    const key = recipientKey(r);
    // Keep text being written; otherwise pick up this conversation's draft.
    if (!composeOpen.value || text.trim() === "") {
      setText(loadDraft(key));
      draftKey.current = key;
    }
    setError(null);
    pending.current = { focus: "auto", ...extra };
    composeOpen.value = true;
  };

  const close = () => {
    typing.current.stop();
    const key = recipientKey(recipient);
    if (draftKey.current && draftKey.current !== key) clearDraft(draftKey.current);
    saveDraft(key, text);
    setText("");
    draftKey.current = null;
    setError(null);
    composeOpen.value = false;
  };

  // Requests from elsewhere: reply buttons, quote and reply, files dropped on the message list.
  const request = composeRequest.value;
  const handledSeq = useRef(0);
  useEffect(() => {
    if (!request || request.seq === handledSeq.current) return;
    handledSeq.current = request.seq;
    const target = request.recipient === undefined ? (composeOpen.value ? recipient : (fromNarrow ?? newTopicRecipient(null))) : (request.recipient ?? fromNarrow ?? newTopicRecipient(null));
    openFor(target, { text: request.text, files: request.files });
    // Consumed: a remounted box must not act on it again.
    composeRequest.value = null;
  }, [request?.seq]);

  // Follow the narrow while nothing is being written.
  const narrowKey = fromNarrow ? recipientKey(fromNarrow) : "";
  useEffect(() => {
    if (fromNarrow && (!composeOpen.value || text.trim() === "")) {
      setRecipient(fromNarrow);
      if (composeOpen.value) {
        setText(loadDraft(narrowKey));
        draftKey.current = narrowKey;
      }
    }
  }, [narrowKey]);

  // After opening: focus, then queued text and files (the editor must exist for those).
  useEffect(() => {
    if (!open) return;
    const request = pending.current;
    pending.current = {};
    if (request.focus) focusFirstEmpty(recipient);
    const field = textareaRef.current;
    if (request.text && field) {
      field.focus();
      field.setSelectionRange(field.value.length, field.value.length);
      insertAtCaret(field, spacedForCaret(field, request.text));
    }
    if (request.files?.length) uploaderRef.current?.(request.files);
  });

  // Drafts follow the text and the recipient, saved shortly after the last change.
  const currentKey = recipientKey(recipient);
  useEffect(() => {
    if (!open) return;
    const timer = setTimeout(() => {
      if (draftKey.current && draftKey.current !== currentKey) clearDraft(draftKey.current);
      saveDraft(currentKey, text);
      draftKey.current = currentKey;
    }, DRAFT_SAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, currentKey, open]);

  // Leaving the page inside the save delay still keeps the draft.
  useEffect(() => {
    const flush = () => {
      if (composeOpen.value) saveDraft(recipientKey(composeRecipient.value ?? recipient), composeText.value);
      typing.current.stop();
    };
    window.addEventListener("pagehide", flush);
    return () => window.removeEventListener("pagehide", flush);
  }, []);

  useEffect(() => typing.current.stop(), [currentKey]);
  useEffect(() => () => typing.current.stop(), []);

  const send = async () => {
    if (sending) return;
    const problem = validate(recipient, text);
    if (problem) {
      setError(problem);
      return;
    }
    typing.current.stop();
    const content = text;
    const sentTo = recipient;
    const localId = nextLocalId();
    const queueId = registered.value?.queue_id ?? undefined;
    const echo: SentMessage = { localId, queueId, recipient: sentTo, content, state: "sending" };
    notifySend(echo);
    setSending(true);
    setError(null);
    try {
      const common = { content, local_id: localId, queue_id: queueId };
      const answer =
        sentTo.type === "stream"
          ? await api.post("/messages", { ...common, type: "stream", to: String(sentTo.streamId), topic: sentTo.topic.trim() })
          : await api.post("/messages", { ...common, type: "direct", to: JSON.stringify(sentTo.userIds) });
      notifySend({ ...echo, state: "sent", id: answer.id });
      clearDraft(recipientKey(sentTo));
      if (draftKey.current) clearDraft(draftKey.current);
      // Text typed while the request was out stays.
      if (composeText.value === content) setText("");
      textareaRef.current?.focus();
    } catch (failure) {
      notifySend({ ...echo, state: "failed" });
      setError(failure instanceof ApiError ? failure.message : "The message could not be sent. Check your connection and try again.");
    } finally {
      setSending(false);
    }
  };

  if (!open) {
    const newTopic = newTopicRecipient(fromNarrow);
    return (
      <div class="compose compose-collapsed">
        {fromNarrow && !(fromNarrow.type === "stream" && fromNarrow.topic === "") ? (
          <button type="button" class="compose-reply" onClick={() => openFor(fromNarrow)}>
            Message {describeRecipient(fromNarrow)}
          </button>
        ) : null}
        <button type="button" class="compose-new" onClick={() => openFor(newTopic)}>
          {fromNarrow?.type === "stream" ? `Start new conversation in #${describeRecipient(newTopic).slice(1)}` : "Start new conversation"}
        </button>
        <button type="button" class="compose-new" onClick={() => openFor({ type: "direct", userIds: fromNarrow?.type === "direct" ? fromNarrow.userIds : [] })}>
          New direct message
        </button>
      </div>
    );
  }

  const focusEditor = () => textareaRef.current?.focus();
  const switchTo = (type: "stream" | "direct") => {
    if (type === recipient.type) return;
    setRecipient(type === "stream" ? newTopicRecipient(fromNarrow) : { type: "direct", userIds: fromNarrow?.type === "direct" ? fromNarrow.userIds : [] });
  };

  return (
    <section class="compose compose-open" aria-label="Compose message">
      <div class="compose-recipient">
        <div class="compose-kind" role="group" aria-label="Message type">
          <button type="button" class="compose-kind-button" aria-pressed={recipient.type === "stream"} onClick={() => switchTo("stream")}>
            Channel
          </button>
          <button type="button" class="compose-kind-button" aria-pressed={recipient.type === "direct"} onClick={() => switchTo("direct")}>
            DM
          </button>
        </div>
        {recipient.type === "stream" ? (
          <>
            <StreamPicker
              streamId={recipient.streamId}
              inputRef={streamRef}
              onChange={(streamId) => setRecipient({ type: "stream", streamId, topic: recipient.topic })}
              onDone={() => topicRef.current?.focus()}
            />
            <span class="compose-arrow" aria-hidden="true">
              ›
            </span>
            <TopicInput streamId={recipient.streamId} topic={recipient.topic} inputRef={topicRef} onChange={(topic) => setRecipient({ ...recipient, topic })} onDone={focusEditor} />
          </>
        ) : (
          <DmRecipients userIds={recipient.userIds} inputRef={dmRef} onChange={(userIds) => setRecipient({ type: "direct", userIds })} onDone={focusEditor} />
        )}
        <button type="button" class="compose-close" aria-label="Close compose box (the text is kept as a draft)" title="Close" onClick={close}>
          ×
        </button>
      </div>
      <EditorCore
        value={text}
        onValueChange={(value) => {
          setText(value);
          if (error) setError(null);
        }}
        onSubmit={send}
        onCancel={close}
        submitLabel={sending ? "Sending…" : "Send"}
        label={recipient.type === "stream" ? "Message text" : "Direct message text"}
        placeholder={`Message ${describeRecipient(recipient) || "…"}`}
        busy={sending}
        error={error}
        inStream={recipient.type === "stream"}
        textareaRef={textareaRef}
        uploaderRef={uploaderRef}
        onTyping={(value) => (value.trim() === "" ? typing.current.stop() : typing.current.keystroke(recipient))}
        onBlur={() => typing.current.stop()}
      />
      <p class="compose-hint">
        <kbd>Enter</kbd> to send, <kbd>Shift</kbd>+<kbd>Enter</kbd> for a new line
        {recipient.type === "direct" && recipient.userIds.length === 1 && recipient.userIds[0] === myUserId.value ? " (a note to yourself)" : ""}
      </p>
    </section>
  );
}

export default ComposeBox;
