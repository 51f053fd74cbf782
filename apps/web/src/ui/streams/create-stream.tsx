// "Create channel": POST /users/me/subscriptions with a name the server does not know creates the
// stream and subscribes the user to it.
import { useState } from "preact/hooks";
import { api } from "../../api/client";
import { FormError, openDialog, useSubmit } from "../actions/dialog";
import { showToast } from "../actions/toast";
import { realm } from "../../state/store";

export function openCreateStreamDialog(onCreated?: (name: string) => void): void {
  openDialog("Create a channel", (close) => <CreateStreamForm close={close} onCreated={onCreated} />);
}

function CreateStreamForm(props: { close(): void; onCreated?: (name: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [isPrivate, setPrivate] = useState(false);
  const maxName = (realm.value.max_stream_name_length as number | undefined) ?? 60;
  const maxDescription = (realm.value.max_stream_description_length as number | undefined) ?? 1024;
  const { busy, error, submit } = useSubmit(async () => {
    const trimmed = name.trim();
    if (trimmed === "") throw new Error("A channel needs a name.");
    const answer = await api.post("/users/me/subscriptions", {
      subscriptions: [{ name: trimmed, ...(description.trim() ? { description: description.trim() } : {}) }],
      invite_only: isPrivate,
    });
    // An existing name only subscribes; say so rather than claim a creation.
    const already = (answer as { already_subscribed?: Record<string, string[]> }).already_subscribed;
    const existed = already && Object.values(already).some((names) => names.includes(trimmed));
    props.close();
    showToast(existed ? `You were already subscribed to #${trimmed}` : `Created #${trimmed}`);
    props.onCreated?.(trimmed);
  });
  return (
    <form onSubmit={submit}>
      <label class="act-field">
        <span>Name</span>
        <input type="text" value={name} maxLength={maxName} required autoFocus onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label class="act-field">
        <span>Description (optional)</span>
        <input type="text" value={description} maxLength={maxDescription} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label class="act-check">
        <input type="checkbox" checked={isPrivate} onChange={(e) => setPrivate(e.currentTarget.checked)} />
        Private: only people subscribed can see it and its messages
      </label>
      <FormError error={error} />
      <div class="act-dialog-buttons">
        <button type="button" class="act-button" onClick={props.close}>
          Cancel
        </button>
        <button type="submit" class="act-button act-button-primary" disabled={busy}>
          {busy ? "Creating…" : "Create"}
        </button>
      </div>
    </form>
  );
}
