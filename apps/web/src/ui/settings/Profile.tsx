// Profile (name, avatar, custom profile fields) and account (email, password, API key, presence).
import { useState } from "preact/hooks";
import { api, type Schemas } from "../../api/client";
import { isAdmin, me, myUserId, registered, usersById } from "../../state/store";
import { Loading, Pic, Section, Status, TextInput, Toggle, currentSettings, patchUserSettings, sendForm, useId, useLoad, useOutcome } from "./common";
import { SettingSelect } from "./Preferences";

type Field = Schemas["CustomProfileField"];

export function ProfileSection() {
  const user = me.value;
  const state = registered.value;
  const [name, setName] = useState(user?.full_name ?? "");
  const [nameOutcome, runName] = useOutcome();
  const [avatarOutcome, runAvatar] = useOutcome();
  const [avatar, setAvatar] = useState<string | null>(null);
  const fileId = useId();
  const nameLocked = Boolean(state?.realm_name_changes_disabled) && !isAdmin.value;
  const avatarLocked = Boolean(state?.realm_avatar_changes_disabled) && !isAdmin.value;
  const shown = avatar ?? user?.avatar_url ?? null;

  const saveName = (e: Event) => {
    e.preventDefault();
    void runName(async () => {
      const answer = await api.patch("/settings", { full_name: name.trim() });
      if (answer.full_name) setName(answer.full_name);
    });
  };

  const upload = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    const form = new FormData();
    form.append("file", file, file.name);
    void runAvatar(async () => {
      const answer = await sendForm("POST", "/users/me/avatar", form);
      setAvatar(String(answer.avatar_url));
      input.value = "";
    }, "Avatar uploaded");
  };

  const removeAvatar = () =>
    void runAvatar(async () => {
      const answer = await api.delete("/users/me/avatar");
      setAvatar(String((answer as { avatar_url?: string }).avatar_url ?? ""));
    }, "Avatar removed");

  return (
    <>
      <Section title="Your name">
        <form onSubmit={saveName}>
          <TextInput label="Full name" value={name} onInput={setName} disabled={nameLocked} maxLength={60} required />
          {nameLocked && <p class="set-muted">Your organization does not allow name changes.</p>}
          <div class="set-actions">
            <button class="set-btn set-btn-primary" type="submit" disabled={nameLocked || !name.trim() || nameOutcome.kind === "busy"}>
              Save name
            </button>
          </div>
          <Status outcome={nameOutcome} />
        </form>
      </Section>
      <Section title="Avatar">
        <Pic url={shown} name={user?.full_name ?? ""} large alt="Your avatar" />
        <div class="set-actions">
          <label for={fileId}>Upload a new avatar</label>
          <input id={fileId} type="file" accept="image/*" disabled={avatarLocked} onChange={upload} />
          {user?.avatar_source === "U" || avatar ? (
            <button type="button" class="set-btn set-btn-danger" disabled={avatarLocked} onClick={removeAvatar}>
              Delete avatar
            </button>
          ) : null}
        </div>
        {avatarLocked && <p class="set-muted">Your organization does not allow avatar changes.</p>}
        <Status outcome={avatarOutcome} />
      </Section>
      <ProfileFields />
    </>
  );
}

/** Custom profile fields: shown to everyone; the server lets only administrators change them here. */
function ProfileFields() {
  const fields = useLoad(async () => (await api.get("/realm/profile_fields")).custom_fields as Field[]);
  const mine = useLoad(async () => (await api.get("/users/me")).profile_data ?? {});
  const [values, setValues] = useState<Record<number, string>>({});
  const [outcome, run] = useOutcome();
  if (!fields.data || !mine.data) return <Loading error={fields.error ?? mine.error} />;
  if (fields.data.length === 0) return null;
  const editable = isAdmin.value;
  const current = (field: Field) => values[field.id] ?? mine.data?.[String(field.id)]?.value ?? "";

  const save = (e: Event) => {
    e.preventDefault();
    const changes = Object.entries(values).map(([id, value]) => {
      const field = fields.data?.find((f) => f.id === Number(id));
      const parsed: string | number[] | null = value === "" ? null : field?.type === 6 ? parseUserIds(value) : value;
      return { id: Number(id), value: parsed };
    });
    void run(async () => {
      await api.patch("/users/{user_id}", { user_id: myUserId.value, profile_data: changes });
      setValues({});
      mine.reload();
    });
  };

  return (
    <Section title="Profile fields" intro={editable ? undefined : "Only administrators can change profile fields on this server."}>
      <form onSubmit={save}>
        {[...fields.data]
          .sort((a, b) => a.order - b.order)
          .map((field) => (
            <FieldInput key={field.id} field={field} value={current(field)} disabled={!editable} onInput={(v) => setValues({ ...values, [field.id]: v })} />
          ))}
        {editable && (
          <div class="set-actions">
            <button class="set-btn set-btn-primary" type="submit" disabled={Object.keys(values).length === 0 || outcome.kind === "busy"}>
              Save profile fields
            </button>
          </div>
        )}
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}

function parseUserIds(value: string): number[] {
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed)) return parsed.map(Number).filter(Number.isInteger);
  } catch {
    // A comma-separated list, as typed.
  }
  return value
    .split(/[,\s]+/)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
}

