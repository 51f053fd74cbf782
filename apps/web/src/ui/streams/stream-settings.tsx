// A subscribed stream's own settings (color, pinned, muted, notifications), and for administrators
// the stream's name, description and privacy. Shown in the stream browser's rows and, from the
// stream menu, in a dialog.
import { useState } from "preact/hooks";
import { api } from "../../api/client";
import { isAdmin, streamsById, subscriptionsById } from "../../state/store";
import { FormError, openDialog, useSubmit } from "../actions/dialog";
import { showError, showToast } from "../actions/toast";
import { setSubscriptionProperty, type SubscriptionProperty } from "./subscription-actions";
import "./streams.css";

export function openStreamSettingsDialog(streamId: number): void {
  const name = streamsById.value.get(streamId)?.name ?? subscriptionsById.value.get(streamId)?.name ?? "";
  openDialog(`#${name} settings`, () => <StreamSettings streamId={streamId} />);
}

/** Reads the subscription from the store on each render, so events (from this tab or another) show at once. */
export function StreamSettings(props: { streamId: number }) {
  const sub = subscriptionsById.value.get(props.streamId);
  return (
    <div class="chb-settings">
      {sub ? <PersonalSettings streamId={props.streamId} /> : <p class="act-muted">Subscribe to this channel to change its color, pinning and muting.</p>}
      {isAdmin.value && <AdminSettings streamId={props.streamId} />}
    </div>
  );
}

function PersonalSettings(props: { streamId: number }) {
  const sub = subscriptionsById.value.get(props.streamId);
  if (!sub) return null;
  const set = (property: SubscriptionProperty, value: string | boolean) => {
    setSubscriptionProperty(props.streamId, property, value).catch(showError);
  };
  const id = `chb-${props.streamId}`;
  return (
    <fieldset class="act-fieldset">
      <legend>Your settings</legend>
      <div class="chb-setting">
        <label for={`${id}-color`}>Color</label>
        <input id={`${id}-color`} type="color" value={sub.color} onChange={(e) => set("color", e.currentTarget.value)} />
      </div>
      <label class="act-check">
        <input type="checkbox" checked={sub.pin_to_top} onChange={(e) => set("pin_to_top", e.currentTarget.checked)} />
        Pin to the top of the channel list
      </label>
      <label class="act-check">
        <input type="checkbox" checked={sub.is_muted} onChange={(e) => set("is_muted", e.currentTarget.checked)} />
        Mute (hide from the combined feed and unread counts)
      </label>
      <label class="act-check">
        <input type="checkbox" checked={sub.desktop_notifications ?? false} onChange={(e) => set("desktop_notifications", e.currentTarget.checked)} />
        Desktop notifications for every message
      </label>
      <label class="act-check">
        <input type="checkbox" checked={sub.audible_notifications ?? false} onChange={(e) => set("audible_notifications", e.currentTarget.checked)} />
        Sound for every message
      </label>
    </fieldset>
  );
}

function AdminSettings(props: { streamId: number }) {
  const stream = streamsById.value.get(props.streamId) ?? subscriptionsById.value.get(props.streamId);
  const [name, setName] = useState(stream?.name ?? "");
  const [description, setDescription] = useState(stream?.description ?? "");
  const [isPrivate, setPrivate] = useState(stream?.invite_only ?? false);
  const { busy, error, submit } = useSubmit(async () => {
    if (!stream) return;
    const changes: { new_name?: string; description?: string; is_private?: boolean } = {};
    if (name.trim() !== stream.name) changes.new_name = name.trim();
    if (description !== stream.description) changes.description = description;
    if (isPrivate !== stream.invite_only) changes.is_private = isPrivate;
    if (Object.keys(changes).length === 0) return;
    await api.patch("/streams/{stream_id}", { stream_id: props.streamId, ...changes });
    showToast("Channel updated");
  });
  if (!stream) return null;
  return (
    <form class="chb-admin" onSubmit={submit}>
      <fieldset class="act-fieldset">
        <legend>Channel (administrators)</legend>
        <label class="act-field">
          <span>Name</span>
          <input type="text" value={name} maxLength={60} required onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="act-field">
          <span>Description</span>
          <input type="text" value={description} maxLength={1024} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label class="act-check">
          <input type="checkbox" checked={isPrivate} onChange={(e) => setPrivate(e.currentTarget.checked)} />
          Private (only subscribers see it)
        </label>
        <FormError error={error} />
        <div class="act-dialog-buttons">
          <button type="submit" class="act-button act-button-primary" disabled={busy}>
            {busy ? "Saving…" : "Save channel"}
          </button>
        </div>
      </fieldset>
    </form>
  );
}
