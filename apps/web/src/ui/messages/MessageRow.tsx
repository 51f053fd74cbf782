// One message as the list shows it: the recipient bar when the conversation (or the day) changes,
// the sender line when the sender changes, then the server's rendered HTML as it came, the edited
// marker, reactions and the row's buttons.
import { Component } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";
import { api } from "../../api/client";
import { dmUserIds } from "../../narrow";
import { hashFor } from "../../state/route";
import { myUserId, streamName, subscriptionsById, userName, userSettings, type Message } from "../../state/store";
import { isTopicFollowed, isTopicMuted } from "../../state/user-topics";
import { openMessageActions } from "../actions/index";
import { messageBodyHtml, topicMatchHtml } from "../search/highlight";
import { Avatar } from "./Avatar";
import { Emoji } from "./Emoji";
import { showEmojiGlyphs } from "./emoji-glyphs";

export interface RowItem {
  message: Message;
  /** First of a conversation block: show the recipient bar. */
  header: boolean;
  /** Show the sender's name and avatar. */
  sender: boolean;
  /** Height-cache key: the id and what the row shows. */
  key: string;
}

const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", month: "short", day: "numeric" });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });

export function dayOf(timestamp: number): string {
  return new Date(timestamp * 1000).toDateString();
}

// Formatters are costly to create: one per clock style, reused by every row.
const timeFormats = new Map<boolean, Intl.DateTimeFormat>();
function timeOf(timestamp: number): string {
  const hour12 = userSettings.value.twenty_four_hour_time !== true;
  let format = timeFormats.get(hour12);
  if (!format) timeFormats.set(hour12, (format = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", hour12 })));
  return format.format(new Date(timestamp * 1000));
}

function conversationKey(message: Message): string {
  return message.type === "stream" ? `s:${message.stream_id}:${message.subject.toLowerCase()}` : `d:${dmUserIds(message).join(",")}`;
}

/** Groups messages like Zulip: a recipient bar per conversation run (and day), a sender line per sender run. */
export function buildItems(messages: readonly Message[]): RowItem[] {
  const items: RowItem[] = [];
  let previous: Message | null = null;
  for (const message of messages) {
    const header = previous === null || conversationKey(previous) !== conversationKey(message) || dayOf(previous.timestamp) !== dayOf(message.timestamp);
    const sender = header || previous!.sender_id !== message.sender_id || message.is_me_message || previous!.is_me_message;
    items.push({ message, header, sender, key: `${message.id}:${header ? 1 : 0}${sender ? 1 : 0}` });
    previous = message;
  }
  return items;
}

function RecipientBar({ message }: { message: Message }) {
  const day = dayFormat.format(new Date(message.timestamp * 1000));
  if (message.type === "stream") {
    const streamId = message.stream_id ?? 0;
    const name = streamName(streamId) ?? (typeof message.display_recipient === "string" ? message.display_recipient : "unknown");
    const color = subscriptionsById.value.get(streamId)?.color ?? "#c2c2c2";
    const channel = { operator: "channel", operand: String(streamId) };
    const muted = isTopicMuted(streamId, message.subject);
    const followed = isTopicFollowed(streamId, message.subject);
    const topicHtml = topicMatchHtml(message);
    return (
      <div class="msg-recipient msg-recipient-stream">
        <span class="msg-stream-swatch" ref={(el) => {
            if (el) el.style.backgroundColor = color;
          }} />
        <a class="msg-recipient-stream-name" href={hashFor([channel])}>
          #{name}
        </a>
        <span class="msg-recipient-sep" aria-hidden="true">
          ›
        </span>
        <a class="msg-recipient-topic" href={hashFor([channel, { operator: "topic", operand: message.subject }])}>
          {topicHtml !== null ? (
            // The server escaped the topic and marked the search's matches.
            <span dangerouslySetInnerHTML={{ __html: topicHtml }} />
          ) : message.subject === "" ? (
            <em>general chat</em>
          ) : (
            message.subject
          )}
        </a>
        {muted && <span class="msg-topic-state" title="Muted topic">muted</span>}
        {followed && <span class="msg-topic-state" title="Followed topic">followed</span>}
        <span class="msg-recipient-date">{day}</span>
      </div>
    );
  }
  const ids = dmUserIds(message);
  const others = ids.filter((id) => id !== myUserId.value);
  const label = others.length === 0 ? "You (note to self)" : `You and ${others.map((id) => userName(id)).join(", ")}`;
  return (
    <div class="msg-recipient msg-recipient-dm">
      <a class="msg-recipient-topic" href={hashFor([{ operator: "dm", operand: ids.join(",") }])}>
        {label}
      </a>
      <span class="msg-recipient-date">{day}</span>
    </div>
  );
}

type Reaction = Message["reactions"][number];

function groupReactions(reactions: readonly Reaction[]): Array<{ first: Reaction; users: number[] }> {
  const groups = new Map<string, { first: Reaction; users: number[] }>();
  for (const reaction of reactions) {
    const key = `${reaction.reaction_type}:${reaction.emoji_code}`;
    const group = groups.get(key);
    if (group) group.users.push(reaction.user_id);
    else groups.set(key, { first: reaction, users: [reaction.user_id] });
  }
  return [...groups.values()];
}

async function toggleReaction(message: Message, reaction: Reaction, mine: boolean): Promise<void> {
  const params = { message_id: message.id, emoji_name: reaction.emoji_name, emoji_code: reaction.emoji_code, reaction_type: reaction.reaction_type };
  try {
    if (mine) await api.delete("/messages/{message_id}/reactions", params);
    else await api.post("/messages/{message_id}/reactions", params);
  } catch (error) {
    // Already there or already gone (a double click racing the event): the event settles it.
    console.warn("reaction toggle failed", error);
  }
}

async function toggleStar(message: Message, starred: boolean): Promise<void> {
  try {
    await api.post("/messages/flags", { messages: [message.id], op: starred ? "remove" : "add", flag: "starred" });
  } catch (error) {
    console.warn("star toggle failed", error);
  }
}

export interface RowProps {
  item: RowItem;
  selected: boolean;
  unread: boolean;
  onSelect(id: number): void;
}

/** A row re-renders only when its message, grouping, selection or unread state changes (or a signal it reads). */
export class MemoRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const now = this.props;
    return now.item.message !== next.item.message || now.item.key !== next.item.key || now.selected !== next.selected || now.unread !== next.unread;
  }
  render(props: RowProps) {
    return <MessageRow {...props} />;
  }
}

