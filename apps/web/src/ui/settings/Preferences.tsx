// Preferences, notifications, status, alert words and muted topics: each change saved at once.
import { useState } from "preact/hooks";
import { api } from "../../api/client";
import { myUserId, registered, streamsById, subscriptionsById } from "../../state/store";
import { userTopics } from "../../state/user-topics";
import { type Choice, type UserSettings, Loading, Section, Select, Status, TextInput, Toggle, currentSettings, patchRegistered, patchUserSettings, useLoad, useOutcome } from "./common";
import { SettingToggle } from "./Profile";
import { applyColorScheme } from "../layout/theme";

/** One multiple-choice personal setting, saved as soon as it changes. */
export function SettingSelect<K extends keyof UserSettings>(props: { name: K; label: string; choices: Choice[]; numeric?: boolean; after?(value: UserSettings[K]): void }) {
  const settings = currentSettings();
  const [outcome, run] = useOutcome();
  // The choice shows while it is being saved (a controlled select would snap back until then).
  const [pending, setPending] = useState<string | null>(null);
  const change = (raw: string) => {
    const value = (props.numeric ? Number(raw) : raw) as UserSettings[K];
    setPending(raw);
    void run(async () => {
      await api.patch("/settings", { [props.name]: value });
      patchUserSettings({ [props.name]: value } as Partial<UserSettings>);
      props.after?.(value);
    }).then(() => setPending(null));
  };
  return (
    <div class="set-inline">
      <Select label={props.label} value={pending ?? String(settings[props.name] ?? "")} choices={props.choices} disabled={outcome.kind === "busy"} onChange={change} />
      {outcome.kind !== "idle" && <Status outcome={outcome} />}
    </div>
  );
}

const LANGUAGES: Choice[] = [
  ["en", "English"],
  ["de", "Deutsch"],
  ["es", "Español"],
  ["fr", "Français"],
  ["it", "Italiano"],
  ["ja", "日本語"],
  ["ko", "한국어"],
  ["nl", "Nederlands"],
  ["pl", "Polski"],
  ["pt", "Português"],
  ["ru", "Русский"],
  ["uk", "Українська"],
  ["zh-hans", "简体中文"],
].map(([value, label]) => ({ value, label }));

export function PreferencesSection() {
  const settings = registered.value?.user_settings;
  const emojisets = (settings?.emojiset_choices ?? registered.value?.emojiset_choices ?? []).map((c) => ({ value: c.key, label: c.text }));
  const languages = LANGUAGES.some((l) => l.value === settings?.default_language) ? LANGUAGES : [...LANGUAGES, { value: settings?.default_language ?? "", label: settings?.default_language ?? "" }];
  return (
    <>
      <Section title="Appearance">
        <SettingSelect
          name="color_scheme"
          label="Theme"
          numeric
          choices={[
            { value: "1", label: "Automatic (follow the system)" },
            { value: "3", label: "Light" },
            { value: "2", label: "Dark" },
          ]}
          after={(value) => applyColorScheme(value)}
        />
        <SettingSelect name="emojiset" label="Emoji style" choices={emojisets.length ? emojisets : [{ value: settings?.emojiset ?? "google", label: settings?.emojiset ?? "google" }]} />
        <SettingToggle name="dense_mode" label="Compact layout" />
        <SettingToggle name="fluid_layout_width" label="Use the full width on wide screens" />
        <SettingToggle name="high_contrast_mode" label="High contrast" />
        <SettingToggle name="starred_message_counts" label="Show the number of starred messages" />
        <SettingToggle name="display_emoji_reaction_users" label="Show who reacted, with few reactions" />
      </Section>
      <Section title="Language and time">
        <SettingSelect name="default_language" label="Language" choices={languages} />
        <SettingToggle name="twenty_four_hour_time" label="Show times in 24-hour format" />
        <TimezoneSetting />
      </Section>
      <Section title="Composing and reading">
        <SettingToggle name="enter_sends" label="Enter sends a message (Ctrl+Enter for a new line)" />
        <SettingToggle name="translate_emoticons" label="Turn emoticons like :) into emoji" />
        <SettingSelect
          name="web_mark_read_on_scroll_policy"
          label="Mark messages as read when scrolling"
          numeric
          choices={[
            { value: "1", label: "Always" },
            { value: "2", label: "Only in conversation views" },
            { value: "3", label: "Never" },
          ]}
        />
        <SettingSelect
          name="demote_inactive_streams"
          label="Dim inactive streams"
          numeric
          choices={[
            { value: "1", label: "Automatically" },
            { value: "2", label: "Always" },
            { value: "3", label: "Never" },
          ]}
        />
      </Section>
    </>
  );
}

