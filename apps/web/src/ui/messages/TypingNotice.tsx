// "Alice is typing…" under the message list, for the conversation in view (a topic or a DM).
import { narrowDmIds, narrowStreamId, termOf, type Narrow } from "../../narrow";
import { userName } from "../../state/store";
import { typingByPlace, typingPlace } from "../../state/typing";

function placeOf(narrow: Narrow): string | null {
  const streamId = narrowStreamId(narrow);
  const topic = termOf(narrow, "topic");
  if (streamId !== undefined && topic !== undefined) return typingPlace({ streamId, topic });
  const dm = narrowDmIds(narrow);
  return dm ? typingPlace({ userIds: dm }) : null;
}

export function TypingNotice({ narrow }: { narrow: Narrow }) {
  const place = placeOf(narrow);
  const ids = place === null ? [] : (typingByPlace.value.get(place) ?? []);
  let text = "";
  if (ids.length === 1) text = `${userName(ids[0])} is typing…`;
  else if (ids.length === 2) text = `${userName(ids[0])} and ${userName(ids[1])} are typing…`;
  else if (ids.length > 2) text = "Several people are typing…";
  return (
    <div class="typing-notice" aria-live="polite">
      {text}
    </div>
  );
}
