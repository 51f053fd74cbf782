// "Move message or rename topic" (and the topic menu's "Move topic"): a new topic, a new stream
// where allowed, and which messages go along; PATCH /messages/{id} with topic/stream_id.
import { useState } from "preact/hooks";
import { api } from "../../api/client";
import { isAdmin, type Message } from "../../state/store";
import { FormError, openDialog, useSubmit } from "./dialog";
import { streamName } from "./links";
import { canMoveStream, publicStreamTargets } from "./permissions";
import { showToast } from "./toast";

type PropagateMode = "change_one" | "change_later" | "change_all";

interface MoveTarget {
  messageId: number;
  streamId: number;
  topic: string;
  /** Whether the stream can change: administrators, from a public stream. */
  canChangeStream: boolean;
  /** A whole topic (from the topic menu) moves all its messages; a message offers the choice. */
  wholeTopic: boolean;
}

export function openMoveDialog(message: Message): void {
  if (message.stream_id === undefined) return;
  show({ messageId: message.id, streamId: message.stream_id, topic: message.subject, canChangeStream: canMoveStream(message), wholeTopic: false });
}

/** Moves a whole topic: the server needs one of its messages, so the newest is looked up. */
export async function openMoveTopicDialog(streamId: number, topic: string): Promise<void> {
  const { topics } = await api.get("/users/me/{stream_id}/topics", { stream_id: streamId });
  const found = topics.find((t) => t.name.toLowerCase() === topic.toLowerCase());
  if (!found) throw new Error("This topic has no messages you can see.");
  const stream = publicStreamTargets().some((s) => s.id === streamId);
  show({ messageId: found.max_id, streamId, topic, canChangeStream: isAdmin.value && stream, wholeTopic: true });
}

function show(target: MoveTarget): void {
  openDialog(target.wholeTopic ? "Move topic" : "Move message or rename topic", (close) => <MoveForm target={target} close={close} />);
}

const MODES: { mode: PropagateMode; label: string }[] = [
  { mode: "change_one", label: "Only this message" },
  { mode: "change_later", label: "This message and the ones after it in the topic" },
  { mode: "change_all", label: "Every message in the topic" },
];

function MoveForm(props: { target: MoveTarget; close(): void }) {
  const { target, close } = props;
  const [topic, setTopic] = useState(target.topic);
  const [streamId, setStreamId] = useState(target.streamId);
  const [mode, setMode] = useState<PropagateMode>(target.wholeTopic ? "change_all" : "change_later");
  const { busy, error, submit } = useSubmit(async () => {
    const newTopic = topic.trim();
    if (newTopic === "") throw new Error("The topic can't be empty.");
    const topicChanged = newTopic !== target.topic;
    const streamChanged = streamId !== target.streamId;
    if (!topicChanged && !streamChanged) {
      close();
      return;
    }
    await api.patch("/messages/{message_id}", {
      message_id: target.messageId,
      ...(topicChanged ? { topic: newTopic } : {}),
      ...(streamChanged ? { stream_id: streamId } : {}),
      propagate_mode: mode,
    });
    close();
    showToast(streamChanged ? `Moved to #${streamName(streamId)}` : "Topic renamed");
  });
  return (
    <form onSubmit={submit}>
      {target.canChangeStream && (
        <label class="act-field">
          <span>Channel</span>
          <select value={String(streamId)} onChange={(e) => setStreamId(Number(e.currentTarget.value))}>
            {publicStreamTargets().map((s) => (
              <option key={s.id} value={String(s.id)}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label class="act-field">
        <span>Topic</span>
        <input type="text" value={topic} maxLength={60} autoFocus onInput={(e) => setTopic(e.currentTarget.value)} />
      </label>
      {!target.wholeTopic && (
        <fieldset class="act-fieldset">
          <legend>Which messages</legend>
          {MODES.map((m) => (
            <label class="act-check" key={m.mode}>
              <input type="radio" name="propagate_mode" value={m.mode} checked={mode === m.mode} onChange={() => setMode(m.mode)} />
              {m.label}
            </label>
          ))}
        </fieldset>
      )}
      <FormError error={error} />
      <div class="act-dialog-buttons">
        <button type="button" class="act-button" onClick={close}>
          Cancel
        </button>
        <button type="submit" class="act-button act-button-primary" disabled={busy}>
          {busy ? "Moving…" : "Move"}
        </button>
      </div>
    </form>
  );
}
