// The message list of a narrow, virtualised: only rows near the viewport are in the DOM, between
// two spacers whose heights stand for the rows above and below. Row heights are measured once shown
// and cached (an estimate until then). The scroll position is kept by an anchor — the first row at
// the top of the viewport and its offset — so that prepending older messages, trimming, images
// loading and re-measured heights never move what the user is looking at; at the bottom, the list
// sticks to the bottom as new messages arrive.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { isSearchNarrow } from "../../narrow";
import type { MessageList } from "../../state/messages";
import { markRead } from "../../state/read";
import { unreadVersion, isUnread } from "../../state/unread";
import { useDropUploads } from "../compose/composeState";
import { buildItems, MemoRow, type RowItem } from "./MessageRow";
import { selectedMessageId } from "./selection";
import "./messages.css";

const ESTIMATE = 64;
const HEADER_ESTIMATE = 34;
/** Rendered beyond the viewport on each side, in pixels. */
const OVERSCAN = 900;
/** Fetch the next page when this close to an end, in pixels. */
const FETCH_MARGIN = 2500;

interface ViewState {
  heights: Map<string, number>;
  anchor: { id: number; offset: number } | null;
  stickToBottom: boolean;
  epoch: number;
  range: [number, number];
}

function estimate(item: RowItem): number {
  return ESTIMATE + (item.header ? HEADER_ESTIMATE : 0) - (item.sender ? 0 : 22);
}

function offsetsOf(items: RowItem[], heights: Map<string, number>): number[] {
  const offsets = new Array<number>(items.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < items.length; i++) offsets[i + 1] = offsets[i] + (heights.get(items[i].key) ?? estimate(items[i]));
  return offsets;
}

/** The first index whose row ends below `y`. */
function indexAt(offsets: number[], y: number): number {
  let lo = 0;
  let hi = offsets.length - 2;
  if (hi < 0) return 0;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid + 1] <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function rangeFor(offsets: number[], top: number, height: number): [number, number] {
  const count = offsets.length - 1;
  if (count <= 0) return [0, 0];
  const start = indexAt(offsets, Math.max(0, top - OVERSCAN));
  const end = Math.min(count, indexAt(offsets, top + height + OVERSCAN) + 1);
  return [start, end];
}

let firstListRendered = false;

/** Each list's view state, kept while the list is cached (state/messages.ts), so going back to a narrow returns to where the user was. */
const savedViews = new WeakMap<MessageList, ViewState>();
function viewStateOf(list: MessageList): ViewState {
  let view = savedViews.get(list);
  if (!view) savedViews.set(list, (view = { heights: new Map(), anchor: null, stickToBottom: false, epoch: -1, range: [0, 0] }));
  return view;
}

function selectMessage(id: number): void {
  selectedMessageId.value = id;
}

