// The bots the user owns: create (generic, incoming or outgoing webhook), API keys and zuliprc,
// deactivate. The list is GET /bots (active bots and their keys) with GET /users for each bot's type.
import { useState } from "preact/hooks";
import { api, type Schemas } from "../../api/client";
import { myUserId, registered } from "../../state/store";
import { BOT_TYPES, Loading, Pic, Section, Select, Status, TextInput, downloadText, sendForm, useId, useLoad, useOutcome } from "./common";

type Bot = Schemas["Bot"];
type User = Schemas["User"];


/** The file the Zulip API bindings read: the bot's address, key and this server. */
export function zuliprc(email: string, key: string): string {
  return `[api]\nemail=${email}\nkey=${key}\nsite=${window.location.origin}\n`;
}

export function BotsSection() {
  const bots = useLoad(async () => {
    const [mine, users] = await Promise.all([api.get("/bots"), api.get("/users")]);
    const byId = new Map(users.members.map((u) => [u.user_id, u]));
    // An administrator's GET /bots lists every bot; this screen shows the user's own.
    return mine.bots.map((bot) => ({ bot, user: byId.get(bot.user_id) })).filter(({ user }) => !user || user.bot_owner_id === myUserId.value);
  });
  return (
    <>
      <CreateBot onCreated={bots.reload} />
      <Section title="Your bots">
        {bots.data ? (
          bots.data.length ? (
            bots.data.map(({ bot, user }) => <BotCard key={bot.user_id} bot={bot} user={user} onChange={bots.reload} />)
          ) : (
            <p class="set-muted">You have no active bots.</p>
          )
        ) : (
          <Loading error={bots.error} />
        )}
      </Section>
    </>
  );
}

function BotCard(props: { bot: Bot; user: User | undefined; onChange(): void }) {
  const { bot } = props;
  const [key, setKey] = useState(bot.api_key);
  const [shown, setShown] = useState(false);
  const [outcome, run] = useOutcome();
  const regenerate = () => {
    if (!window.confirm(`Generate a new API key for ${bot.full_name}? The current one stops working.`)) return;
    void run(async () => {
      const answer = await api.post("/bots/{bot_id}/api_key/regenerate", { bot_id: bot.user_id });
      setKey(answer.api_key);
      setShown(true);
    }, "New API key generated");
  };
  const deactivate = () => {
    if (!window.confirm(`Deactivate ${bot.full_name}? It can no longer send or read messages.`)) return;
    void run(async () => {
      await api.delete("/bots/{bot_id}", { bot_id: bot.user_id });
      props.onChange();
    }, "Deactivated");
  };
  const type = props.user?.bot_type ?? 1;
  return (
    <div class="set-card">
      <div class="set-card-head">
        <Pic url={bot.avatar_url} name={bot.full_name} />
        <strong>{bot.full_name}</strong>
        <span class="set-muted">{BOT_TYPES[type] ?? "Bot"}</span>
      </div>
      <p class="set-muted">{bot.username}</p>
      <p>
        API key: <span class="set-key">{shown ? key : "••••••••••••••••"}</span>
      </p>
      <div class="set-actions">
        <button type="button" class="set-btn set-btn-small" aria-pressed={shown} onClick={() => setShown(!shown)}>
          {shown ? "Hide key" : "Show key"}
        </button>
        <button type="button" class="set-btn set-btn-small" onClick={() => downloadText("zuliprc", zuliprc(bot.username, key))}>
          Download zuliprc
        </button>
        <button type="button" class="set-btn set-btn-small" onClick={regenerate}>
          Regenerate key
        </button>
        <button type="button" class="set-btn set-btn-small set-btn-danger" onClick={deactivate}>
          Deactivate
        </button>
      </div>
      <Status outcome={outcome} />
    </div>
  );
}

function CreateBot(props: { onCreated(): void }) {
  const [name, setName] = useState("");
  const [short, setShort] = useState("");
  const [type, setType] = useState("1");
  const [url, setUrl] = useState("");
  const [outcome, run] = useOutcome();
  const fileId = useId();
  const domain = registered.value?.realm_bot_domain;
  const submit = (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const fields: Record<string, string> = { full_name: name.trim(), short_name: short.trim(), bot_type: type };
    if (type === "3") Object.assign(fields, { payload_url: JSON.stringify(url.trim()), interface_type: "1" });
    const file = (formEl.querySelector(`#${fileId}`) as HTMLInputElement | null)?.files?.[0];
    void run(async () => {
      if (file) {
        // Multipart only with an avatar: the plain form is what every server version reads.
        const form = new FormData();
        for (const [key, value] of Object.entries(fields)) form.append(key, value);
        form.append("file", file, file.name);
        await sendForm("POST", "/bots", form);
      } else {
        await api.post("/bots", fields);
      }
      setName("");
      setShort("");
      setUrl("");
      formEl.reset();
      props.onCreated();
    }, "Bot created: its API key and zuliprc are in the list below.");
  };
  return (
    <Section title="Add a bot">
      <form class="set-form" onSubmit={submit}>
        <Select
          label="Bot type"
          value={type}
          onChange={setType}
          choices={[
            { value: "1", label: "Generic: acts through the API" },
            { value: "2", label: "Incoming webhook: posts what other services send" },
            { value: "3", label: "Outgoing webhook: a URL told of mentions" },
          ]}
        />
        <TextInput label="Name" value={name} onInput={setName} maxLength={60} required placeholder="Deploy bot" />
        <TextInput label="Username" value={short} onInput={setShort} maxLength={40} required pattern="[A-Za-z0-9._\-]+" hint={`The bot's address: ${short || "name"}-bot@${domain ?? "…"}`} />
        {type === "3" && <TextInput label="Endpoint URL" type="url" value={url} onInput={setUrl} required placeholder="https://example.com/hook" />}
        <div class="set-field">
          <label for={fileId}>Avatar (optional)</label>
          <input id={fileId} type="file" accept="image/*" />
        </div>
        <div class="set-actions">
          <button type="submit" class="set-btn set-btn-primary" disabled={!name.trim() || !short.trim() || outcome.kind === "busy"}>
            Create bot
          </button>
        </div>
        <Status outcome={outcome} />
      </form>
    </Section>
  );
}
