// Desktop notifications for direct messages, messages that mention me and (when the user setting
// says so) messages in followed topics, while the window is hidden or not focused. Permission is
// asked on the first user gesture (browsers want one) or from the banner's button, never at page load.
import { signal } from "@preact/signals";
import { dmUserIds } from "../../narrow";
import { onEvent } from "../../state/events";
import { hashFor } from "../../state/route";
import { myUserId, streamName, userSettings, type Message } from "../../state/store";
import { isTopicFollowed, isTopicMuted } from "../../state/user-topics";

const supported = typeof window !== "undefined" && "Notification" in window;
export const notificationPermission = signal<NotificationPermission | "unsupported">(supported ? Notification.permission : "unsupported");

export async function requestNotificationPermission(): Promise<void> {
  if (!supported || Notification.permission !== "default") return;
  try {
    notificationPermission.value = await Notification.requestPermission();
  } catch {
    notificationPermission.value = Notification.permission;
  }
}

/** The message's text without markup, for the notification body (parsed inertly, never inserted). */
function plainText(html: string): string {
  const doc = new DOMParser().parseFromString(html, "text/html");
  return (doc.body.textContent ?? "").replace(/\s+/g, " ").trim();
}

function narrowOf(message: Message) {
  return message.type === "stream"
    ? [
        { operator: "channel", operand: String(message.stream_id) },
        { operator: "topic", operand: message.subject },
      ]
    : [{ operator: "dm", operand: dmUserIds(message).join(",") }];
}

const MENTION_FLAGS = ["mentioned", "wildcard_mentioned", "topic_wildcard_mentioned", "has_alert_word"];

onEvent("message", ({ message, flags }) => {
  if (!supported || Notification.permission !== "granted" || message.sender_id === myUserId.value) return;
  if (document.visibilityState === "visible" && document.hasFocus()) return;
  const settings = userSettings.value;
  const isDm = message.type === "private";
  const mentioned = flags.some((flag) => MENTION_FLAGS.includes(flag));
  const followed = message.type === "stream" && settings.enable_followed_topic_desktop_notifications === true && isTopicFollowed(message.stream_id ?? 0, message.subject);
  if (!isDm && !mentioned && !followed) return;
  if ((isDm || mentioned) && !followed && settings.enable_desktop_notifications === false) return;
  if (!isDm && flags.includes("wildcard_mentioned") && !flags.includes("mentioned") && isTopicMuted(message.stream_id ?? 0, message.subject)) return;
  const title = isDm ? message.sender_full_name : `${message.sender_full_name} (#${streamName(message.stream_id ?? 0) ?? ""} > ${message.subject})`;
  const body = isDm && settings.pm_content_in_desktop_notifications === false ? "New direct message" : plainText(message.content).slice(0, 300);
  try {
    const notification = new Notification(title, { body, tag: `message-${message.id}` });
    notification.onclick = () => {
      window.focus();
      location.hash = hashFor([...narrowOf(message), { operator: "near", operand: String(message.id) }]);
      notification.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker; nothing to do then.
  }
});

if (supported) {
  const ask = () => {
    window.removeEventListener("pointerdown", ask, true);
    window.removeEventListener("keydown", ask, true);
    void requestNotificationPermission();
  };
  window.addEventListener("pointerdown", ask, true);
  window.addEventListener("keydown", ask, true);
}
