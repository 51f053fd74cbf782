// The organization's users (roles, deactivate, reactivate, add) and all its bots.
import { useState } from "preact/hooks";
import { api, type Schemas } from "../../api/client";
import { isAdmin, me, myUserId } from "../../state/store";
import { BOT_TYPES, Loading, Pic, ROLE_NAMES, Section, Status, TextInput, formatDate, useId, useLoad, useOutcome } from "../settings/common";

type User = Schemas["User"];

const ROLE_CHOICES = [100, 200, 400, 600];

function useUsers() {
  return useLoad(async () => (await api.get("/users")).members);
}

/** A random initial password the administrator hands over (the user changes it later). */
function randomPassword(): string {
  const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join("");
}

export function UsersSection() {
  const users = useUsers();
  const [query, setQuery] = useState("");
  const [showInactive, setShowInactive] = useState(false);
  const inactiveId = useId();
  const admin = isAdmin.value;
  if (!users.data) return <Loading error={users.error} />;
  const needle = query.trim().toLowerCase();
  const people = users.data
    .filter((u) => !u.is_bot && (showInactive ? !u.is_active : u.is_active))
    .filter((u) => !needle || u.full_name.toLowerCase().includes(needle) || (u.delivery_email ?? u.email).toLowerCase().includes(needle))
    .sort((a, b) => a.full_name.localeCompare(b.full_name));
  return (
    <>
      {admin && <AddUser onAdded={users.reload} />}
      <Section title={showInactive ? "Deactivated users" : "Active users"}>
        <div class="set-inline">
          <TextInput label="Search users" type="search" class="set-search" value={query} onInput={setQuery} placeholder="Name or email" />
          <div class="set-toggle">
            <input id={inactiveId} type="checkbox" checked={showInactive} onChange={(e) => setShowInactive(e.currentTarget.checked)} />
            <label for={inactiveId}>Show deactivated users</label>
          </div>
        </div>
        <p class="set-muted" aria-live="polite">
          {people.length} {people.length === 1 ? "user" : "users"}
        </p>
        <table class="set-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {people.map((user) => (
              <UserRow key={user.user_id} user={user} admin={admin} onChange={users.reload} />
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}

function UserRow(props: { user: User; admin: boolean; onChange(): void }) {
  const { user } = props;
  const [outcome, run] = useOutcome();
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(user.full_name);
  const roleId = useId();
  const self = user.user_id === myUserId.value;
  // Only owners may make or unmake owners (the server says so too).
  const canOwn = me.value?.role === 100;
  const setRole = (role: number) =>
    void run(async () => {
      await api.patch("/users/{user_id}", { user_id: user.user_id, role });
      props.onChange();
    }, `${user.full_name} is now ${ROLE_NAMES[role]?.toLowerCase() ?? role}`);
  const deactivate = () => {
    if (!window.confirm(`Deactivate ${user.full_name}? They are signed out and can no longer sign in.`)) return;
    void run(async () => {
      await api.delete("/users/{user_id}", { user_id: user.user_id });
      props.onChange();
    }, "Deactivated");
  };
  const reactivate = () =>
    void run(async () => {
      await api.post("/users/{user_id}/reactivate", { user_id: user.user_id });
      props.onChange();
    }, "Reactivated");
  const rename = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.patch("/users/{user_id}", { user_id: user.user_id, full_name: name.trim() });
      setRenaming(false);
      props.onChange();
    }, "Renamed");
  };
  return (
    <tr class={user.is_active ? "" : "set-inactive"}>
      <td>
        {renaming ? (
          <form class="set-inline" onSubmit={rename}>
            <TextInput label={`New name for ${user.full_name}`} value={name} onInput={setName} required maxLength={60} />
            <button type="submit" class="set-btn set-btn-small set-btn-primary">
              Save
            </button>
            <button type="button" class="set-btn set-btn-small" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <>
            <Pic url={user.avatar_url} name={user.full_name} /> {user.full_name}
            {self && <span class="set-muted"> (you)</span>}
          </>
        )}
      </td>
      <td class="set-break">{user.delivery_email ?? user.email}</td>
      <td>
        {props.admin && user.is_active ? (
          <>
            <label class="set-sr-only" for={roleId}>
              Role of {user.full_name}
            </label>
            <select id={roleId} value={String(user.role)} disabled={outcome.kind === "busy" || (user.role === 100 && !canOwn)} onChange={(e) => setRole(Number(e.currentTarget.value))}>
              {ROLE_CHOICES.filter((r) => r !== 100 || canOwn || user.role === 100).map((r) => (
                <option key={r} value={String(r)}>
                  {ROLE_NAMES[r]}
                </option>
              ))}
            </select>
          </>
        ) : (
          (ROLE_NAMES[user.role] ?? user.role)
        )}
      </td>
      <td class="set-nowrap">{formatDate(user.date_joined)}</td>
      {props.admin && (
        <td>
          <div class="set-row-actions">
            {user.is_active && !renaming && (
              <button type="button" class="set-btn set-btn-small" onClick={() => (setName(user.full_name), setRenaming(true))} aria-label={`Rename ${user.full_name}`}>
                Rename
              </button>
            )}
            {user.is_active ? (
              !self && (
                <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={deactivate}>
                  Deactivate
                </button>
              )
            ) : (
              <button type="button" class="set-btn set-btn-small" onClick={reactivate}>
                Reactivate
              </button>
            )}
          </div>
          {outcome.kind !== "idle" && <Status outcome={outcome} />}
        </td>
      )}
    </tr>
  );
}

