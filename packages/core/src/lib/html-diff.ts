// The HTML diff of an edit-history entry (Zulip's highlight_html_differences): the new rendering
// with inserted text wrapped in <span class="highlight_text_inserted"> and removed text put back
// in <span class="highlight_text_deleted">. The new HTML's tags are kept as they are and removed
// tags are dropped, so the result stays well-formed. Myers' diff costs the square of the edit's
// size, so past a bound (as Zulip's) the changed middle is shown as a plain replacement: the old
// text deleted, then the new text inserted.
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

/** Edits (tokens removed plus tokens added) past which the diff is a plain replacement: ~10 ms. */
export const MAX_DIFF_EDIT_LENGTH = 300;
/** Wall-clock backstop for one diff, and the default share of a request's diffs. */
export const DIFF_TIMEOUT_MS = 40;

/** Everything between the common prefix and suffix, replaced: linear, for edits too large to diff. */
function replacement(before: string[], after: string[]): string {
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (suffix < before.length - prefix && suffix < after.length - prefix && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix++;
  return (
    after.slice(0, prefix).join("") +
    highlight(before.slice(prefix, before.length - suffix), "highlight_text_deleted", false) +
    highlight(after.slice(prefix, after.length - suffix), "highlight_text_inserted", true) +
    after.slice(after.length - suffix).join("")
  );
}

/** The diff of two renderings; `timeoutMs` bounds its time (0: the plain replacement at once). */
export function htmlDiff(before: string, after: string, timeoutMs: number = DIFF_TIMEOUT_MS): string {
  const oldTokens = tokenize(before);
  const newTokens = tokenize(after);
  const parts = timeoutMs > 0 ? diffArrays(oldTokens, newTokens, { maxEditLength: MAX_DIFF_EDIT_LENGTH, timeout: timeoutMs }) : undefined;
  if (parts === undefined) return replacement(oldTokens, newTokens);
  let out = "";
  for (const part of parts) {
    if (part.added) out += highlight(part.value, "highlight_text_inserted", true);
    else if (part.removed) out += highlight(part.value, "highlight_text_deleted", false);
    else out += part.value.join("");
  }
  return out;
}
