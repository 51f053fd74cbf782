// Above the message list: what the view is (a channel and topic, a conversation, a search) and the
// search box that changes it.
import { narrowDmIds, narrowStreamId, termOf, type Narrow } from "../../narrow";
import { goToNarrow, hashFor } from "../../state/route";
import { myUserId, streamName, subscriptionsById, userName } from "../../state/store";
import { SearchBar } from "../search/SearchBar";

export function narrowTitle(narrow: Narrow): string {
  if (narrow.length === 0) return "Combined feed";
  const streamId = narrowStreamId(narrow);
  const topic = termOf(narrow, "topic");
  if (streamId !== undefined) return topic !== undefined ? `#${streamName(streamId) ?? "unknown"} › ${topic || "general chat"}` : `#${streamName(streamId) ?? "unknown"}`;
  const dm = narrowDmIds(narrow);
  if (dm) {
    const others = dm.filter((id) => id !== myUserId.value);
    return others.length === 0 ? "Notes to self" : others.map((id) => userName(id)).join(", ");
  }
  const is = termOf(narrow, "is");
  if (narrow.length === 1 && is === "starred") return "Starred messages";
  if (narrow.length === 1 && is === "mentioned") return "Mentions";
  if (narrow.length === 1 && (is === "dm" || is === "private")) return "Direct messages";
  if (narrow.length === 1 && is === "unread") return "Unread messages";
  const sender = termOf(narrow, "sender");
  if (narrow.length === 1 && sender && /^\d+$/.test(sender)) return `Messages from ${userName(Number(sender))}`;
  return "Search results";
}

export function NarrowHeader({ narrow }: { narrow: Narrow }) {
  const streamId = narrowStreamId(narrow);
  const topic = termOf(narrow, "topic");
  const description = streamId !== undefined && topic === undefined ? subscriptionsById.value.get(streamId)?.description : undefined;
  return (
    <div class="narrow-header">
      <h1 class="narrow-title">
        {streamId !== undefined && topic !== undefined ? (
          <>
            <a href={hashFor([{ operator: "channel", operand: String(streamId) }])}>#{streamName(streamId) ?? "unknown"}</a>
            <span aria-hidden="true"> › </span>
            <span>{topic || "general chat"}</span>
          </>
        ) : (
          narrowTitle(narrow)
        )}
      </h1>
      {description && <span class="narrow-description">{description}</span>}
      <div class="narrow-search">
        <SearchBar narrow={narrow} onNarrow={goToNarrow} />
      </div>
    </div>
  );
}
