// The HTML diff of an edit-history entry (Zulip's highlight_html_differences): the new rendering
// with inserted text wrapped in <span class="highlight_text_inserted"> and removed text put back
// in <span class="highlight_text_deleted">. The new HTML's tags are kept as they are and removed
// tags are dropped, so the result stays well-formed.
import { diffArrays } from "diff";

/** Tags, runs of whitespace, and words, in order; joined they give back the input. */
function tokenize(html: string): string[] {
  return html.match(/<[^>]*>|\s+|[^<\s]+/g) ?? [];
}

const isTag = (token: string) => token.startsWith("<");

function highlight(tokens: string[], className: string, keepTags: boolean): string {
  let out = "";
  let text = "";
  const flush = () => {
    if (text !== "") out += `<span class="${className}">${text}</span>`;
    text = "";
  };
  for (const token of tokens) {
    if (isTag(token)) {
      flush();
      if (keepTags) out += token;
    } else {
      text += token;
    }
  }
  flush();
  return out;
}

export function htmlDiff(before: string, after: string): string {
  let out = "";
  for (const part of diffArrays(tokenize(before), tokenize(after))) {
    if (part.added) out += highlight(part.value, "highlight_text_inserted", true);
    else if (part.removed) out += highlight(part.value, "highlight_text_deleted", false);
    else out += part.value.join("");
  }
  return out;
}
