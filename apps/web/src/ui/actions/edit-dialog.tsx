// "Edit message": the message's Markdown source in the compose box's editor (autocomplete,
// preview; Enter saves, Esc cancels), in a dialog; saved with PATCH /messages/{id}.
import { useRef } from "preact/hooks";
import { api } from "../../api/client";
import type { Message } from "../../state/store";
import type { ComposeEditor as Editor } from "../compose/ComposeEditor";
import { openDialog, useSubmit } from "./dialog";
import { showToast } from "./toast";

export async function openEditDialog(message: Message): Promise<void> {
  const [answer, { ComposeEditor }] = await Promise.all([
    api.get("/messages/{message_id}", { message_id: message.id, apply_markdown: false }),
    import("../compose/ComposeEditor"),
  ]);
  const raw = typeof answer.raw_content === "string" ? answer.raw_content : answer.message.content;
  openDialog("Edit message", (close) => <EditForm message={message} raw={raw} Editor={ComposeEditor} close={close} />, { wide: true });
}

function EditForm(props: { message: Message; raw: string; Editor: typeof Editor; close(): void }) {
  const { message, raw, Editor, close } = props;
  const pending = useRef(raw);
  const { busy, error, submit } = useSubmit(async () => {
    const text = pending.current;
    if (text.trimEnd() !== raw.trimEnd()) {
      await api.patch("/messages/{message_id}", { message_id: message.id, content: text });
      showToast("Message saved");
    }
    close();
  });
  return (
    <Editor
      initial={raw}
      busy={busy}
      error={error}
      onSubmit={(text) => {
        pending.current = text;
        submit();
      }}
      onCancel={close}
    />
  );
}