function FieldInput(props: { field: Field; value: string; disabled: boolean; onInput(value: string): void }) {
  const { field } = props;
  const id = useId();
  const hint = field.hint ? <span class="set-hint">{field.hint}</span> : null;
  let control;
  if (field.type === 2) {
    control = <textarea id={id} value={props.value} disabled={props.disabled} onInput={(e) => props.onInput(e.currentTarget.value)} />;
  } else if (field.type === 3) {
    let options: [string, { text: string; order: string | number }][] = [];
    try {
      options = Object.entries(JSON.parse(field.field_data || "{}") as Record<string, { text: string; order: string | number }>);
    } catch {
      options = [];
    }
    options.sort((a, b) => Number(a[1].order) - Number(b[1].order));
    control = (
      <select id={id} value={props.value} disabled={props.disabled} onChange={(e) => props.onInput(e.currentTarget.value)}>
        <option value="">—</option>
        {options.map(([key, option]) => (
          <option key={key} value={key}>
            {option.text}
          </option>
        ))}
      </select>
    );
  } else if (field.type === 6) {
    const ids = parseUserIds(props.value);
    const names = ids.map((uid) => usersById.value.get(uid)?.full_name ?? `#${uid}`).join(", ");
    control = (
      <>
        <input id={id} type="text" value={ids.join(", ")} disabled={props.disabled} onInput={(e) => props.onInput(e.currentTarget.value)} />
        <span class="set-hint">User ids, separated by commas{names ? `: ${names}` : ""}</span>
      </>
    );
  } else {
    const type = field.type === 4 ? "date" : field.type === 5 ? "url" : "text";
    control = <input id={id} type={type} value={props.value} disabled={props.disabled} onInput={(e) => props.onInput(e.currentTarget.value)} />;
  }
  return (
    <div class="set-field">
      <label for={id}>{field.name}</label>
      {control}
      {hint}
    </div>
  );
}

export function AccountSection() {
  const user = me.value;
  const state = registered.value;
  const email = state?.delivery_email ?? user?.delivery_email ?? user?.email ?? "";
  return (
    <>
      <Section title="Email">
        <p>
          Your email address: <strong>{email}</strong>
        </p>
        <p class="set-muted">This server has no way to change it yet.</p>
      </Section>
      <PasswordForm />
      <ApiKeyForm email={email} />
      <DeactivateAccount />
      <Section title="Privacy">
        <SettingToggle name="presence_enabled" label="Show others when I'm online" />
        {/* Each user's own since Zulip 9.0 (feature level 163). */}
        <SettingSelect name="email_address_visibility" label="Who can see my email address" numeric choices={EMAIL_VISIBILITY_CHOICES} />
        <SettingToggle name="send_read_receipts" label="Let others see when I've read their messages" />
        <SettingToggle name="send_private_typing_notifications" label="Let recipients see when I'm typing a direct message" />
        <SettingToggle name="send_stream_typing_notifications" label="Let others see when I'm typing in a stream" />
      </Section>
    </>
  );
}

const EMAIL_VISIBILITY_CHOICES = [
  { value: "1", label: "Everyone" },
  { value: "2", label: "Members" },
  { value: "5", label: "Moderators" },
  { value: "3", label: "Administrators" },
  { value: "4", label: "Nobody" },
];

type BoolSetting = {
  [K in keyof NonNullable<NonNullable<typeof registered.value>["user_settings"]>]: NonNullable<NonNullable<typeof registered.value>["user_settings"]>[K] extends boolean ? K : never;
}[keyof NonNullable<NonNullable<typeof registered.value>["user_settings"]>];

