// The items of the topic and stream menus.
import { isAdmin, realm, subscriptionsById } from "../../state/store";
import { isStreamMuted, topicPolicy, TopicPolicy } from "../../state/user-topics";
import { confirmDialog } from "../actions/dialog";
import { absoluteLink, copyText, streamHash, streamName, topicHash } from "../actions/links";
import { openMenu, type MenuItem } from "../actions/menu";
import { showError, showToast } from "../actions/toast";
import { markStreamAsRead, markTopicAsRead, setSubscriptionProperty, setTopicPolicy, subscribe, unsubscribe } from "./subscription-actions";

function run(action: () => Promise<void>): () => void {
  return () => {
    action().catch(showError);
  };
}

function copyLink(hash: string): () => void {
  return run(async () => {
    await copyText(absoluteLink(hash));
    showToast("Link copied");
  });
}

export function topicMenuItems(streamId: number, topic: string): MenuItem[] {
  const policy = topicPolicy(streamId, topic);
  const streamMuted = isStreamMuted(streamId);
  const set = (value: 0 | 1 | 2 | 3) => run(() => setTopicPolicy(streamId, topic, value));
  const items: MenuItem[] = [];
  // In a muted stream a topic is muted unless unmuted; elsewhere unmuted unless muted (Zulip's rule).
  if (streamMuted) {
    items.push(policy === TopicPolicy.unmuted ? { label: "Mute topic", onSelect: set(0) } : { label: "Unmute topic", onSelect: set(2) });
  } else {
    items.push(policy === TopicPolicy.muted ? { label: "Unmute topic", onSelect: set(0) } : { label: "Mute topic", onSelect: set(1) });
  }
  items.push(policy === TopicPolicy.followed ? { label: "Unfollow topic", onSelect: set(0) } : { label: "Follow topic", onSelect: set(3) });
  items.push({ label: "Mark topic as read", separated: true, onSelect: run(() => markTopicAsRead(streamId, topic)) });
  // Renaming others' messages: administrators, or everyone when the organization allows it.
  if (realm.value.realm_allow_message_editing && (isAdmin.value || realm.value.realm_allow_community_topic_editing)) {
    items.push({ label: "Move or rename topic", onSelect: run(async () => (await import("../actions/move-dialog")).openMoveTopicDialog(streamId, topic)) });
  }
  items.push({ label: "Copy link to topic", onSelect: copyLink(topicHash(streamId, topic)) });
  return items;
}

export function streamMenuItems(streamId: number): MenuItem[] {
  const sub = subscriptionsById.value.get(streamId);
  const name = streamName(streamId);
  const items: MenuItem[] = [];
  if (sub) {
    items.push(
      { label: "Mark all messages as read", onSelect: run(() => markStreamAsRead(streamId)) },
      sub.is_muted
        ? { label: "Unmute channel", onSelect: run(() => setSubscriptionProperty(streamId, "is_muted", false)) }
        : { label: "Mute channel", onSelect: run(() => setSubscriptionProperty(streamId, "is_muted", true)) },
      sub.pin_to_top
        ? { label: "Unpin channel", onSelect: run(() => setSubscriptionProperty(streamId, "pin_to_top", false)) }
        : { label: "Pin channel to top", onSelect: run(() => setSubscriptionProperty(streamId, "pin_to_top", true)) },
    );
  } else {
    items.push({ label: "Subscribe", onSelect: run(() => subscribe(streamId)) });
  }
  items.push(
    { label: "Channel settings", separated: true, onSelect: run(async () => (await import("./stream-settings")).openStreamSettingsDialog(streamId)) },
    { label: "Copy link to channel", onSelect: copyLink(streamHash(streamId)) },
  );
  if (sub) {
    items.push({
      label: "Unsubscribe",
      danger: true,
      separated: true,
      onSelect: run(async () => {
        const ok = await confirmDialog({
          title: `Unsubscribe from #${name}?`,
          text: sub.invite_only ? "This channel is private: you will need an invitation to join it again." : "You can subscribe again from the channel browser.",
          confirmLabel: "Unsubscribe",
          danger: true,
        });
        if (ok) await unsubscribe(streamId);
      }),
    });
  }
  return items;
}

export function openTopicMenuNow(streamId: number, topic: string, anchor: HTMLElement): void {
  openMenu(anchor, topicMenuItems(streamId, topic), `Actions for the topic ${topic}`);
}

export function openStreamMenuNow(streamId: number, anchor: HTMLElement): void {
  openMenu(anchor, streamMenuItems(streamId), `Actions for the channel ${streamName(streamId)}`);
}
