// The left sidebar: the views (combined feed, mentions, starred), the subscribed channels with
// their unread counts (the channel in view opens to its topics), and the direct messages.
import { computed } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { narrowDmIds, narrowStreamId, termOf, type Narrow } from "../../narrow";
import { loadTopics, recentDms, starredIds, topicsByStream } from "../../state/conversations";
import { presenceOf } from "../../state/presence";
import { currentNarrow, hashFor } from "../../state/route";
import { myUserId, subscriptionsById, userName, userSettings, type Subscription } from "../../state/store";
import { unreadCounts } from "../../state/unread";
import { isTopicFollowed, isTopicMuted, topicPolicy, TopicPolicy } from "../../state/user-topics";
import { openStreamMenu } from "../streams/StreamMenu";
import { openTopicMenu } from "../streams/TopicMenu";
import "./sidebar.css";

/** Subscribed channels: pinned first, then by name; muted ones last in each part. */
export const sortedSubscriptions = computed(() =>
  [...subscriptionsById.value.values()].sort((a, b) => {
    if (a.pin_to_top !== b.pin_to_top) return a.pin_to_top ? -1 : 1;
    if (a.is_muted !== b.is_muted) return a.is_muted ? 1 : -1;
    return a.name.localeCompare(b.name);
  }),
);

function Count({ n, label, muted }: { n: number; label: string; muted?: boolean }) {
  if (n <= 0) return null;
  return (
    <span class={muted ? "sb-count sb-count-muted" : "sb-count"} aria-label={`${n} unread ${label}`}>
      {n > 999 ? "999+" : n}
    </span>
  );
}

function sameNarrow(a: Narrow, b: Narrow): boolean {
  return JSON.stringify(a.map((t) => [t.operator, t.operand, !!t.negated])) === JSON.stringify(b.map((t) => [t.operator, t.operand, !!t.negated]));
}

function ViewLink({ narrow, label, icon, count }: { narrow: Narrow; label: string; icon: string; count: number }) {
  const active = sameNarrow(currentNarrow.value, narrow);
  return (
    <li>
      <a class={active ? "sb-row sb-active" : "sb-row"} href={narrow.length === 0 ? "#feed" : hashFor(narrow)} aria-current={active ? "page" : undefined}>
        <span class="sb-icon" aria-hidden="true">
          {icon}
        </span>
        <span class="sb-label">{label}</span>
        <Count n={count} label="messages" />
      </a>
    </li>
  );
}

const VISIBLE_TOPICS = 8;

function TopicList({ sub }: { sub: Subscription }) {
  const streamId = sub.stream_id;
  const topics = topicsByStream.value.get(streamId);
  const [all, setAll] = useState(false);
  useEffect(() => {
    if (!topics) void loadTopics(streamId);
  }, [topics, streamId]);
  if (!topics) return <div class="sb-topics-loading">Loading topics…</div>;
  const narrow = currentNarrow.value;
  const activeTopic = narrowStreamId(narrow) === streamId ? termOf(narrow, "topic")?.toLowerCase() : undefined;
  const counts = unreadCounts.value;
  // The first few, plus any unread or active one, unless "more topics" was asked for.
  const shown = all
    ? topics
    : topics.filter((topic, index) => {
        const count = counts.topics.get(`${streamId}\u0000${topic.name.toLowerCase()}`)?.count ?? 0;
        return index < VISIBLE_TOPICS || (count > 0 && !isTopicMuted(streamId, topic.name)) || topic.name.toLowerCase() === activeTopic;
      });
  return (
    <ul class="sb-topics" aria-label={`Topics in ${sub.name}`}>
      {shown.map((topic) => {
        const entry = counts.topics.get(`${streamId}\u0000${topic.name.toLowerCase()}`);
        const muted = isTopicMuted(streamId, topic.name);
        const followed = isTopicFollowed(streamId, topic.name);
        const active = topic.name.toLowerCase() === activeTopic;
        const cls = ["sb-row", "sb-topic"];
        if (active) cls.push("sb-active");
        if (muted) cls.push("sb-muted");
        return (
          <li key={topic.name} class="sb-item">
            <a
              class={cls.join(" ")}
              href={hashFor([
                { operator: "channel", operand: String(streamId) },
                { operator: "topic", operand: topic.name },
              ])}
              aria-current={active ? "page" : undefined}
            >
              <span class="sb-label">{topic.name === "" ? <em>general chat</em> : topic.name}</span>
              {followed && (
                <span class="sb-topic-icon" title="You follow this topic" aria-label="followed">
                  ◉
                </span>
              )}
              {muted && topicPolicy(streamId, topic.name) === TopicPolicy.muted && (
                <span class="sb-topic-icon" title="You muted this topic" aria-label="muted">
                  ⊘
                </span>
              )}
              {entry && entry.mentions > 0 && (
                <span class="sb-mention" aria-label="mentions you">
                  @
                </span>
              )}
              <Count n={entry?.count ?? 0} label="messages" muted={muted} />
            </a>
            <button
              type="button"
              class="sb-menu-button"
              aria-label={`Menu of topic ${topic.name}`}
              aria-haspopup="menu"
              onClick={(event) => openTopicMenu(streamId, topic.name, event.currentTarget as HTMLElement)}
            >
              ⋮
            </button>
          </li>
        );
      })}
      {topics.length > shown.length && (
        <li>
          <button type="button" class="sb-more" onClick={() => setAll(true)}>
            More topics
          </button>
        </li>
      )}
      {all && topics.length > VISIBLE_TOPICS && (
        <li>
          <button type="button" class="sb-more" onClick={() => setAll(false)}>
            Fewer topics
          </button>
        </li>
      )}
      {topics.length === 0 && <li class="sb-topics-loading">No topics yet.</li>}
    </ul>
  );
}

