// Compose's recipient row: a stream picker and a topic field (both with typeahead), or the
// people of a direct message as removable pills with a user typeahead.
import type { Ref } from "preact";
import { useEffect, useId, useState } from "preact/hooks";
import { myUserId, registered, usersById } from "../../state/store";
import { ensureTopics, rank, recipientCandidates, sameOriginImage, subscribedStreams, topicSuggestions } from "./matching";
import { streamName } from "./recipient";
import { comboboxProps, handleTypeaheadKey, Typeahead, useTypeaheadState, type TypeaheadOption } from "./Typeahead";

interface StreamPickerProps {
  streamId: number | null;
  onChange(streamId: number): void;
  inputRef?: Ref<HTMLInputElement>;
  onDone?(): void;
}

export function StreamPicker({ streamId, onChange, inputRef, onDone }: StreamPickerProps) {
  const listId = `${useId()}-streams`;
  const [text, setText] = useState(streamName(streamId));
  const [editing, setEditing] = useState(false);
  useEffect(() => {
    if (!editing) setText(streamName(streamId));
  }, [streamId, editing]);
  const streams = editing ? rank(subscribedStreams(), text === streamName(streamId) ? "" : text, (s) => [s.name]) : [];
  const state = useTypeaheadState(`${editing}:${text}`);
  const options: TypeaheadOption[] = state.dismissed ? [] : streams.map((s) => ({ key: String(s.stream_id), primary: s.name, glyph: s.invite_only ? "🔒" : "#" }));
  const pick = (index: number) => {
    const stream = streams[index];
    if (!stream) return;
    onChange(stream.stream_id);
    setText(stream.name);
    setEditing(false);
    onDone?.();
  };
  return (
    <div class="compose-field compose-stream">
      <Typeahead id={listId} label="Channels" options={options} active={Math.min(state.active, options.length - 1)} onActive={state.setActive} onPick={pick} />
      <input
        ref={inputRef}
        class="compose-input"
        type="text"
        aria-label="Channel"
        placeholder="Channel"
        autoComplete="off"
        value={text}
        {...comboboxProps(listId, options.length, state.active)}
        onFocus={(e) => {
          setEditing(true);
          e.currentTarget.select();
        }}
        onInput={(e) => {
          setEditing(true);
          setText(e.currentTarget.value);
        }}
        onKeyDown={(e) => {
          if (handleTypeaheadKey(e, options.length, state, pick)) return;
          if (e.key === "Enter") {
            e.preventDefault();
            onDone?.();
          }
        }}
        onBlur={() => {
          // An exact name counts as picked; anything else falls back to the current stream.
          const exact = subscribedStreams().find((s) => s.name.toLowerCase() === text.trim().toLowerCase());
          if (exact && exact.stream_id !== streamId) onChange(exact.stream_id);
          setEditing(false);
          setText(streamName(exact?.stream_id ?? streamId));
        }}
      />
    </div>
  );
}

interface TopicInputProps {
  streamId: number | null;
  topic: string;
  onChange(topic: string): void;
  inputRef?: Ref<HTMLInputElement>;
  onDone?(): void;
}

export function TopicInput({ streamId, topic, onChange, inputRef, onDone }: TopicInputProps) {
  const listId = `${useId()}-topics`;
  const [focused, setFocused] = useState(false);
  useEffect(() => {
    if (streamId !== null) ensureTopics(streamId);
  }, [streamId]);
  const topics = focused && streamId !== null ? topicSuggestions(streamId, topic) : [];
  // The exact topic alone is nothing to suggest.
  const useful = topics.length === 1 && topics[0].toLowerCase() === topic.trim().toLowerCase() ? [] : topics;
  const state = useTypeaheadState(`${streamId}:${topic}:${focused}`);
  const options: TypeaheadOption[] = state.dismissed ? [] : useful.map((t) => ({ key: t, primary: t }));
  const pick = (index: number) => {
    const chosen = useful[index];
    if (chosen === undefined) return;
    onChange(chosen);
    state.dismiss();
    onDone?.();
  };
  const mandatory = registered.value?.realm_mandatory_topics === true;
  return (
    <div class="compose-field compose-topic">
      <Typeahead id={listId} label="Topics" options={options} active={Math.min(state.active, options.length - 1)} onActive={state.setActive} onPick={pick} />
      <input
        ref={inputRef}
        class="compose-input"
        type="text"
        aria-label="Topic"
        placeholder={mandatory ? "Topic" : "Topic (optional)"}
        autoComplete="off"
        maxLength={registered.value?.max_topic_length ?? 60}
        value={topic}
        {...comboboxProps(listId, options.length, state.active)}
        onFocus={() => setFocused(true)}
        onBlur={() => setFocused(false)}
        onInput={(e) => onChange(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (handleTypeaheadKey(e, options.length, state, pick)) return;
          if (e.key === "Enter") {
            e.preventDefault();
            onDone?.();
          }
        }}
      />
    </div>
  );
}

interface DmRecipientsProps {
  userIds: readonly number[];
  onChange(userIds: number[]): void;
  inputRef?: Ref<HTMLInputElement>;
  onDone?(): void;
}

export function DmRecipients({ userIds, onChange, inputRef, onDone }: DmRecipientsProps) {
  const listId = `${useId()}-people`;
  const [query, setQuery] = useState("");
  const [focused, setFocused] = useState(false);
  // Nothing until something is typed: Enter on an empty field moves on to the message.
  const users = focused && query.trim() !== "" ? recipientCandidates(query, userIds) : [];
  const state = useTypeaheadState(`${query}:${focused}:${userIds.join(",")}`);
  const options: TypeaheadOption[] = state.dismissed
    ? []
    : users.map((u) => ({ key: String(u.user_id), primary: u.user_id === myUserId.value ? `${u.full_name} (you)` : u.full_name, secondary: u.delivery_email ?? u.email, imageUrl: sameOriginImage(u.avatar_url) }));
  const pick = (index: number) => {
    const user = users[index];
    if (!user) return;
    onChange([...userIds, user.user_id]);
    setQuery("");
  };
  const remove = (id: number) => onChange(userIds.filter((other) => other !== id));
  return (
    <div class="compose-field compose-dm">
      <ul class="compose-pills" aria-label="Recipients">
        {userIds.map((id) => {
          const name = usersById.value.get(id)?.full_name ?? `User ${id}`;
          return (
            <li key={id} class="compose-pill">
              <span>{name}</span>
              <button type="button" class="compose-pill-remove" aria-label={`Remove ${name}`} onClick={() => remove(id)}>
                ×
              </button>
            </li>
          );
        })}
      </ul>
      <div class="compose-dm-input">
        <Typeahead id={listId} label="People" options={options} active={Math.min(state.active, options.length - 1)} onActive={state.setActive} onPick={pick} />
        <input
          ref={inputRef}
          class="compose-input"
          type="text"
          aria-label="Add a recipient"
          placeholder={userIds.length === 0 ? "Add one or more people" : "Add another"}
          autoComplete="off"
          value={query}
          {...comboboxProps(listId, options.length, state.active)}
          onFocus={() => setFocused(true)}
          onBlur={() => setFocused(false)}
          onInput={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (handleTypeaheadKey(e, options.length, state, pick)) return;
            if (e.key === "Backspace" && query === "" && userIds.length > 0) {
              e.preventDefault();
              onChange(userIds.slice(0, -1));
            } else if (e.key === "Enter" && query === "" && userIds.length > 0) {
              e.preventDefault();
              onDone?.();
            }
          }}
        />
      </div>
    </div>
  );
}
