// Typing notifications, throttled as Zulip's clients do: "start" when typing begins and again at
// most every `server_typing_started_wait_period_milliseconds` (10 s) while it goes on; "stop"
// after `server_typing_stopped_wait_period_milliseconds` (5 s) without a keystroke, on send, on
// blur, and when the recipient changes.
import { api } from "../../api/client";
import { myUserId, registered } from "../../state/store";
import { recipientKey, type ComposeRecipient } from "./recipient";

function periods(): { startWait: number; stopWait: number } {
  const state = registered.value;
  return {
    startWait: state?.server_typing_started_wait_period_milliseconds ?? 10_000,
    stopWait: state?.server_typing_stopped_wait_period_milliseconds ?? 5_000,
  };
}

function allowed(recipient: ComposeRecipient): boolean {
  const settings = registered.value?.user_settings;
  if (recipient.type === "stream") return recipient.streamId !== null && recipient.topic.trim() !== "" && settings?.send_stream_typing_notifications !== false;
  // Nobody else sees a DM to oneself being typed.
  return recipient.userIds.some((id) => id !== myUserId.value) && settings?.send_private_typing_notifications !== false;
}

function send(op: "start" | "stop", recipient: ComposeRecipient): void {
  const request =
    recipient.type === "stream"
      ? api.post("/typing", { op, type: "stream", stream_id: recipient.streamId ?? undefined, topic: recipient.topic })
      : api.post("/typing", { op, type: "direct", to: JSON.stringify(recipient.userIds) });
  // A lost typing notification matters to nobody.
  request.catch(() => undefined);
}

export class TypingNotifier {
  private current: { key: string; recipient: ComposeRecipient } | null = null;
  private lastStart = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  /** A keystroke that changed the text, for this recipient. */
  keystroke(recipient: ComposeRecipient): void {
    const key = recipientKey(recipient);
    if (this.current && this.current.key !== key) this.stop();
    if (!allowed(recipient)) return;
    const { startWait, stopWait } = periods();
    const now = Date.now();
    if (!this.current || now - this.lastStart >= startWait) {
      send("start", recipient);
      this.lastStart = now;
    }
    this.current = { key, recipient };
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stop(), stopWait);
  }

  stop(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.current) send("stop", this.current.recipient);
    this.current = null;
    this.lastStart = 0;
  }
}
