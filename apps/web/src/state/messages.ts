// Message lists, one per narrow: a contiguous window of the narrow's messages (sorted by id, each
// once), loaded around the first unread and grown by anchors as the user scrolls, kept current by
// events. The window holds at most MAX_KEPT messages: growing one end drops the far end (and marks
// that end as not reached, so scrolling back there fetches it again), so memory stays bounded
// however far back one scrolls.
import { batch, signal } from "@preact/signals";
import { api } from "../api/client";
import { isSearchNarrow, matchesNarrow, narrowKey, narrowToApi, type Narrow } from "../narrow";
import { onEvent, onRegister } from "./events";
import { myUserId, type Message } from "./store";
import { noteMessage } from "./unread";
import { isStreamMuted, isTopicMuted } from "./user-topics";

/** src/boot/boot.js asks for the first page of the combined feed with these sizes: change both. */
export const PAGE_SIZE = 50;
export const MAX_KEPT = 2000;
/** Lists kept for going back to a narrow: the current one and a few before it. */
const MAX_LISTS = 4;

type Reaction = Message["reactions"][number];

export class MessageList {
  readonly key: string;
  /** The window's messages, oldest first. A new array on every change. */
  readonly messages = signal<readonly Message[]>([]);
  readonly foundOldest = signal(false);
  readonly foundNewest = signal(false);
  readonly loading = signal<"initial" | "older" | "newer" | null>(null);
  readonly error = signal<string | null>(null);
  /** The message to show first (the first unread, or `near`); null: the bottom. */
  readonly anchorId = signal<number | null>(null);
  /** Bumped when the window was replaced (not grown), so the view re-anchors its scroll. */
  readonly epoch = signal(0);
  private byId = new Map<number, Message>();
  private inFlight: Promise<void> | null = null;
  /** Live messages of this narrow that arrived while the first window was being fetched. */
  private arrivedWhileLoading: Message[] = [];

  constructor(readonly narrow: Narrow) {
    this.key = narrowKey(narrow);
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }
  get(id: number): Message | undefined {
    return this.byId.get(id);
  }

  /** The narrow as the server filters it, and the anchor a `near` term gives. */
  private serverNarrow(): { narrow: string; near: number | null } {
    const near = this.narrow.find((term) => term.operator === "near" || term.operator === "with");
    const terms = this.narrow.filter((term) => term.operator !== "near" && term.operator !== "with");
    return { narrow: narrowToApi(terms), near: near && /^\d+$/.test(near.operand) ? Number(near.operand) : null };
  }

  /** Messages of the combined feed skip muted streams and topics, as Zulip's. */
  private belongs(message: Message): boolean {
    if (this.narrow.length === 0 && message.type === "stream") return !isTopicMuted(message.stream_id ?? 0, message.subject);
    return true;
  }

  private async fetch(anchor: number | "newest" | "oldest" | "first_unread", before: number, after: number, includeAnchor = true) {
    const { narrow } = this.serverNarrow();
    const answer = await api.get("/messages", {
      anchor,
      num_before: before,
      num_after: after,
      include_anchor: includeAnchor,
      narrow,
      apply_markdown: true,
      client_gravatar: false,
    });
    for (const message of answer.messages) noteMessage(message);
    return answer;
  }

  private publish(): void {
    this.messages.value = [...this.byId.values()].sort((a, b) => a.id - b.id);
  }

  /** Adds (or replaces) messages; drops the `trimFrom` end beyond MAX_KEPT. */
  private merge(messages: readonly Message[], trimFrom: "oldest" | "newest"): void {
    for (const message of messages) if (this.belongs(message)) this.byId.set(message.id, message);
    if (this.byId.size > MAX_KEPT) {
      const ids = [...this.byId.keys()].sort((a, b) => a - b);
      const drop = ids.length - MAX_KEPT;
      const dropped = trimFrom === "oldest" ? ids.slice(0, drop) : ids.slice(ids.length - drop);
      for (const id of dropped) this.byId.delete(id);
      if (trimFrom === "oldest") this.foundOldest.value = false;
      else this.foundNewest.value = false;
    }
    this.publish();
  }