function TimezoneSetting() {
  const settings = registered.value?.user_settings;
  const [zone, setZone] = useState(settings?.timezone ?? "");
  const [outcome, run] = useOutcome();
  const detected = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const save = (value: string) =>
    void run(async () => {
      await api.patch("/settings", { timezone: value });
      patchUserSettings({ timezone: value });
      setZone(value);
    });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save(zone.trim());
      }}
    >
      <div class="set-inline">
        <TextInput label="Time zone" value={zone} onInput={setZone} placeholder={detected} hint="An IANA name such as Europe/Berlin." />
        <button type="submit" class="set-btn">
          Save
        </button>
        {detected && detected !== zone && (
          <button type="button" class="set-btn" onClick={() => save(detected)}>
            Use {detected}
          </button>
        )}
      </div>
      <Status outcome={outcome} />
    </form>
  );
}

export function NotificationsSection() {
  const settings = registered.value?.user_settings;
  const sounds = settings?.available_notification_sounds ?? registered.value?.available_notification_sounds ?? [];
  const [permission, setPermission] = useState(typeof Notification === "undefined" ? "unsupported" : Notification.permission);
  return (
    <>
      <Section title="Desktop">
        {permission === "default" && (
          <div class="set-actions">
            <button type="button" class="set-btn" onClick={() => void Notification.requestPermission().then(setPermission)}>
              Allow this browser to show notifications
            </button>
          </div>
        )}
        {permission === "denied" && <p class="set-muted">This browser blocks notifications from this site; allow them in its site settings.</p>}
        <SettingToggle name="enable_desktop_notifications" label="Desktop notifications for direct messages and mentions" />
        <SettingToggle name="pm_content_in_desktop_notifications" label="Include the message's text in desktop notifications" />
        <SettingToggle name="enable_sounds" label="Play a sound for direct messages and mentions" />
        {sounds.length > 0 && (
          <SettingSelect name="notification_sound" label="Notification sound" choices={[{ value: "none", label: "None" }, ...sounds.filter((s) => s !== "none").map((s) => ({ value: s, label: s }))]} />
        )}
        <SettingToggle name="wildcard_mentions_notify" label="Notify me of @all and @everyone mentions" />
      </Section>
      <Section title="Streams" intro="Defaults for every stream; each stream's own settings override them.">
        <SettingToggle name="enable_stream_desktop_notifications" label="Desktop notifications" />
        <SettingToggle name="enable_stream_audible_notifications" label="Sounds" />
        <SettingToggle name="enable_stream_email_notifications" label="Email notifications" />
        <SettingToggle name="enable_stream_push_notifications" label="Mobile notifications" />
      </Section>
      <Section title="Followed topics">
        <SettingToggle name="enable_followed_topic_desktop_notifications" label="Desktop notifications" />
        <SettingToggle name="enable_followed_topic_audible_notifications" label="Sounds" />
        <SettingToggle name="enable_followed_topic_email_notifications" label="Email notifications" />
        <SettingToggle name="enable_followed_topic_wildcard_mentions_notify" label="Notify me of @all mentions in followed topics" />
      </Section>
      <Section title="Email">
        <SettingToggle name="enable_offline_email_notifications" label="Email me direct messages and mentions while I'm away" />
        <SettingToggle name="message_content_in_email_notifications" label="Include the message's text in emails" />
        <SettingToggle name="enable_digest_emails" label="Send me digests while I'm away" />
        <SettingToggle name="enable_login_emails" label="Email me when someone signs in to my account" />
      </Section>
    </>
  );
}

const STATUS_PRESETS = ["In a meeting", "Commuting", "Out sick", "On vacation", "Working remotely"];

export function StatusSection() {
  const uid = String(myUserId.value);
  const current = registered.value?.user_status?.[uid] ?? {};
  const [text, setText] = useState(current.status_text ?? "");
  const [away, setAway] = useState(Boolean(current.away));
  const [outcome, run] = useOutcome();
  const save = (nextText: string, nextAway: boolean) =>
    void run(async () => {
      await api.post("/users/me/status", { status_text: nextText, away: nextAway });
      setText(nextText);
      setAway(nextAway);
      const statuses = { ...(registered.value?.user_status ?? {}) };
      statuses[uid] = { ...(nextText ? { status_text: nextText } : {}), ...(nextAway ? { away: true } : {}) };
      patchRegistered({ user_status: statuses });
    });
  return (
    <Section title="Your status" intro="A short note others see beside your name.">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save(text.trim(), away);
        }}
      >
        <TextInput label="Status text" value={text} onInput={setText} maxLength={60} placeholder="What's your status?" />
        <ul class="set-chips" aria-label="Suggestions">
          {STATUS_PRESETS.map((preset) => (
            <li key={preset}>
              <button type="button" class="set-chip-x" onClick={() => setText(preset)}>
                {preset}
              </button>
            </li>
          ))}
        </ul>
        <Toggle label="Appear away to others" checked={away} onChange={setAway} />
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={outcome.kind === "busy"}>
            Save status
          </button>
          <button type="button" class="set-btn" onClick={() => save("", false)}>
            Clear status
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}

