// "View edit history": each version of the message, oldest first, as the server rendered it
// (its HTML is sanitised there, and inserted as it came, like every message body).
import { api, type Schemas } from "../../api/client";
import { usersById, type Message } from "../../state/store";
import { openDialog } from "./dialog";
import { streamName } from "./links";
import "./history-dialog.css";

type Snapshot = Schemas["EditHistorySnapshot"];

export async function openHistoryDialog(message: Message): Promise<void> {
  const { message_history } = await api.get("/messages/{message_id}/history", { message_id: message.id });
  openDialog("Message edit history", () => <History snapshots={message_history} />, { wide: true });
}

function who(userId: number | null): string {
  if (userId === null) return "Someone";
  return usersById.value.get(userId)?.full_name ?? "Unknown user";
}

function History(props: { snapshots: Snapshot[] }) {
  return (
    <ol class="act-history">
      {props.snapshots.map((s, i) => {
        const when = new Date(s.timestamp * 1000).toLocaleString();
        const what = i === 0 ? "Posted" : s.prev_content !== undefined ? "Edited" : s.prev_stream !== undefined ? "Moved" : "Topic changed";
        return (
          <li key={`${s.timestamp}-${i}`} class="act-history-entry">
            <p class="act-history-meta">
              <strong>{what}</strong> by {who(s.user_id)} · <time dateTime={new Date(s.timestamp * 1000).toISOString()}>{when}</time>
            </p>
            {s.prev_stream !== undefined && s.stream !== undefined && (
              <p class="act-history-change">
                Stream: #{streamName(s.prev_stream)} → #{streamName(s.stream)}
              </p>
            )}
            {s.prev_topic !== undefined && (
              <p class="act-history-change">
                Topic: {s.prev_topic} → {s.topic}
              </p>
            )}
            {(i === 0 || s.prev_content !== undefined) && (
              <div class="act-history-content message-content" dangerouslySetInnerHTML={{ __html: s.content_html_diff ?? s.rendered_content ?? "" }} />
            )}
          </li>
        );
      })}
    </ol>
  );
}