function AddUser(props: { onAdded(): void }) {
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [password, setPassword] = useState(randomPassword);
  const [done, setDone] = useState<{ email: string; password: string } | null>(null);
  const [outcome, run] = useOutcome();
  const submit = (e: Event) => {
    e.preventDefault();
    const account = { email: email.trim(), password };
    void run(async () => {
      await api.post("/users", { email: account.email, password, full_name: name.trim() });
      setDone(account);
      setEmail("");
      setName("");
      setPassword(randomPassword());
      props.onAdded();
    }, "User added");
  };
  return (
    <details class="set-details" open={done !== null}>
      <summary class="set-btn">Add a user</summary>
      <form class="set-form" onSubmit={submit}>
        <p class="set-muted">Creates the account at once; give the new user the address and the initial password below.</p>
        <div class="set-inline">
          <TextInput label="Email" type="email" value={email} onInput={setEmail} required autoComplete="off" />
          <TextInput label="Full name" value={name} onInput={setName} required maxLength={60} autoComplete="off" />
          <TextInput label="Initial password" class="set-password-shown" value={password} onInput={setPassword} required minLength={6} autoComplete="new-password" />
        </div>
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={!email.trim() || !name.trim() || !password || outcome.kind === "busy"}>
            Add user
          </button>
          <button type="button" class="set-btn" onClick={() => setPassword(randomPassword())}>
            New random password
          </button>
        </div>
        <Status outcome={outcome} />
        {done && (
          <p role="note">
            Hand over: <strong>{done.email}</strong>, initial password <span class="set-key">{done.password}</span>
          </p>
        )}
      </form>
    </details>
  );
}

export function AdminBotsSection() {
  const users = useUsers();
  const admin = isAdmin.value;
  if (!users.data) return <Loading error={users.error} />;
  const names = new Map(users.data.map((u) => [u.user_id, u.full_name]));
  const bots = users.data.filter((u) => u.is_bot).sort((a, b) => Number(b.is_active) - Number(a.is_active) || a.full_name.localeCompare(b.full_name));
  return (
    <Section title="All bots" intro="Bots are created by their owners in Settings › Bots.">
      {bots.length === 0 ? (
        <p class="set-muted">The organization has no bots.</p>
      ) : (
        <table class="set-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Type</th>
              <th scope="col">Owner</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {bots.map((bot) => (
              <BotRow key={bot.user_id} bot={bot} owner={bot.bot_owner_id ? (names.get(bot.bot_owner_id) ?? "") : ""} admin={admin} onChange={users.reload} />
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function BotRow(props: { bot: User; owner: string; admin: boolean; onChange(): void }) {
  const { bot } = props;
  const [outcome, run] = useOutcome();
  const deactivate = () => {
    if (!window.confirm(`Deactivate the bot ${bot.full_name}?`)) return;
    void run(async () => {
      await api.delete("/bots/{bot_id}", { bot_id: bot.user_id });
      props.onChange();
    }, "Deactivated");
  };
  const reactivate = () =>
    void run(async () => {
      await api.post("/users/{user_id}/reactivate", { user_id: bot.user_id });
      props.onChange();
    }, "Reactivated");
  return (
    <tr class={bot.is_active ? "" : "set-inactive"}>
      <td>
        <Pic url={bot.avatar_url} name={bot.full_name} /> {bot.full_name}
        {!bot.is_active && <span class="set-muted"> (deactivated)</span>}
      </td>
      <td class="set-break">{bot.email}</td>
      <td>{BOT_TYPES[bot.bot_type ?? 1] ?? "Bot"}</td>
      <td>{props.owner}</td>
      {props.admin && (
        <td>
          {bot.is_active ? (
            <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={deactivate}>
              Deactivate
            </button>
          ) : (
            <button type="button" class="set-btn set-btn-small" onClick={reactivate}>
              Reactivate
            </button>
          )}
          {outcome.kind !== "idle" && <Status outcome={outcome} />}
        </td>
      )}
    </tr>
  );
}
