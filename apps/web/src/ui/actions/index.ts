// The message actions menu. This module is in the first load (the message list imports it), so it
// only loads the menu's code on the first click.
import type { Message } from "../../state/store";

/** Opens the actions menu of `message` under `anchor` (the row's actions button); again closes it. */
export function openMessageActions(message: Message, anchor: HTMLElement): void {
  void import("./message-actions").then((m) => m.openMessageActionsNow(message, anchor));
}
