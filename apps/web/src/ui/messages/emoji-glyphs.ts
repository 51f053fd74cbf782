// Zulip renders a Unicode emoji in a message as `<span class="emoji emoji-1f440" …>:eyes:</span>`
// and leaves drawing it to the client (Zulip's web app uses sprite sheets). This client draws it
// with the system's emoji font: the glyph from the code points in the class, set as text, so no
// HTML is built from strings. The name stays in aria-label and title.
import { emojiChar } from "./Emoji";

const CODE_CLASS = /^emoji-([0-9a-f]{1,6}(?:-[0-9a-f]{1,6})*)$/;

export function showEmojiGlyphs(root: HTMLElement): void {
  for (const span of root.querySelectorAll<HTMLSpanElement>("span.emoji")) {
    for (const name of span.classList) {
      const match = CODE_CLASS.exec(name);
      if (!match) continue;
      const glyph = emojiChar(match[1]);
      if (glyph) {
        span.textContent = glyph;
        span.classList.add("emoji-glyph");
      }
      break;
    }
  }
}
