// How the message actions open the compose box: Reply and Quote and reply go through compose's own
// request signal (ui/compose/composeState.ts), with the message's conversation as the recipient.
import type { Narrow } from "../../narrow";
import { openCompose } from "../compose/composeState";
import { recipientFromNarrow } from "../compose/recipient";

export { composeRequest, type ComposeRequest } from "../compose/composeState";

/** Opens compose to `narrow`'s conversation, adding `text` (a quote; "" for none) at the caret. */
export function requestCompose(request: { narrow: Narrow; text: string }): void {
  openCompose({ recipient: recipientFromNarrow(request.narrow), ...(request.text ? { text: request.text } : {}) });
}
