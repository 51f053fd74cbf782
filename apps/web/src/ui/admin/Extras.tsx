// Custom emoji, linkifiers, user groups and custom profile fields.
import { useState } from "preact/hooks";
import { api, type Schemas } from "../../api/client";
import { isAdmin, myUserId, registered } from "../../state/store";
import { Loading, Section, Select, Status, TextInput, sendForm, useId, useLoad, useOutcome } from "../settings/common";

type User = Schemas["User"];

// ---- Custom emoji ----

export function EmojiSection() {
  const emoji = useLoad(async () => Object.values((await api.get("/realm/emoji")).emoji));
  const admin = isAdmin.value;
  const mayAdd = admin || !registered.value?.realm_add_emoji_by_admins_only;
  const [outcome, run] = useOutcome();
  const [filter, setFilter] = useState("");
  if (!emoji.data) return <Loading error={emoji.error} />;
  const needle = filter.trim().toLowerCase();
  const active = emoji.data.filter((e) => !e.deactivated && (!needle || e.name.includes(needle))).sort((a, b) => a.name.localeCompare(b.name));
  const remove = (name: string) => {
    if (!window.confirm(`Delete :${name}:? Messages that use it show its name instead.`)) return;
    void run(async () => {
      await api.delete("/realm/emoji/{emoji_name}", { emoji_name: name });
      emoji.reload();
    }, `:${name}: deleted`);
  };
  return (
    <>
      {mayAdd && <AddEmoji onAdded={emoji.reload} />}
      <Section title="Custom emoji">
        <TextInput label="Search emoji" type="search" class="set-search" value={filter} onInput={setFilter} />
        <Status outcome={outcome} />
        {active.length === 0 ? (
          <p class="set-muted">No custom emoji.</p>
        ) : (
          <table class="set-table">
            <thead>
              <tr>
                <th scope="col">Emoji</th>
                <th scope="col">Name</th>
                <th scope="col">Added by</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {active.map((e) => {
                // Authors may delete their own emoji; administrators any.
                const mayDelete = admin || (e.author_id ?? e.author?.id) === myUserId.value;
                return (
                  <tr key={e.id}>
                    <td>
                      <img class="set-emoji-img" src={e.still_url ?? e.source_url} alt={`:${e.name}:`} />
                    </td>
                    <td>:{e.name}:</td>
                    <td>{e.author?.full_name ?? ""}</td>
                    <td>
                      {mayDelete && (
                        <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={() => remove(e.name)} aria-label={`Delete :${e.name}:`}>
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}

function AddEmoji(props: { onAdded(): void }) {
  const [name, setName] = useState("");
  const [outcome, run, setOutcome] = useOutcome();
  const fileId = useId();
  const submit = (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const file = (formEl.querySelector(`#${fileId}`) as HTMLInputElement | null)?.files?.[0];
    if (!file) {
      setOutcome({ kind: "error", text: "Choose an image." });
      return;
    }
    const emojiName = name.trim().toLowerCase();
    const form = new FormData();
    form.append("file", file, file.name);
    void run(async () => {
      await sendForm("POST", `/realm/emoji/${encodeURIComponent(emojiName)}`, form);
      setName("");
      formEl.reset();
      props.onAdded();
    }, `:${emojiName}: added`);
  };
  return (
    <Section title="Add a custom emoji">
      <form class="set-form" onSubmit={submit}>
        <div class="set-inline">
          <TextInput label="Name" value={name} onInput={setName} required pattern="[a-z0-9_\-]+" maxLength={50} hint="Lowercase letters, digits, - and _." />
          <div class="set-field">
            <label for={fileId}>Image</label>
            <input id={fileId} type="file" accept="image/png,image/gif,image/jpeg,image/webp" required />
          </div>
        </div>
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={!name.trim() || outcome.kind === "busy"}>
            Add emoji
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}

// ---- Linkifiers ----

export function LinkifiersSection() {
  const filters = useLoad(async () => (await api.get("/realm/filters")).filters);
  const admin = isAdmin.value;
  const [pattern, setPattern] = useState("");
  const [url, setUrl] = useState("");
  const [outcome, run] = useOutcome();
  const add = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.post("/realm/filters", { pattern: pattern.trim(), url_format_string: url.trim() });
      setPattern("");
      setUrl("");
      filters.reload();
    }, "Linkifier added");
  };
  const remove = (id: number) =>
    void run(async () => {
      await api.delete("/realm/filters/{filter_id}", { filter_id: id });
      filters.reload();
    }, "Linkifier deleted");
  /**
   * Editing is a replacement, the server having no PATCH for linkifiers. A new pattern goes in
   * before the old one goes; the same pattern (refused twice) after, with the old one put back if
   * the new one is refused.
   */
  const replace = async (id: number, oldPattern: string, oldUrl: string, nextPattern: string, nextUrl: string) =>
    run(async () => {
      try {
        if (nextPattern !== oldPattern) {
          await api.post("/realm/filters", { pattern: nextPattern, url_format_string: nextUrl });
          await api.delete("/realm/filters/{filter_id}", { filter_id: id });
          return;
        }
        await api.delete("/realm/filters/{filter_id}", { filter_id: id });
        try {
          await api.post("/realm/filters", { pattern: nextPattern, url_format_string: nextUrl });
        } catch (error) {
          await api.post("/realm/filters", { pattern: oldPattern, url_format_string: oldUrl }).catch(() => undefined);
          throw error;
        }
      } finally {
        filters.reload();
      }
    }, "Linkifier saved");
  return (
    <>
      {admin && (
        <Section title="Add a linkifier" intro="Turns text matching a pattern into a link, e.g. #(?P<id>[0-9]+) with https://tracker.example.com/issue/%(id)s.">
          <form class="set-form" onSubmit={add}>
            <TextInput label="Pattern (a regular expression with named groups)" value={pattern} onInput={setPattern} required placeholder="#(?P<id>[0-9]+)" />
            <TextInput label="URL format" value={url} onInput={setUrl} required placeholder="https://tracker.example.com/issue/%(id)s" />
            <div class="set-actions">
              <button type="submit" class="set-btn set-btn-primary" disabled={!pattern.trim() || !url.trim() || outcome.kind === "busy"}>
                Add linkifier
              </button>
            </div>
          </form>
        </Section>
      )}
      <Section title="Linkifiers">
        <Status outcome={outcome} />
        {!filters.data ? (
          <Loading error={filters.error} />
        ) : filters.data.length === 0 ? (
          <p class="set-muted">No linkifiers.</p>
        ) : (
          filters.data.map(([p, u, id]) => <LinkifierRow key={id} pattern={p} url={u} admin={admin} onRemove={() => remove(id)} onSave={(np, nu) => replace(id, p, u, np, nu)} />)
        )}
      </Section>
    </>
  );
}

function LinkifierRow(props: { pattern: string; url: string; admin: boolean; onRemove(): void; onSave(pattern: string, url: string): Promise<boolean> }) {
  const [editing, setEditing] = useState(false);
  const [pattern, setPattern] = useState(props.pattern);
  const [url, setUrl] = useState(props.url);
  if (editing) {
    return (
      <form
        class="set-card"
        onSubmit={(e) => {
          e.preventDefault();
          void props.onSave(pattern.trim(), url.trim()).then((ok) => ok && setEditing(false));
        }}
      >
        <TextInput label="Pattern" value={pattern} onInput={setPattern} required />
        <TextInput label="URL format" value={url} onInput={setUrl} required />
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary">
            Save
          </button>
          <button type="button" class="set-btn" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </div>
      </form>
    );
  }
  return (
    <div class="set-card">
      <div class="set-card-head">
        <strong>
          <span class="set-key">{props.pattern}</span>
        </strong>
        {props.admin && (
          <div class="set-row-actions">
            <button type="button" class="set-btn set-btn-small" onClick={() => setEditing(true)} aria-label={`Edit linkifier ${props.pattern}`}>
              Edit
            </button>
            <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={props.onRemove} aria-label={`Delete linkifier ${props.pattern}`}>
              Delete
            </button>
          </div>
        )}
      </div>
      <p class="set-muted">→ {props.url}</p>
    </div>
  );
}

// ---- User groups ----

export function UserGroupsSection() {
  const data = useLoad(async () => {
    const [groups, users] = await Promise.all([api.get("/user_groups"), api.get("/users")]);
    return { groups: groups.user_groups.filter((g) => !g.deactivated), users: users.members.filter((u) => u.is_active && !u.is_bot) };
  });
  const mayEdit = isAdmin.value || registered.value?.realm_user_group_edit_policy !== 2;
  if (!data.data) return <Loading error={data.error} />;
  const people = [...data.data.users].sort((a, b) => a.full_name.localeCompare(b.full_name));
  const groups = data.data.groups.filter((g) => !g.is_system_group).sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      {mayEdit && <CreateGroup users={people} onCreated={data.reload} />}
      <Section title="User groups" intro="Mention a group with @*name* to notify all its members.">
        {groups.length === 0 && <p class="set-muted">No user groups yet.</p>}
        {groups.map((g) => (
          <GroupCard key={g.id} group={g} users={people} mayEdit={mayEdit} onChange={data.reload} />
        ))}
      </Section>
    </>
  );
}

function MemberPicker(props: { users: User[]; selected: Set<number>; onToggle(id: number, on: boolean): void; label: string }) {
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const shown = props.users.filter((u) => !needle || u.full_name.toLowerCase().includes(needle));
  return (
    <fieldset class="set-plain">
      <legend>{props.label}</legend>
      <TextInput label="Filter people" type="search" class="set-search" value={filter} onInput={setFilter} />
      <div class="set-members">
        {shown.map((u) => (
          <MemberBox key={u.user_id} user={u} checked={props.selected.has(u.user_id)} onChange={(on) => props.onToggle(u.user_id, on)} />
        ))}
      </div>
    </fieldset>
  );
}

function MemberBox(props: { user: User; checked: boolean; onChange(on: boolean): void }) {
  const id = useId("member");
  return (
    <div class="set-toggle">
      <input id={id} type="checkbox" checked={props.checked} onChange={(e) => props.onChange(e.currentTarget.checked)} />
      <label for={id}>{props.user.full_name}</label>
    </div>
  );
}

function CreateGroup(props: { users: User[]; onCreated(): void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [members, setMembers] = useState<Set<number>>(() => new Set([myUserId.value]));
  const [outcome, run] = useOutcome();
  const toggle = (id: number, on: boolean) => {
    const next = new Set(members);
    if (on) next.add(id);
    else next.delete(id);
    setMembers(next);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.post("/user_groups/create", { name: name.trim(), description: description.trim(), members: [...members] });
      setName("");
      setDescription("");
      setMembers(new Set([myUserId.value]));
      props.onCreated();
    }, "Group created");
  };
  return (
    <details class="set-details">
      <summary class="set-btn">Create a user group</summary>
      <form class="set-form" onSubmit={submit}>
        <div class="set-inline">
          <TextInput label="Name" value={name} onInput={setName} required maxLength={100} />
          <TextInput label="Description" value={description} onInput={setDescription} maxLength={1024} />
        </div>
        <MemberPicker label="Members" users={props.users} selected={members} onToggle={toggle} />
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={!name.trim() || outcome.kind === "busy"}>
            Create group
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </details>
  );
}

function GroupCard(props: { group: Schemas["UserGroup"]; users: User[]; mayEdit: boolean; onChange(): void }) {
  const { group } = props;
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(group.name);
  const [description, setDescription] = useState(group.description);
  const [members, setMembers] = useState<Set<number>>(() => new Set(group.members));
  const [outcome, run] = useOutcome();
  const names = group.members.map((id) => props.users.find((u) => u.user_id === id)?.full_name).filter(Boolean);
  const toggle = (id: number, on: boolean) => {
    const next = new Set(members);
    if (on) next.add(id);
    else next.delete(id);
    setMembers(next);
  };
  const save = (e: Event) => {
    e.preventDefault();
    const before = new Set(group.members);
    const add = [...members].filter((id) => !before.has(id));
    const remove = [...before].filter((id) => !members.has(id));
    void run(async () => {
      if (name.trim() !== group.name || description.trim() !== group.description) {
        await api.patch("/user_groups/{group_id}", {
          group_id: group.id,
          ...(name.trim() !== group.name ? { name: name.trim() } : {}),
          ...(description.trim() !== group.description ? { description: description.trim() } : {}),
        });
      }
      if (add.length || remove.length) await api.post("/user_groups/{group_id}/members", { group_id: group.id, add, delete: remove });
      setEditing(false);
      props.onChange();
    });
  };
  const remove = () => {
    if (!window.confirm(`Delete the group ${group.name}?`)) return;
    void run(async () => {
      await api.delete("/user_groups/{group_id}", { group_id: group.id });
      props.onChange();
    }, "Deleted");
  };
  return (
    <div class="set-card">
      <div class="set-card-head">
        <strong>@{group.name}</strong>
        <span class="set-muted">
          {group.members.length} {group.members.length === 1 ? "member" : "members"}
        </span>
        {props.mayEdit && !editing && (
          <div class="set-row-actions">
            <button type="button" class="set-btn set-btn-small" onClick={() => setEditing(true)} aria-label={`Edit group ${group.name}`}>
              Edit
            </button>
            <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={remove} aria-label={`Delete group ${group.name}`}>
              Delete
            </button>
          </div>
        )}
      </div>
      {editing ? (
        <form onSubmit={save}>
          <div class="set-inline">
            <TextInput label="Name" value={name} onInput={setName} required maxLength={100} />
            <TextInput label="Description" value={description} onInput={setDescription} maxLength={1024} />
          </div>
          <MemberPicker label="Members" users={props.users} selected={members} onToggle={toggle} />
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
          {group.description && <p class="set-muted">{group.description}</p>}
          <p>{names.join(", ")}</p>
        </>
      )}
      {outcome.kind !== "idle" && <Status outcome={outcome} />}
    </div>
  );
}

// ---- Custom profile fields ----

const FIELD_TYPES: Record<number, string> = {
  1: "Short text",
  2: "Long text",
  3: "List of options",
  4: "Date",
  5: "Link",
  6: "Users",
  7: "External account",
  8: "Pronouns",
};

export function ProfileFieldsSection() {
  const fields = useLoad(async () => (await api.get("/realm/profile_fields")).custom_fields);
  const admin = isAdmin.value;
  const [outcome, run] = useOutcome();
  if (!fields.data) return <Loading error={fields.error} />;
  const remove = (id: number, name: string) => {
    if (!window.confirm(`Delete the field “${name}” and everyone's values for it?`)) return;
    void run(async () => {
      await api.delete("/realm/profile_fields/{field_id}", { field_id: id });
      fields.reload();
    }, "Field deleted");
  };
  const sorted = [...fields.data].sort((a, b) => a.order - b.order);
  return (
    <>
      {admin && <AddProfileField onAdded={fields.reload} />}
      <Section title="Custom profile fields" intro="Extra fields everyone's profile shows, such as a phone number or a team.">
        <Status outcome={outcome} />
        {sorted.length === 0 ? (
          <p class="set-muted">No custom profile fields.</p>
        ) : (
          <table class="set-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Hint</th>
                {admin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {sorted.map((f) => (
                <tr key={f.id}>
                  <td>{f.name}</td>
                  <td>{FIELD_TYPES[f.type] ?? f.type}</td>
                  <td>{f.hint}</td>
                  {admin && (
                    <td>
                      <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={() => remove(f.id, f.name)} aria-label={`Delete field ${f.name}`}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}

function AddProfileField(props: { onAdded(): void }) {
  const [name, setName] = useState("");
  const [hint, setHint] = useState("");
  const [type, setType] = useState("1");
  const [options, setOptions] = useState("");
  const [outcome, run] = useOutcome();
  const optionsId = useId();
  const submit = (e: Event) => {
    e.preventDefault();
    const params: Record<string, unknown> = { name: name.trim(), hint: hint.trim(), field_type: Number(type) };
    if (type === "3") {
      const lines = options
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      params.field_data = Object.fromEntries(lines.map((text, i) => [String(i), { text, order: String(i + 1) }]));
    }
    void run(async () => {
      await api.post("/realm/profile_fields", params);
      setName("");
      setHint("");
      setOptions("");
      props.onAdded();
    }, "Field added");
  };
  return (
    <Section title="Add a profile field">
      <form class="set-form" onSubmit={submit}>
        <Select label="Type" value={type} onChange={setType} choices={[1, 2, 3, 4, 5, 6, 8].map((t) => ({ value: String(t), label: FIELD_TYPES[t] }))} />
        <div class="set-inline">
          <TextInput label="Label" value={name} onInput={setName} required maxLength={40} />
          <TextInput label="Hint" value={hint} onInput={setHint} maxLength={80} />
        </div>
        {type === "3" && (
          <div class="set-field">
            <label for={optionsId}>Options, one a line</label>
            <textarea id={optionsId} value={options} onInput={(e) => setOptions(e.currentTarget.value)} required />
          </div>
        )}
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={!name.trim() || outcome.kind === "busy"}>
            Add field
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}