  private run(kind: "initial" | "older" | "newer", work: () => Promise<void>): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.loading.value = kind;
    this.error.value = null;
    this.inFlight = work()
      .catch((error: unknown) => {
        this.error.value = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        this.inFlight = null;
        this.loading.value = null;
      });
    return this.inFlight;
  }

  /** The first window: around the first unread (or `near`), PAGE_SIZE each side. */
  loadInitial(): Promise<void> {
    return this.run("initial", async () => {
      const { near } = this.serverNarrow();
      this.arrivedWhileLoading = [];
      const answer = await this.fetch(near ?? "first_unread", PAGE_SIZE, PAGE_SIZE);
      batch(() => {
        this.byId.clear();
        this.foundOldest.value = answer.found_oldest;
        this.foundNewest.value = answer.found_newest;
        this.merge(answer.messages, "newest");
        // The server may have answered before a message that an event delivered meanwhile: the
        // event was the only news of it, so keep it (a window short of the newest fetches it later).
        if (answer.found_newest && this.arrivedWhileLoading.length > 0) this.merge(this.arrivedWhileLoading, "oldest");
        this.arrivedWhileLoading = [];
        const anchor = answer.anchor !== undefined && answer.messages.some((m) => m.id === answer.anchor) ? answer.anchor : null;
        this.anchorId.value = anchor;
        this.epoch.value++;
      });
    });
  }

  /** The page before the oldest message held. */
  loadOlder(): Promise<void> {
    const oldest = this.messages.value[0];
    if (this.foundOldest.value || !oldest) return Promise.resolve();
    return this.run("older", async () => {
      const answer = await this.fetch(oldest.id, PAGE_SIZE, 0, false);
      batch(() => {
        this.foundOldest.value = answer.found_oldest;
        this.merge(answer.messages, "newest");
      });
    });
  }

  /** The page after the newest message held. */
  loadNewer(): Promise<void> {
    const list = this.messages.value;
    const newest = list[list.length - 1];
    if (this.foundNewest.value || !newest) return Promise.resolve();
    return this.run("newer", async () => {
      const answer = await this.fetch(newest.id, 0, PAGE_SIZE, false);
      batch(() => {
        this.foundNewest.value = answer.found_newest;
        this.merge(answer.messages, "oldest");
      });
    });
  }

  /**
   * After a lost event queue: refetch the newest part of the window (edits, reactions and deletions
   * missed) and everything after it until the newest, so that no message is lost and none doubled.
   */
  reconcile(): Promise<void> {
    // Another fetch (a page of older messages) must not swallow the catch-up: run after it.
    if (this.inFlight) return this.inFlight.then(() => this.reconcile());
    const list = this.messages.value;
    if (list.length === 0) return this.loadInitial();
    // A window short of the newest misses nothing new (scrolling down fetches it): refresh its end only.
    const reachesNewest = this.foundNewest.value;
    return this.run("newer", async () => {
      const startIndex = Math.max(0, list.length - PAGE_SIZE);
      let anchor = list[startIndex].id;
      let first = true;
      for (let page = 0; page < 40; page++) {
        // Only what was held before asking can be gone from the server's answer: a live message
        // that arrived while the request was out may be newer than the answer, and must stay.
        const heldBefore = new Set(this.byId.keys());
        const answer = await this.fetch(anchor, 0, reachesNewest ? 200 : PAGE_SIZE, first);
        const got = new Set(answer.messages.map((m) => m.id));
        const last = answer.messages[answer.messages.length - 1];
        batch(() => {
          // Held messages inside the fetched range that the server no longer has here: deleted or moved away.
          const upper = answer.found_newest ? Infinity : (last?.id ?? anchor);
          for (const id of heldBefore) if (id >= anchor && id <= upper && !got.has(id) && (first || id > anchor)) this.byId.delete(id);
          this.foundNewest.value = answer.found_newest;
          this.merge(answer.messages, "oldest");
        });
        first = false;
        if (answer.found_newest || !last || !reachesNewest) break;
        anchor = last.id;
      }
    });
  }

  /** Drops messages that no longer belong (a topic or stream muted, for the combined feed). */
  refilter(): void {
    let touched = false;
    for (const [id, message] of this.byId) {
      if (!this.belongs(message)) {
        this.byId.delete(id);
        touched = true;
      }
    }
    if (touched) this.publish();
  }

  /**
   * Brings back the messages of `terms` (a topic or stream just unmuted) that fall inside the
   * window of the combined feed, which refilter() had dropped; the window's ends stay as they are.
   */
  async restore(terms: Narrow): Promise<void> {
    const held = this.messages.value;
    // Everything was hidden: load the window afresh.
    if (held.length === 0) return this.loadInitial();
    const oldest = held[0].id;
    const newest = held[held.length - 1].id;
    try {
      const answer = await api.get("/messages", {
        anchor: this.foundNewest.value ? "newest" : newest,
        num_before: MAX_KEPT,
        num_after: 0,
        narrow: narrowToApi(terms),
        apply_markdown: true,
        client_gravatar: false,
      });
      for (const message of answer.messages) noteMessage(message);
      const inWindow = answer.messages.filter((m) => (m.id >= oldest || this.foundOldest.value) && (m.id <= newest || this.foundNewest.value));
      if (inWindow.length > 0) this.merge(inWindow, "oldest");
    } catch (error) {
      // The next visit's reconcile fetches them anyway.
      console.warn("refetching unmuted messages failed", error);
    }
  }

  /** Resolves when the current fetch (if any) is done. */
  settled(): Promise<void> {
    return this.inFlight ?? Promise.resolve();
  }

  // Event updates -------------------------------------------------------------------------------

  /** A live message: appended when it belongs here and the window reaches the newest. */
  addLive(message: Message): void {
    if (this.byId.has(message.id)) return;
    if (matchesNarrow(this.narrow, message, myUserId.value) !== true || isSearchNarrow(this.narrow)) return;
    if (this.loading.peek() === "initial") this.arrivedWhileLoading.push(message);
    if (!this.foundNewest.value) return;
    this.merge([message], "oldest");
  }

  update(ids: Iterable<number>, change: (message: Message) => Message | null): void {
    let touched = false;
    for (const id of ids) {
      const message = this.byId.get(id);
      if (!message) continue;
      const next = change(message);
      if (next === null || !this.belongs(next)) this.byId.delete(id);
      else this.byId.set(id, next);
      touched = true;
    }
    if (touched) this.publish();
  }
}

