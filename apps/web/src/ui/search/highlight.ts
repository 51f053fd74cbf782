// Search results: for a search narrow the server returns each message's body and topic with the
// matched words wrapped in <span class="highlight"> (match_content, match_subject: HTML it
// escaped and rendered). The message list shows these instead of `content` and `subject`, inside
// an element of class `search-match` or `msg-content` (styled in search.css).
import type { Message } from "../../state/store";

/** The HTML to show for a message's body: the highlighted match when there is one. */
export function messageBodyHtml(message: Message): string {
  return message.match_content ?? message.content;
}

/** The topic as HTML (the server escaped it) when it has a match, else null: show `subject` as text. */
export function topicMatchHtml(message: Message): string | null {
  return message.match_subject ?? null;
}
