// Streams: create, rename, describe, make private or public, delete; and the default streams
// new users join.
import { useState } from "preact/hooks";
import { api, type Schemas } from "../../api/client";
import { isAdmin, myUserId, registered } from "../../state/store";
import { Loading, Section, Status, TextInput, Toggle, useId, useLoad, useOutcome } from "../settings/common";

type Stream = Schemas["Stream"];

function useStreams() {
  return useLoad(async () => {
    const admin = isAdmin.value;
    const [all, defaults] = await Promise.all([
      api.get("/streams", admin ? { include_all_active: true } : { include_public: true, include_subscribed: true }),
      api.get("/streams", { include_public: false, include_subscribed: false, include_web_public: false, include_default: true }),
    ]);
    return { streams: all.streams, defaults: new Set(defaults.streams.map((s) => s.stream_id)) };
  });
}

export function StreamsSection() {
  const data = useStreams();
  const [query, setQuery] = useState("");
  const admin = isAdmin.value;
  const canCreate = admin || registered.value?.can_create_streams !== false;
  if (!data.data) return <Loading error={data.error} />;
  const needle = query.trim().toLowerCase();
  const streams = data.data.streams.filter((s) => !needle || s.name.toLowerCase().includes(needle) || s.description.toLowerCase().includes(needle));
  return (
    <>
      {canCreate && <CreateStream onCreated={data.reload} />}
      <Section title={isAdmin.value ? "All streams" : "Streams you can see"}>
        <TextInput label="Search streams" type="search" class="set-search" value={query} onInput={setQuery} />
        {streams.length === 0 && <p class="set-muted">No stream matches.</p>}
        {streams.map((stream) => (
          <StreamCard key={stream.stream_id} stream={stream} admin={admin} isDefault={data.data?.defaults.has(stream.stream_id) ?? false} onChange={data.reload} />
        ))}
      </Section>
    </>
  );
}

function CreateStream(props: { onCreated(): void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [privateStream, setPrivate] = useState(false);
  const [everyone, setEveryone] = useState(false);
  const [outcome, run] = useOutcome();
  const descId = useId();
  const max = registered.value?.max_stream_name_length ?? 60;
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      let principals: number[] = [myUserId.value];
      if (everyone) {
        const users = await api.get("/users");
        principals = users.members.filter((u) => u.is_active && !u.is_bot && (!privateStream || !u.is_guest)).map((u) => u.user_id);
      }
      await api.post("/users/me/subscriptions", {
        subscriptions: [{ name: name.trim(), description: description.trim() }],
        invite_only: privateStream,
        principals,
      });
      setName("");
      setDescription("");
      props.onCreated();
    }, `Stream created`);
  };
  return (
    <details class="set-details">
      <summary class="set-btn">Create a stream</summary>
      <form class="set-form" onSubmit={submit}>
        <TextInput label="Stream name" value={name} onInput={setName} maxLength={max} required />
        <div class="set-field">
          <label for={descId}>Description</label>
          <textarea id={descId} value={description} maxLength={registered.value?.max_stream_description_length ?? 1024} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <Toggle label="Private: only subscribers see it and its messages" checked={privateStream} onChange={setPrivate} />
        <Toggle label="Subscribe every member (otherwise only you)" checked={everyone} onChange={setEveryone} />
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={!name.trim() || outcome.kind === "busy"}>
            Create stream
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </details>
  );
}

