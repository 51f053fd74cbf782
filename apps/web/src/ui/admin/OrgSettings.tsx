// The organization's profile and settings (PATCH /realm): a form per group, saving what changed.
import { useState } from "preact/hooks";
import { api } from "../../api/client";
import { isAdmin, registered, streamsById } from "../../state/store";
import { type Choice, type Registered, Pic, Section, Status, patchRegistered, useId, useOutcome } from "../settings/common";

type Kind = "bool" | "select" | "number" | "minutes" | "text" | "textarea" | "stream";

export interface SettingSpec {
  /** The PATCH /realm parameter; /register shows it as `realm_<key>`. */
  key: string;
  label: string;
  kind: Kind;
  choices?: Choice[];
  hint?: string;
  max?: number;
}

type Value = string | number | boolean;

function currentValue(state: Registered | null, spec: SettingSpec): Value {
  const raw = (state as Record<string, unknown> | null)?.[`realm_${spec.key}`];
  if (spec.kind === "bool") return Boolean(raw);
  if (spec.kind === "minutes") return typeof raw === "number" ? Math.round(raw / 60) : 0;
  if (spec.kind === "number" || spec.kind === "stream") return typeof raw === "number" ? raw : spec.kind === "stream" ? -1 : 0;
  if (spec.kind === "select") return raw === undefined || raw === null ? "" : String(raw);
  return typeof raw === "string" ? raw : "";
}

/** What PATCH /realm takes for a field's form value. */
function wireValue(spec: SettingSpec, value: Value): Value {
  if (spec.kind === "minutes") return Math.max(0, Math.round(Number(value) * 60));
  if (spec.kind === "select") return /^-?\d+$/.test(String(value)) ? Number(value) : value;
  if (spec.kind === "number" || spec.kind === "stream") return Number(value);
  return value;
}

export function RealmForm(props: { title: string; intro?: string; fields: SettingSpec[] }) {
  const state = registered.value;
  const admin = isAdmin.value;
  const [edits, setEdits] = useState<Record<string, Value>>({});
  const [outcome, run] = useOutcome();
  const value = (spec: SettingSpec) => (spec.key in edits ? edits[spec.key] : currentValue(state, spec));
  const changed = props.fields.filter((spec) => spec.key in edits && edits[spec.key] !== currentValue(state, spec));

  const submit = (e: Event) => {
    e.preventDefault();
    const changes: Record<string, Value> = {};
    for (const spec of changed) changes[spec.key] = wireValue(spec, edits[spec.key]);
    void run(async () => {
      await api.patch("/realm", changes);
      const local: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(changes)) local[`realm_${key}`] = v;
      patchRegistered(local as Partial<Registered>);
      setEdits({});
    });
  };

  return (
    <Section title={props.title} intro={props.intro}>
      <form onSubmit={submit}>
        <fieldset class="set-plain" disabled={!admin}>
          {props.fields.map((spec) => (
            <SettingControl key={spec.key} spec={spec} value={value(spec)} onChange={(v) => setEdits({ ...edits, [spec.key]: v })} />
          ))}
        </fieldset>
        {admin && (
          <div class="set-actions">
            <button type="submit" class="set-btn set-btn-primary" disabled={changed.length === 0 || outcome.kind === "busy"}>
              Save changes
            </button>
            {changed.length > 0 && (
              <button type="button" class="set-btn" onClick={() => setEdits({})}>
                Discard
              </button>
            )}
          </div>
        )}
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}

function SettingControl(props: { spec: SettingSpec; value: Value; onChange(value: Value): void }) {
  const { spec } = props;
  const id = useId("realm");
  const hint = spec.hint ? <span class="set-hint">{spec.hint}</span> : null;
  if (spec.kind === "bool") {
    return (
      <div class="set-toggle">
        <input id={id} type="checkbox" checked={Boolean(props.value)} onChange={(e) => props.onChange(e.currentTarget.checked)} />
        <label for={id}>{spec.label}</label>
        {hint}
      </div>
    );
  }
  let control;
  if (spec.kind === "select" || spec.kind === "stream") {
    const choices =
      spec.kind === "stream"
        ? [{ value: "-1", label: "None" }, ...[...streamsById.value.values()].sort((a, b) => a.name.localeCompare(b.name)).map((s) => ({ value: String(s.stream_id), label: `#${s.name}` }))]
        : (spec.choices ?? []);
    control = (
      <select id={id} value={String(props.value)} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    );
  } else if (spec.kind === "textarea") {
    control = <textarea id={id} value={String(props.value)} maxLength={spec.max} onInput={(e) => props.onChange(e.currentTarget.value)} />;
  } else if (spec.kind === "number" || spec.kind === "minutes") {
    control = <input id={id} type="number" min={0} value={String(props.value)} onInput={(e) => props.onChange(e.currentTarget.value === "" ? 0 : Number(e.currentTarget.value))} />;
  } else {
    control = <input id={id} type="text" value={String(props.value)} maxLength={spec.max} onInput={(e) => props.onChange(e.currentTarget.value)} />;
  }
  return (
    <div class="set-field">
      <label for={id}>{spec.label}</label>
      {control}
      {hint}
    </div>
  );
}