/** One boolean personal setting, saved as soon as it changes (as Zulip does). */
export function SettingToggle(props: { name: BoolSetting; label: string; hint?: string }) {
  const settings = currentSettings();
  const [outcome, run] = useOutcome();
  // The box shows the choice while it is being saved (a controlled box would flip back until then).
  const [pending, setPending] = useState<boolean | null>(null);
  const value = pending ?? Boolean(settings[props.name]);
  const change = (next: boolean) => {
    setPending(next);
    void run(async () => {
      await api.patch("/settings", { [props.name]: next });
      patchUserSettings({ [props.name]: next });
    }).then(() => setPending(null));
  };
  return (
    <div class="set-inline">
      <Toggle label={props.label} hint={props.hint} checked={value} disabled={outcome.kind === "busy"} onChange={change} />
      {outcome.kind !== "idle" && <Status outcome={outcome} />}
    </div>
  );
}

function DeactivateAccount() {
  const [outcome, run] = useOutcome();
  // An organization keeps an owner (Zulip refuses the last one's deactivation; this server did not, at the time of writing).
  const onlyOwner = me.value?.role === 100 && ![...usersById.value.values()].some((u) => u.role === 100 && u.is_active && !u.is_bot && u.user_id !== myUserId.value);
  const deactivate = () => {
    if (!window.confirm("Deactivate your account? You are signed out at once, and only an administrator can reactivate it.")) return;
    void run(async () => {
      await api.delete("/users/me");
      window.location.assign("/login");
    }, "Account deactivated");
  };
  return (
    <Section title="Deactivate account">
      <div class="set-actions">
        <button type="button" class="set-btn set-btn-danger" disabled={onlyOwner} onClick={deactivate}>
          Deactivate my account
        </button>
      </div>
      {onlyOwner && <p class="set-muted">You are the organization's only owner: make someone else an owner first.</p>}
      <Status outcome={outcome} />
    </Section>
  );
}

function PasswordForm() {
  const [oldPassword, setOld] = useState("");
  const [newPassword, setNew] = useState("");
  const [confirm, setConfirm] = useState("");
  const [outcome, run, setOutcome] = useOutcome();
  const min = registered.value?.password_min_length ?? 6;
  const submit = (e: Event) => {
    e.preventDefault();
    if (newPassword !== confirm) {
      setOutcome({ kind: "error", text: "The new passwords do not match." });
      return;
    }
    void run(async () => {
      await api.patch("/settings", { old_password: oldPassword, new_password: newPassword });
      setOld("");
      setNew("");
      setConfirm("");
      // The server ends every session of the account on a password change, this one too: sign in again.
      window.location.assign("/login");
    }, "Password changed: sign in again with the new one");
  };
  return (
    <Section title="Password">
      <form onSubmit={submit}>
        {/* For password managers: which account the password belongs to. */}
        <input type="text" hidden readOnly autoComplete="username" value={registered.value?.delivery_email ?? ""} />
        <TextInput label="Current password" type="password" autoComplete="current-password" value={oldPassword} onInput={setOld} required />
        <TextInput label="New password" type="password" autoComplete="new-password" value={newPassword} onInput={setNew} minLength={min} required hint={`At least ${min} characters.`} />
        <TextInput label="New password again" type="password" autoComplete="new-password" value={confirm} onInput={setConfirm} required />
        <div class="set-actions">
          <button class="set-btn set-btn-primary" type="submit" disabled={!oldPassword || !newPassword || outcome.kind === "busy"}>
            Change password
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}

function ApiKeyForm(props: { email: string }) {
  const [password, setPassword] = useState("");
  const [key, setKey] = useState<string | null>(null);
  const [outcome, run] = useOutcome();
  const show = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const answer = await api.post("/fetch_api_key", { username: props.email, password });
      setKey(answer.api_key);
      setPassword("");
    }, "Here is your API key");
  };
  const regenerate = () => {
    if (!window.confirm("Generate a new API key? Every app that uses the current one stops working.")) return;
    void run(async () => {
      const answer = await api.post("/users/me/api_key/regenerate");
      setKey(answer.api_key);
    }, "New API key generated");
  };
  return (
    <Section title="API key" intro="Your API key lets programs act as you. Enter your password to see it.">
      {key ? (
        <>
          <p>
            <span class="set-key">{key}</span>
          </p>
          <div class="set-actions">
            <button type="button" class="set-btn" onClick={() => setKey(null)}>
              Hide
            </button>
            <button type="button" class="set-btn set-btn-danger" onClick={regenerate}>
              Generate a new API key
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={show}>
          <input type="text" hidden readOnly autoComplete="username" value={props.email} />
          <TextInput label="Your password" type="password" autoComplete="current-password" value={password} onInput={setPassword} required />
          <div class="set-actions">
            <button class="set-btn set-btn-primary" type="submit" disabled={!password || outcome.kind === "busy"}>
              Show API key
            </button>
          </div>
        </form>
      )}
      <Status outcome={outcome} />
    </Section>
  );
}
