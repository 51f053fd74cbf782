// "Add reaction": the emoji picker (ui/emoji, its own lazy chunk) in a popover by the message;
// the chosen emoji toggles the user's reaction.
import { render, type ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { api } from "../../api/client";
import { myUserId, type Message } from "../../state/store";
import { placeNear } from "./menu";
import { portalRoot } from "./portal";
import { showError } from "./toast";
import type { PickedEmoji } from "../emoji/emojiData";
import "./reaction-picker.css";

export type { PickedEmoji };

/** Adds the user's reaction, or removes it when they had reacted so already. */
export async function toggleReaction(message: Message, emoji: PickedEmoji): Promise<void> {
  const mine = message.reactions.some(
    (r) => r.user_id === myUserId.value && r.emoji_code === emoji.emoji_code && r.reaction_type === emoji.reaction_type,
  );
  const params = emoji.emoji_code
    ? { message_id: message.id, emoji_name: emoji.emoji_name, emoji_code: emoji.emoji_code, reaction_type: emoji.reaction_type }
    : { message_id: message.id, emoji_name: emoji.emoji_name };
  if (mine) await api.delete("/messages/{message_id}/reactions", params);
  else await api.post("/messages/{message_id}/reactions", params);
}

/** Opens the emoji picker by `anchor`; `onPick` gets the chosen emoji. Usable by any reaction button. */
export async function openEmojiPicker(anchor: HTMLElement, onPick: (emoji: PickedEmoji) => void): Promise<void> {
  const { default: Picker } = await import("../emoji/EmojiPicker");
  const root = portalRoot("app-picker-root");
  const close = () => {
    render(null, root);
    if (anchor.isConnected) anchor.focus();
  };
  render(
    <PickerPopover anchor={anchor} onClose={close}>
      <Picker
        onPick={(emoji) => {
          close();
          onPick(emoji);
        }}
        onClose={close}
      />
    </PickerPopover>,
    root,
  );
}

export function openReactionPicker(message: Message, anchor: HTMLElement): Promise<void> {
  return openEmojiPicker(anchor, (emoji) => {
    toggleReaction(message, emoji).catch(showError);
  });
}

function PickerPopover(props: { anchor: HTMLElement; onClose(): void; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (ref.current) placeNear(ref.current, props.anchor);
  }, [props.anchor]);
  useEffect(() => {
    const onPointerDown = (event: PointerEvent) => {
      if (!ref.current?.contains(event.target as Node)) props.onClose();
    };
    document.addEventListener("pointerdown", onPointerDown, true);
    return () => document.removeEventListener("pointerdown", onPointerDown, true);
  }, []);
  return (
    <div
      class="act-picker"
      ref={ref}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.stopPropagation();
          props.onClose();
        }
      }}
    >
      {props.children}
    </div>
  );
}