function StreamRow({ sub }: { sub: Subscription }) {
  const narrow = currentNarrow.value;
  const open = narrowStreamId(narrow) === sub.stream_id;
  const active = open && termOf(narrow, "topic") === undefined;
  const counts = unreadCounts.value;
  const count = counts.streams.get(sub.stream_id) ?? 0;
  const mutedCount = counts.mutedStreams.get(sub.stream_id) ?? 0;
  const cls = ["sb-row", "sb-stream"];
  if (active) cls.push("sb-active");
  if (sub.is_muted) cls.push("sb-muted");
  return (
    <li class="sb-item">
      <a class={cls.join(" ")} href={hashFor([{ operator: "channel", operand: String(sub.stream_id) }])} aria-current={active ? "page" : undefined} aria-expanded={open}>
        <span
          class="sb-swatch"
          aria-hidden="true"
          ref={(el) => {
            if (el) el.style.backgroundColor = sub.color;
          }}
        >
          {sub.invite_only ? "🔒" : "#"}
        </span>
        <span class="sb-label">{sub.name}</span>
        {count > 0 ? <Count n={count} label="messages" /> : <Count n={userSettings.value.web_stream_unreads_count_display_policy === 3 ? 0 : mutedCount} label="messages in muted topics" muted />}
      </a>
      <button
        type="button"
        class="sb-menu-button"
        aria-label={`Menu of channel ${sub.name}`}
        aria-haspopup="menu"
        onClick={(event) => openStreamMenu(sub.stream_id, event.currentTarget as HTMLElement)}
      >
        ⋮
      </button>
      {open && <TopicList sub={sub} />}
    </li>
  );
}

function DmList() {
  const conversations = recentDms.value;
  const counts = unreadCounts.value;
  const active = narrowDmIds(currentNarrow.value)?.filter((id) => id !== myUserId.value).join(",");
  const [all, setAll] = useState(false);
  const shown = all ? conversations : conversations.filter((c, i) => i < 10 || (counts.dms.get(c.key) ?? 0) > 0);
  return (
    <ul class="sb-list" aria-label="Direct messages">
      {shown.map((conversation) => {
        const isActive = active === conversation.key || (active === "" && conversation.key === String(myUserId.value));
        const others = conversation.userIds.filter((id) => id !== myUserId.value);
        const label = others.length === 0 ? `${userName(myUserId.value)} (you)` : others.map((id) => userName(id)).join(", ");
        const status = others.length === 1 ? presenceOf(others[0]) : null;
        const ids = [...new Set([...conversation.userIds, myUserId.value])].sort((a, b) => a - b);
        return (
          <li key={conversation.key}>
            <a class={isActive ? "sb-row sb-active" : "sb-row"} href={hashFor([{ operator: "dm", operand: ids.join(",") }])} aria-current={isActive ? "page" : undefined}>
              <span class={status ? `presence-dot presence-${status}` : "presence-dot presence-group"} aria-hidden="true" />
              <span class="sb-label">{label}</span>
              <Count n={counts.dms.get(conversation.key) ?? 0} label="messages" />
            </a>
          </li>
        );
      })}
      {conversations.length === 0 && <li class="sb-topics-loading">No direct messages yet.</li>}
      {!all && conversations.length > shown.length && (
        <li>
          <button type="button" class="sb-more" onClick={() => setAll(true)}>
            More conversations
          </button>
        </li>
      )}
    </ul>
  );
}

export function LeftSidebar() {
  const counts = unreadCounts.value;
  const starredCount = userSettings.value.starred_message_counts === false ? 0 : starredIds.value.size;
  return (
    <nav class="sidebar-left" aria-label="Views and channels">
      <ul class="sb-list sb-views">
        <ViewLink narrow={[]} label="Combined feed" icon="≡" count={counts.home} />
        <ViewLink narrow={[{ operator: "is", operand: "mentioned" }]} label="Mentions" icon="@" count={counts.mentions} />
        <ViewLink narrow={[{ operator: "is", operand: "starred" }]} label="Starred" icon="★" count={starredCount} />
        <ViewLink narrow={[{ operator: "is", operand: "dm" }]} label="All direct messages" icon="✉" count={counts.dmTotal} />
      </ul>
      <h2 class="sb-heading">
        <span>Channels</span>
        <a class="sb-heading-action" href="#channels/subscribed" aria-label="Browse channels" title="Browse channels">
          +
        </a>
      </h2>
      <ul class="sb-list" aria-label="Channels">
        {sortedSubscriptions.value.map((sub) => (
          <StreamRow key={sub.stream_id} sub={sub} />
        ))}
        {subscriptionsById.value.size === 0 && <li class="sb-topics-loading">You are not subscribed to any channel.</li>}
      </ul>
      <h2 class="sb-heading">
        <span>Direct messages</span>
      </h2>
      <DmList />
    </nav>
  );
}