// ---------------------------------------------------------------------------------------------
// The lists, most recently used last.

const lists = new Map<string, MessageList>();
export const currentList = signal<MessageList | null>(null);

/** The list of a narrow (kept from a previous visit, or new and loading). */
export function listFor(narrow: Narrow): MessageList {
  const key = narrowKey(narrow);
  let list = lists.get(key);
  if (list) lists.delete(key);
  else {
    list = new MessageList(narrow);
    void list.loadInitial();
  }
  lists.set(key, list);
  while (lists.size > MAX_LISTS) {
    const oldest = lists.keys().next().value as string;
    if (lists.get(oldest) === currentList.value) break;
    lists.delete(oldest);
  }
  return list;
}

export function showNarrow(narrow: Narrow): MessageList {
  const list = listFor(narrow);
  currentList.value = list;
  return list;
}

function forEachList(fn: (list: MessageList) => void): void {
  for (const list of lists.values()) fn(list);
}

/** Any held copy of a message (for the actions menu, the compose box's reply). */
export function findMessage(id: number): Message | undefined {
  for (const list of lists.values()) {
    const message = list.get(id);
    if (message) return message;
  }
  return undefined;
}

onRegister((_state, reconnect) => {
  if (!reconnect) {
    // A list fetched before the queue existed may miss a message sent in between: catch up once
    // it has loaded (a fetch of its newest part; nothing is doubled, messages are keyed by id).
    for (const list of lists.values()) {
      list.refilter();
      void list.settled().then(() => {
        if (list.foundNewest.peek()) void list.reconcile();
      });
    }
    return;
  }
  // Lists not on screen are dropped (fetched afresh when visited); the one on screen catches up.
  const current = currentList.value;
  for (const key of [...lists.keys()]) if (lists.get(key) !== current) lists.delete(key);
  if (current) void current.reconcile();
});