export function MessageListView({ list, emptyText }: { list: MessageList; emptyText?: string }) {
  const messages = list.messages.value;
  const loading = list.loading.value;
  const error = list.error.value;
  const foundOldest = list.foundOldest.value;
  const foundNewest = list.foundNewest.value;
  const epoch = list.epoch.value;
  const selected = selectedMessageId.value;
  void unreadVersion.value; // re-render when unread state changes (the unread marker)
  const items = useMemo(() => buildItems(messages), [messages]);
  // Files dropped on the messages go to the compose box, as Zulip's.
  const drop = useDropUploads();

  const scrollerRef = useRef<HTMLDivElement>(null);
  const topRef = useRef<HTMLDivElement>(null);
  const bottomRef = useRef<HTMLDivElement>(null);
  const rowsRef = useRef<HTMLDivElement>(null);
  const state = useRef<ViewState>(viewStateOf(list));
  const [, setTick] = useState(0);
  const itemsRef = useRef(items);
  itemsRef.current = items;

  const v = state.current;

  // A new window (first load, re-anchoring): start at the anchor message, or at the bottom.
  if (v.epoch !== epoch) {
    v.epoch = epoch;
    const anchorId = list.anchorId.peek();
    const index = anchorId === null ? -1 : items.findIndex((item) => item.message.id === anchorId);
    if (index >= 0) {
      v.anchor = { id: items[index].message.id, offset: 40 };
      v.stickToBottom = false;
      const offsets = offsetsOf(items, v.heights);
      v.range = rangeFor(offsets, offsets[index], window.innerHeight);
    } else {
      v.anchor = null;
      v.stickToBottom = true;
      const offsets = offsetsOf(items, v.heights);
      v.range = rangeFor(offsets, offsets[items.length], window.innerHeight);
    }
  }
  // Items shrank (trim, delete): keep the range inside them.
  const start = Math.min(v.range[0], items.length);
  const end = Math.min(Math.max(v.range[1], start), items.length);

  /** Re-measures rendered rows, sizes the spacers, restores the scroll anchor; returns whether the range must change. */
  function settle(): void {
    const scroller = scrollerRef.current;
    const rows = rowsRef.current;
    if (!scroller || !rows) return;
    const current = itemsRef.current;
    for (const child of Array.from(rows.children) as HTMLElement[]) {
      const key = child.dataset.key;
      if (key) {
        const height = child.offsetHeight;
        if (height > 0) v.heights.set(key, height);
      }
    }
    // Forget heights of rows long gone (the window moved far), so the cache stays bounded too.
    if (v.heights.size > current.length * 2 + 2000) {
      const keep = new Set(current.map((item) => item.key));
      for (const key of v.heights.keys()) if (!keep.has(key)) v.heights.delete(key);
    }
    const offsets = offsetsOf(current, v.heights);
    const [s, e] = [Math.min(v.range[0], current.length), Math.min(v.range[1], current.length)];
    topRef.current!.style.height = `${offsets[s]}px`;
    bottomRef.current!.style.height = `${offsets[current.length] - offsets[Math.max(s, e)]}px`;
    // Offsets count from the first row; notes above it ("Loading older messages…") shift it by `base`.
    const base = topRef.current!.offsetTop;
    if (v.stickToBottom) {
      scroller.scrollTop = scroller.scrollHeight;
    } else if (v.anchor) {
      const index = current.findIndex((item) => item.message.id === v.anchor!.id);
      if (index >= 0) scroller.scrollTop = base + offsets[index] - v.anchor.offset;
    }
    const top = scroller.scrollTop - base;
    const next = rangeFor(offsets, top, scroller.clientHeight);
    // Re-render only when the rendered rows no longer cover the viewport (with half the overscan).
    const needTop = top - OVERSCAN / 2;
    const needBottom = top + scroller.clientHeight + OVERSCAN / 2;
    if (offsets[s] > Math.max(0, needTop) || offsets[Math.max(s, e)] < Math.min(offsets[current.length], needBottom) || s >= e) {
      if (next[0] !== v.range[0] || next[1] !== v.range[1]) {
        v.range = next;
        setTick((t) => t + 1);
      }
    }
  }

  function onScroll(): void {
    const scroller = scrollerRef.current;
    if (!scroller) return;
    const current = itemsRef.current;
    const offsets = offsetsOf(current, v.heights);
    const scrollTop = scroller.scrollTop;
    const top = scrollTop - (topRef.current?.offsetTop ?? 0);
    const fromBottom = scroller.scrollHeight - scrollTop - scroller.clientHeight;
    v.stickToBottom = fromBottom < 3 && list.foundNewest.peek();
    if (current.length > 0) {
      const index = indexAt(offsets, top);
      // The row's top relative to the viewport's top (negative when partly scrolled past).
      v.anchor = { id: current[index].message.id, offset: offsets[index] - top };
    }
    const next = rangeFor(offsets, top, scroller.clientHeight);
    if (next[0] !== v.range[0] || next[1] !== v.range[1]) {
      v.range = next;
      setTick((t) => t + 1);
    }
    if (list.loading.peek() === null) {
      if (scrollTop < FETCH_MARGIN && !list.foundOldest.peek()) void list.loadOlder();
      else if (fromBottom < FETCH_MARGIN && !list.foundNewest.peek()) void list.loadNewer();
    }
  }

  useLayoutEffect(() => {
    settle();
    const scroller = scrollerRef.current;
    // A short list: fetch more until the viewport is full or the history ends.
    if (scroller && list.loading.peek() === null && messages.length > 0) {
      if (scroller.scrollHeight <= scroller.clientHeight + FETCH_MARGIN) {
        if (!list.foundOldest.peek()) void list.loadOlder();
        else if (!list.foundNewest.peek()) void list.loadNewer();
      }
    }
    if (!firstListRendered && loading !== "initial") {
      firstListRendered = true;
      document.body.dataset.ready = "1";
    }
  });

  // Rows change height after they render (images loading, fonts): re-measure and keep the anchor.
  useEffect(() => {
    const rows = rowsRef.current;
    const scroller = scrollerRef.current;
    if (!rows || !scroller) return;
    const resize = new ResizeObserver(() => settle());
    resize.observe(rows);
    resize.observe(scroller);
    return () => resize.disconnect();
  }, []);

  // Mark as read: the end marker of each row that has been on screen while the window had focus.
  useEffect(() => {
    const scroller = scrollerRef.current;
    const rows = rowsRef.current;
    if (!scroller || !rows) return;
    const visible = new Set<number>();
    const flush = () => {
      // Search results are not reading, as Zulip's: they stay unread.
      if (document.visibilityState === "visible" && document.hasFocus() && visible.size > 0 && !isSearchNarrow(list.narrow)) markRead(visible);
    };
    const observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          const id = Number((entry.target as HTMLElement).dataset.readId);
          if (entry.isIntersecting) visible.add(id);
          else visible.delete(id);
        }
        flush();
      },
      { root: scroller, threshold: 0 },
    );
    const observeAll = () => {
      observer.disconnect();
      visible.clear();
      for (const marker of Array.from(rows.querySelectorAll<HTMLElement>(".msg-end"))) observer.observe(marker);
    };
    observeAll();
    const mutation = new MutationObserver(observeAll);
    mutation.observe(rows, { childList: true });
    window.addEventListener("focus", flush);
    document.addEventListener("visibilitychange", flush);
    return () => {
      observer.disconnect();
      mutation.disconnect();
      window.removeEventListener("focus", flush);
      document.removeEventListener("visibilitychange", flush);
    };
  }, []);

  // Keep the selected message on screen (j/k).
  useEffect(() => {
    const scroller = scrollerRef.current;
    if (selected === null || !scroller) return;
    const current = itemsRef.current;
    const index = current.findIndex((item) => item.message.id === selected);
    if (index < 0) return;
    const offsets = offsetsOf(current, v.heights);
    const base = topRef.current?.offsetTop ?? 0;
    const top = base + offsets[index];
    const bottom = base + offsets[index + 1];
    if (top < scroller.scrollTop + 10) scroller.scrollTop = top - 40;
    else if (bottom > scroller.scrollTop + scroller.clientHeight - 10) scroller.scrollTop = Math.min(top - 40, bottom - scroller.clientHeight + 40);
    else return;
    onScroll();
  }, [selected]);

  const rendered = items.slice(start, end);
  return (
    // The testid is on the element that scrolls, so that tests and the benchmark can scroll it.
    <div class="msg-list-scroller" data-testid="message-list" ref={scrollerRef} onScroll={onScroll} tabIndex={-1} {...drop}>
      <div class="msg-list" role="log" aria-label="Messages" aria-busy={loading !== null}>
        {foundOldest && messages.length > 0 && <div class="msg-list-start">This is the start of this view.</div>}
        {!foundOldest && loading === "older" && <div class="msg-list-loading">Loading older messages…</div>}
        <div class="msg-spacer" ref={topRef} aria-hidden="true" />
        <div class="msg-rows" ref={rowsRef}>
          {rendered.map((item) => (
            <MemoRow key={item.message.id} item={item} selected={selected === item.message.id} unread={isUnread(item.message.id)} onSelect={selectMessage} />
          ))}
        </div>
        <div class="msg-spacer" ref={bottomRef} aria-hidden="true" />
        {loading === "initial" && <div class="msg-list-loading">Loading messages…</div>}
        {loading === "newer" && !foundNewest && <div class="msg-list-loading">Loading newer messages…</div>}
        {error && (
          <div class="msg-list-error" role="alert">
            Could not load messages: {error}{" "}
            <button type="button" onClick={() => void (messages.length ? list.loadOlder() : list.loadInitial())}>
              Try again
            </button>
          </div>
        )}
        {loading === null && !error && messages.length === 0 && <div class="msg-list-empty">{emptyText ?? "No messages here yet."}</div>}
      </div>
    </div>
  );
}