function StreamCard(props: { stream: Stream; admin: boolean; isDefault: boolean; onChange(): void }) {
  const { stream } = props;
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(stream.name);
  const [description, setDescription] = useState(stream.description);
  const [privateStream, setPrivate] = useState(stream.invite_only);
  const [outcome, run] = useOutcome();
  const descId = useId();

  const save = (e: Event) => {
    e.preventDefault();
    const changes: { new_name?: string; description?: string; is_private?: boolean } = {};
    if (name.trim() !== stream.name) changes.new_name = name.trim();
    if (description.trim() !== stream.description) changes.description = description.trim();
    if (privateStream !== stream.invite_only) changes.is_private = privateStream;
    if (Object.keys(changes).length === 0) {
      setEditing(false);
      return;
    }
    void run(async () => {
      await api.patch("/streams/{stream_id}", { stream_id: stream.stream_id, ...changes });
      setEditing(false);
      props.onChange();
    });
  };
  const remove = () => {
    if (!window.confirm(`Delete #${stream.name}? Its messages can no longer be read, and everyone is unsubscribed.`)) return;
    void run(async () => {
      await api.delete("/streams/{stream_id}", { stream_id: stream.stream_id });
      props.onChange();
    }, "Deleted");
  };
  const setDefault = (on: boolean) =>
    void run(async () => {
      if (on) await api.post("/default_streams", { stream_id: stream.stream_id });
      else await api.delete("/default_streams", { stream_id: stream.stream_id });
      props.onChange();
    }, on ? "New users now join this stream" : "No longer a default stream");

  return (
    <div class="set-card">
      <div class="set-card-head">
        <strong>
          {stream.invite_only ? "🔒 " : "#"}
          {stream.name}
        </strong>
        {props.isDefault && <span class="set-muted">Default</span>}
        {props.admin && !editing && (
          <div class="set-row-actions">
            <button type="button" class="set-btn set-btn-small" onClick={() => setEditing(true)} aria-label={`Edit #${stream.name}`}>
              Edit
            </button>
            <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={remove} aria-label={`Delete #${stream.name}`}>
              Delete
            </button>
          </div>
        )}
      </div>
      {editing ? (
        <form onSubmit={save}>
          <TextInput label="Name" value={name} onInput={setName} required maxLength={registered.value?.max_stream_name_length ?? 60} />
          <div class="set-field">
            <label for={descId}>Description</label>
            <textarea id={descId} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </div>
          <Toggle label="Private" checked={privateStream} onChange={setPrivate} />
          <div class="set-actions">
            <button type="submit" class="set-btn set-btn-primary" disabled={outcome.kind === "busy"}>
              Save
            </button>
            <button type="button" class="set-btn" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          {stream.description && <p class="set-muted">{stream.description}</p>}
          {props.admin && !stream.invite_only && <Toggle label="Default stream for new users" checked={props.isDefault} onChange={setDefault} />}
        </>
      )}
      {outcome.kind !== "idle" && <Status outcome={outcome} />}
    </div>
  );
}

export function DefaultStreamsSection() {
  const data = useStreams();
  const [choice, setChoice] = useState("");
  const [outcome, run] = useOutcome();
  const selectId = useId();
  const admin = isAdmin.value;
  if (!data.data) return <Loading error={data.error} />;
  const defaults = data.data.streams.filter((s) => data.data?.defaults.has(s.stream_id));
  const others = data.data.streams.filter((s) => !data.data?.defaults.has(s.stream_id) && !s.invite_only);
  const add = (e: Event) => {
    e.preventDefault();
    if (!choice) return;
    void run(async () => {
      await api.post("/default_streams", { stream_id: Number(choice) });
      setChoice("");
      data.reload();
    }, "Added");
  };
  const remove = (stream: Stream) =>
    void run(async () => {
      await api.delete("/default_streams", { stream_id: stream.stream_id });
      data.reload();
    }, `#${stream.name} removed`);
  return (
    <Section title="Default streams" intro="New users are subscribed to these streams.">
      {admin && (
        <form class="set-inline" onSubmit={add}>
          <div class="set-field">
            <label for={selectId}>Stream to add</label>
            <select id={selectId} value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
              <option value="">Choose a stream</option>
              {others.map((s) => (
                <option key={s.stream_id} value={String(s.stream_id)}>
                  #{s.name}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" class="set-btn set-btn-primary" disabled={!choice}>
            Add
          </button>
        </form>
      )}
      <Status outcome={outcome} />
      {defaults.length === 0 ? (
        <p class="set-muted">No default streams.</p>
      ) : (
        <table class="set-table">
          <thead>
            <tr>
              <th scope="col">Stream</th>
              <th scope="col">Description</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {defaults.map((s) => (
              <tr key={s.stream_id}>
                <td>#{s.name}</td>
                <td>{s.description}</td>
                {admin && (
                  <td>
                    <button type="button" class="set-btn set-btn-small" onClick={() => remove(s)} aria-label={`Remove #${s.name} from the default streams`}>
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