// Muting a topic or a stream hides it from the combined feed at once; unmuting fetches its
// messages back into the feed's window.
onEvent("user_topic", (event) => {
  forEachList((list) => list.refilter());
  if (!isTopicMuted(event.stream_id, event.topic_name)) {
    const terms = [
      { operator: "channel", operand: String(event.stream_id) },
      { operator: "topic", operand: event.topic_name },
    ];
    forEachList((list) => list.narrow.length === 0 && void list.restore(terms));
  }
});
onEvent("subscription", (event) => {
  if (event.op !== "update" || (event.property !== "is_muted" && event.property !== "in_home_view")) return;
  forEachList((list) => list.refilter());
  const streamId = event.stream_id;
  if (streamId !== undefined && !isStreamMuted(streamId)) forEachList((list) => list.narrow.length === 0 && void list.restore([{ operator: "channel", operand: String(streamId) }]));
});

onEvent("message", (event) => {
  const message: Message = { ...event.message, flags: event.flags };
  forEachList((list) => list.addLive(message));
});

onEvent("update_message", (event) => {
  const moved = event.new_stream_id !== undefined || event.subject !== undefined;
  forEachList((list) => {
    if (event.rendered_content !== undefined) {
      list.update([event.message_id], (m) => ({
        ...m,
        // A search's highlighted copy of the old content would hide the edit.
        match_content: undefined,
        content: event.rendered_content!,
        is_me_message: event.is_me_message ?? m.is_me_message,
        last_edit_timestamp: event.edit_timestamp,
        flags: event.flags,
      }));
    }
    if (moved) {
      list.update(event.message_ids, (m) => {
        // Feature level 365: a move sets last_moved_timestamp (not resolving a topic, which
        // Zulip does not count; told apart here by the topic without its check mark).
        const resolving = event.new_stream_id === undefined && event.subject !== undefined && event.orig_subject !== undefined && event.subject.replace(/^[✔ ]+/u, "") === event.orig_subject.replace(/^[✔ ]+/u, "");
        const next: Message = resolving ? { ...m } : { ...m, last_moved_timestamp: event.edit_timestamp };
        if (event.new_stream_id !== undefined) next.stream_id = event.new_stream_id;
        if (event.subject !== undefined) {
          next.subject = event.subject;
          next.match_subject = undefined;
        }
        if (event.topic_links !== undefined) next.topic_links = event.topic_links;
        // Moved out of this narrow: gone from this list.
        return matchesNarrow(list.narrow, next, myUserId.value) === false ? null : next;
      });
      // Moved into the list on screen: fetch so they show in their place.
      if (list === currentList.value && list.foundNewest.value && event.message_ids.some((id) => !list.has(id)) && !isSearchNarrow(list.narrow)) {
        void list.reconcile();
      }
    }
  });
});

onEvent("delete_message", (event) => {
  const ids = event.message_ids ?? (event.message_id !== undefined ? [event.message_id] : []);
  forEachList((list) => list.update(ids, () => null));
});

onEvent("update_message_flags", (event) => {
  const apply = (m: Message): Message => {
    const flags = new Set(m.flags ?? []);
    if (event.op === "add") flags.add(event.flag);
    else flags.delete(event.flag);
    return { ...m, flags: [...flags] };
  };
  forEachList((list) => {
    if (event.all) list.update(list.messages.value.map((m) => m.id), apply);
    else list.update(event.messages, apply);
  });
});

onEvent("reaction", (event) => {
  forEachList((list) =>
    list.update([event.message_id], (m) => {
      const same = (r: Reaction) => r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type;
      const reactions = m.reactions.filter((r) => !same(r));
      if (event.op === "add") {
        reactions.push({
          emoji_name: event.emoji_name,
          emoji_code: event.emoji_code,
          reaction_type: event.reaction_type as Reaction["reaction_type"],
          user_id: event.user_id,
          user: event.user,
        });
      }
      return { ...m, reactions };
    }),
  );
});