/** The server's HTML of a message, inserted as it came; then its emoji are drawn as glyphs. */
function MessageBody({ html }: { html: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (ref.current) showEmojiGlyphs(ref.current);
  }, [html]);
  return <div ref={ref} class="msg-content rendered" dangerouslySetInnerHTML={{ __html: html }} />;
}

export function MessageRow({ item, selected, unread, onSelect }: RowProps) {
  const { message } = item;
  const me = myUserId.value;
  const starred = message.flags?.includes("starred") ?? false;
  const mentioned = message.flags?.some((flag) => flag === "mentioned" || flag === "wildcard_mentioned") ?? false;
  const classes = ["msg-row"];
  if (item.header) classes.push("msg-row-first");
  if (selected) classes.push("msg-selected");
  if (unread) classes.push("msg-unread");
  if (mentioned) classes.push("msg-mentioned");
  if (message.is_me_message) classes.push("msg-me");
  const time = timeOf(message.timestamp);
  return (
    <div class={classes.join(" ")} data-message-id={message.id} data-key={item.key} onClick={() => onSelect(message.id)}>
      {item.header && <RecipientBar message={message} />}
      <div class={item.sender ? "msg-body msg-body-sender" : "msg-body"}>
        <div class="msg-gutter">{item.sender && <Avatar url={message.avatar_url} name={message.sender_full_name} />}</div>
        <div class="msg-main">
          {item.sender && (
            <div class="msg-sender-line">
              <span class="msg-sender">{message.sender_full_name}</span>
            </div>
          )}
          <div class="msg-content-wrap">
            {message.is_me_message && <span class="msg-me-name">{message.sender_full_name} </span>}
            {/* The server renders and sanitises message HTML (and a search's highlighted match); it is inserted as it came. */}
            <MessageBody html={messageBodyHtml(message)} />
            {message.last_edit_timestamp !== undefined && (
              <span class="msg-edited" title={`Edited ${fullFormat.format(new Date(message.last_edit_timestamp * 1000))}`}>
                (edited)
              </span>
            )}
          </div>
          {message.reactions.length > 0 && (
            <div class="msg-reactions">
              {groupReactions(message.reactions).map(({ first, users }) => {
                const mine = users.includes(me);
                const names = users.map((id) => (id === me ? "You" : userName(id))).join(", ");
                return (
                  <button
                    type="button"
                    key={`${first.reaction_type}:${first.emoji_code}`}
                    class={mine ? "msg-reaction msg-reaction-mine" : "msg-reaction"}
                    aria-pressed={mine}
                    title={`${names} reacted with :${first.emoji_name}:`}
                    aria-label={`${first.emoji_name}: ${users.length}, ${mine ? "remove your reaction" : "add your reaction"}`}
                    onClick={(event) => {
                      event.stopPropagation();
                      void toggleReaction(message, first, mine);
                    }}
                  >
                    <Emoji type={first.reaction_type} code={first.emoji_code} name={first.emoji_name} />
                    <span class="msg-reaction-count">{users.length}</span>
                  </button>
                );
              })}
            </div>
          )}
        </div>
        <div class="msg-side">
          <time class="msg-time" dateTime={new Date(message.timestamp * 1000).toISOString()} title={fullFormat.format(new Date(message.timestamp * 1000))}>
            {time}
          </time>
          <div class="msg-buttons">
            <button
              type="button"
              class={starred ? "msg-button msg-star msg-starred" : "msg-button msg-star"}
              aria-pressed={starred}
              aria-label={starred ? "Unstar this message" : "Star this message"}
              title={starred ? "Unstar" : "Star"}
              onClick={(event) => {
                event.stopPropagation();
                void toggleStar(message, starred);
              }}
            >
              {starred ? "★" : "☆"}
            </button>
            <button
              type="button"
              class="msg-button msg-actions"
              aria-label="Message actions"
              aria-haspopup="menu"
              title="Message actions"
              onClick={(event) => {
                event.stopPropagation();
                openMessageActions(message, event.currentTarget as HTMLElement);
              }}
            >
              ⋮
            </button>
          </div>
        </div>
      </div>
      {/* Marks the row's end: when it has been on screen, the message has been read. */}
      <div class="msg-end" data-read-id={message.id} />
    </div>
  );
}
