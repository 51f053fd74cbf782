// The right sidebar: the organization's people, those active first, with presence dots and their
// status (emoji and text). A click opens the direct messages with them.
import { computed } from "@preact/signals";
import { useState } from "preact/hooks";
import { presenceById, userStatuses, type PresenceStatus } from "../../state/presence";
import { hashFor } from "../../state/route";
import { myUserId, usersById } from "../../state/store";
import { Emoji } from "../messages/Emoji";
import "./sidebar.css";

const ORDER: Record<PresenceStatus, number> = { active: 0, idle: 1, offline: 2 };
/**
 * Rows rendered at most; the filter finds the others. Each row is a link with its DM hash, built,
 * laid out and painted on the first load (1,000 people: 300 rows cost about a tenth of it).
 */
const MAX_ROWS = 100;

const people = computed(() => {
  const presence = presenceById.value;
  return [...usersById.value.values()]
    .filter((user) => user.is_active && !user.is_bot)
    .map((user) => ({ user, status: presence.get(user.user_id) ?? ("offline" as PresenceStatus) }))
    .sort((a, b) => ORDER[a.status] - ORDER[b.status] || a.user.full_name.localeCompare(b.user.full_name));
});

const STATUS_LABEL: Record<PresenceStatus, string> = { active: "active", idle: "idle", offline: "offline" };

export function RightSidebar() {
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const all = people.value;
  const matching = needle ? all.filter(({ user }) => user.full_name.toLowerCase().includes(needle) || user.email.toLowerCase().includes(needle)) : all;
  const shown = matching.slice(0, MAX_ROWS);
  const statuses = userStatuses.value;
  const me = myUserId.value;
  return (
    <aside class="sidebar-right" aria-label="People">
      <h2 class="sb-heading">
        <span>People</span>
      </h2>
      <input class="sb-filter" type="search" placeholder="Filter people" aria-label="Filter people" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
      <ul class="sb-list">
        {shown.map(({ user, status }) => {
          const userStatus = statuses.get(user.user_id);
          const ids = [...new Set([user.user_id, me])].sort((a, b) => a - b);
          return (
            <li key={user.user_id}>
              <a class="sb-row sb-person" href={hashFor([{ operator: "dm", operand: ids.join(",") }])} title={`${user.full_name} (${STATUS_LABEL[status]})`}>
                <span class={`presence-dot presence-${status}`} role="img" aria-label={STATUS_LABEL[status]} />
                <span class="sb-label">
                  {user.full_name}
                  {user.user_id === me && <span class="sb-you"> (you)</span>}
                </span>
                {userStatus?.emoji_name && <Emoji type={userStatus.reaction_type ?? "unicode_emoji"} code={userStatus.emoji_code ?? ""} name={userStatus.emoji_name} />}
                {userStatus?.status_text && <span class="sb-status-text">{userStatus.status_text}</span>}
              </a>
            </li>
          );
        })}
        {matching.length > shown.length && <li class="sb-topics-loading">{matching.length - shown.length} more: filter to find them.</li>}
        {matching.length === 0 && <li class="sb-topics-loading">Nobody matches.</li>}
      </ul>
    </aside>
  );
}