export function AlertWordsSection() {
  const words = useLoad(async () => (await api.get("/users/me/alert_words")).alert_words as string[]);
  const [word, setWord] = useState("");
  const [outcome, run] = useOutcome();
  const update = (list: string[]) => patchRegistered({ alert_words: list });
  const add = (e: Event) => {
    e.preventDefault();
    const value = word.trim();
    if (!value) return;
    void run(async () => {
      const answer = await api.post("/users/me/alert_words", { alert_words: [value] });
      update((answer as { alert_words?: string[] }).alert_words ?? []);
      setWord("");
      words.reload();
    }, `Added “${value}”`);
  };
  const remove = (value: string) =>
    void run(async () => {
      const answer = await api.delete("/users/me/alert_words", { alert_words: [value] });
      update((answer as { alert_words?: string[] }).alert_words ?? []);
      words.reload();
    }, `Removed “${value}”`);
  return (
    <Section title="Alert words" intro="Messages that contain these words or phrases are highlighted and notify you as mentions do.">
      <form onSubmit={add}>
        <div class="set-inline">
          <TextInput label="New alert word" value={word} onInput={setWord} maxLength={100} />
          <button type="submit" class="set-btn set-btn-primary" disabled={!word.trim()}>
            Add
          </button>
        </div>
      </form>
      <Status outcome={outcome} />
      {words.data ? (
        words.data.length ? (
          <ul class="set-chips" aria-label="Your alert words">
            {words.data.map((w) => (
              <li key={w}>
                {w}
                <button type="button" class="set-chip-x" aria-label={`Remove ${w}`} onClick={() => remove(w)}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <p class="set-muted">No alert words yet.</p>
        )
      ) : (
        <Loading error={words.error} />
      )}
    </Section>
  );
}

interface MutedTopic {
  stream_id: number;
  topic_name: string;
  last_updated: number;
}

/**
 * The muted topics: the core's policies (kept current by user_topic events) decide, and /register's
 * user_topics give the names their case and the dates (a topic muted since has its lower-cased name).
 */
function mutedTopics(): MutedTopic[] {
  const policies = userTopics.value;
  const byKey = new Map<string, MutedTopic & { policy: number }>();
  for (const t of registered.value?.user_topics ?? []) byKey.set(`${t.stream_id}\u0000${t.topic_name.toLowerCase()}`, { ...t, policy: t.visibility_policy });
  for (const [key, policy] of policies) {
    if (byKey.has(key)) continue;
    const [streamId, topic] = key.split("\u0000");
    byKey.set(key, { stream_id: Number(streamId), topic_name: topic, last_updated: 0, policy });
  }
  const current = (key: string, fallback: number) => (policies.size === 0 ? fallback : (policies.get(key) ?? 0));
  return [...byKey]
    .filter(([key, t]) => current(key, t.policy) === 1)
    .map(([, t]) => t)
    .sort((a, b) => b.last_updated - a.last_updated);
}

export function MutedTopicsSection() {
  const [outcome, run] = useOutcome();
  const topics = mutedTopics();
  const [filter, setFilter] = useState("");
  const streamName = (id: number) => subscriptionsById.value.get(id)?.name ?? streamsById.value.get(id)?.name ?? `#${id}`;
  const needle = filter.trim().toLowerCase();
  const shown = topics.filter((t) => !needle || t.topic_name.toLowerCase().includes(needle) || streamName(t.stream_id).toLowerCase().includes(needle));
  const unmute = (streamId: number, topic: string) =>
    void run(async () => {
      await api.post("/user_topics", { stream_id: streamId, topic, visibility_policy: 0 });
      const rest = (registered.value?.user_topics ?? []).filter((t) => !(t.stream_id === streamId && t.topic_name === topic));
      patchRegistered({ user_topics: rest });
    }, `Unmuted “${topic}”`);
  return (
    <Section title="Topics you muted" intro="Their messages are not counted as unread and do not notify you.">
      {topics.length > 8 && <TextInput label="Filter" type="search" class="set-search" value={filter} onInput={setFilter} />}
      <Status outcome={outcome} />
      {shown.length === 0 ? (
        <p class="set-muted">{topics.length ? "No muted topic matches." : "You have not muted any topic."}</p>
      ) : (
        <table class="set-table">
          <thead>
            <tr>
              <th scope="col">Stream</th>
              <th scope="col">Topic</th>
              <th scope="col">Muted on</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => (
              <tr key={`${t.stream_id}:${t.topic_name}`}>
                <td>{streamName(t.stream_id)}</td>
                <td>{t.topic_name}</td>
                <td>{t.last_updated ? new Date(t.last_updated * 1000).toLocaleDateString() : "Recently"}</td>
                <td>
                  <button type="button" class="set-btn set-btn-small" onClick={() => unmute(t.stream_id, t.topic_name)}>
                    Unmute
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