const WHO_CREATE: Choice[] = [
  { value: "1", label: "Members" },
  { value: "3", label: "Members past the waiting period" },
  { value: "2", label: "Administrators only" },
];

function ReadOnlyNote() {
  return isAdmin.value ? null : <p class="set-readonly-note">Only administrators can change these settings.</p>;
}

export function OrgProfileSection() {
  const state = registered.value;
  return (
    <>
      <ReadOnlyNote />
      <RealmForm
        title="Organization profile"
        fields={[
          { key: "name", label: "Organization name", kind: "text", max: 40 },
          { key: "description", label: "Description", kind: "textarea", max: 1000, hint: "Shown on the login page; Markdown allowed." },
        ]}
      />
      <Section title="Icon">
        <Pic url={state?.realm_icon_url} name={state?.realm_name ?? ""} large alt="The organization's icon" />
        <p class="set-muted">This server cannot change the icon yet.</p>
      </Section>
    </>
  );
}

export function OrgSettingsSection() {
  return (
    <>
      <ReadOnlyNote />
      <RealmForm
        title="Messages"
        fields={[
          { key: "allow_message_editing", label: "Allow editing messages", kind: "bool" },
          { key: "message_content_edit_limit_seconds", label: "Time limit for editing, in minutes", kind: "minutes", hint: "0 for no limit." },
          { key: "allow_community_topic_editing", label: "Let members edit the topics of others' messages", kind: "bool" },
          { key: "allow_message_deleting", label: "Let people delete their own messages", kind: "bool" },
          { key: "message_content_delete_limit_seconds", label: "Time limit for deleting, in minutes", kind: "minutes", hint: "0 for no limit." },
          { key: "allow_edit_history", label: "Show the edit history of messages", kind: "bool" },
          { key: "mandatory_topics", label: "Require a topic on stream messages", kind: "bool" },
          { key: "inline_image_preview", label: "Show previews of linked images", kind: "bool" },
          { key: "inline_url_embed_preview", label: "Show previews of linked websites", kind: "bool" },
          { key: "enable_read_receipts", label: "Enable read receipts", kind: "bool" },
        ]}
      />
      <RealmForm
        title="Notifications and defaults"
        fields={[
          { key: "notifications_stream_id", label: "Announce new streams in", kind: "stream" },
          { key: "signup_notifications_stream_id", label: "Announce new users in", kind: "stream" },
          { key: "send_welcome_emails", label: "Send welcome emails to new users", kind: "bool" },
          { key: "digest_emails_enabled", label: "Send weekly digest emails to inactive users", kind: "bool" },
          { key: "default_language", label: "Default language for new users", kind: "text", max: 10, hint: "A language code such as en or de." },
          { key: "default_twenty_four_hour_time", label: "New users see 24-hour times", kind: "bool" },
        ]}
      />
    </>
  );
}

export function OrgPermissionsSection() {
  return (
    <>
      <ReadOnlyNote />
      <RealmForm
        title="Joining"
        fields={[
          { key: "invite_required", label: "Joining requires an invitation", kind: "bool" },
          { key: "waiting_period_threshold", label: "Waiting period for full members, in days", kind: "number" },
          { key: "name_changes_disabled", label: "Prevent users from changing their name", kind: "bool" },
          { key: "email_changes_disabled", label: "Prevent users from changing their email", kind: "bool" },
          { key: "avatar_changes_disabled", label: "Prevent users from changing their avatar", kind: "bool" },
        ]}
      />
      <RealmForm
        title="Who can do what"
        fields={[
          { key: "create_stream_policy", label: "Who can create streams", kind: "select", choices: WHO_CREATE },
          { key: "invite_to_stream_policy", label: "Who can add others to streams", kind: "select", choices: WHO_CREATE },
          {
            key: "user_group_edit_policy",
            label: "Who can manage user groups",
            kind: "select",
            choices: [
              { value: "1", label: "Members" },
              { value: "2", label: "Administrators only" },
            ],
          },
          {
            key: "private_message_policy",
            label: "Direct messages",
            kind: "select",
            choices: [
              { value: "1", label: "Allowed" },
              { value: "2", label: "Disabled (except with bots)" },
            ],
          },
          {
            key: "wildcard_mention_policy",
            label: "Who can use @all and @everyone in large streams",
            kind: "select",
            choices: [
              { value: "1", label: "Everyone" },
              { value: "2", label: "Members" },
              { value: "3", label: "Full members" },
              { value: "4", label: "Stream administrators" },
              { value: "5", label: "Administrators" },
              { value: "6", label: "Nobody" },
            ],
          },
          {
            key: "bot_creation_policy",
            label: "Who can add bots",
            kind: "select",
            choices: [
              { value: "1", label: "Everyone" },
              { value: "2", label: "Everyone, but only administrators add generic bots" },
              { value: "3", label: "Administrators only" },
            ],
          },
          { key: "add_emoji_by_admins_only", label: "Only administrators add custom emoji", kind: "bool" },
        ]}
      />
    </>
  );
}
