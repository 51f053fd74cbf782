// The whole page: top bar, the three columns (views and channels; the narrow's messages and the
// compose box; people), and the overlays the hash opens (#settings/..., #organization/...,
// #channels/...), whose code loads only when first opened.
import { signal } from "@preact/signals";
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { currentList, showNarrow } from "../state/messages";
import { closeOverlay, currentNarrow, route } from "../state/route";
import { registered } from "../state/store";
import { narrowKey, type Narrow } from "../narrow";
import { ComposeBox } from "./compose/ComposeBox";
import { NarrowHeader, narrowTitle } from "./layout/NarrowHeader";
import { TopBar } from "./layout/TopBar";
import { MessageListView } from "./messages/MessageList";
import { selectedMessageId } from "./messages/selection";
import { TypingNotice } from "./messages/TypingNotice";
import { LeftSidebar } from "./sidebar/LeftSidebar";
import { RightSidebar } from "./sidebar/RightSidebar";
import "../styles/app.css";

type OverlayProps = { section: string; onClose(): void };

/** A component whose code is fetched the first time it renders (a small stand-in for React.lazy). */
function lazyComponent<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  let failed = false;
  let pending: Promise<void> | null = null;
  return function Lazy(props: P) {
    const [, setReady] = useState(0);
    useEffect(() => {
      if (loaded) return;
      let live = true;
      pending ??= load().then(
        (module) => void (loaded = module.default),
        () => void ((failed = true), (pending = null)),
      );
      void pending.then(() => live && setReady((n) => n + 1));
      return () => {
        live = false;
      };
    }, []);
    if (loaded) {
      const Loaded = loaded;
      return <Loaded {...props} />;
    }
    return (
      <div class="overlay-loading" role="status">
        {failed ? "Could not load this screen. Check the connection and try again." : "Loading…"}
      </div>
    );
  };
}

const Settings = lazyComponent<OverlayProps>(() => import("./settings/SettingsOverlay"));
const Admin = lazyComponent<OverlayProps>(() => import("./admin/AdminOverlay"));
const StreamBrowser = lazyComponent<OverlayProps>(() => import("./streams/StreamBrowser"));

function emptyTextFor(narrow: Narrow): string {
  if (narrow.length === 0) return "No messages yet. Say hello in a channel!";
  const is = narrow.find((t) => t.operator === "is")?.operand;
  if (narrow.length === 1 && is === "starred") return "You have no starred messages.";
  if (narrow.length === 1 && is === "mentioned") return "Nobody has mentioned you yet.";
  if (narrow.some((t) => t.operator === "search")) return "No messages match this search.";
  return "No messages here yet.";
}

function Centre({ narrow }: { narrow: Narrow }) {
  const list = currentList.value;
  // The list follows the narrow; the selection is per view.
  const key = narrowKey(narrow);
  useEffect(() => {
    showNarrow(narrow);
    selectedMessageId.value = null;
  }, [key]);
  useEffect(() => {
    document.querySelector<HTMLElement>(".msg-list-scroller")?.focus({ preventScroll: true });
  }, [key]);
  return (
    <main class="centre" aria-label={narrowTitle(narrow)}>
      <NarrowHeader narrow={narrow} />
      {list && list.key === key ? <MessageListView key={list.key} list={list} emptyText={emptyTextFor(narrow)} /> : <div class="msg-list-scroller" />}
      <TypingNotice narrow={narrow} />
      <div class="compose-slot">
        <ComposeBox narrow={narrow} />
      </div>
    </main>
  );
}

/**
 * On the first load the page waits for its first message list as well as /register (both are in
 * flight from the boot script), up to LIST_WAIT_MS: one render, layout and paint of the whole page
 * instead of the columns first and the list a frame later, which cost a second layout and paint of
 * everything (about 300 ms with 100 channels on a loaded machine).
 */
const LIST_WAIT_MS = 1500;
const waitForFirstList = signal(true);
let pageShown = false;

export function App() {
  const state = registered.value;
  const current = route.value;
  const narrow = currentNarrow.value;
  const list = currentList.value;
  const holding = !pageShown && waitForFirstList.value && list !== null && list.loading.value === "initial";
  useEffect(() => {
    if (!state || !waitForFirstList.peek()) return;
    const timer = setTimeout(() => void (waitForFirstList.value = false), LIST_WAIT_MS);
    return () => clearTimeout(timer);
  }, [state !== null]);
  if (!state || holding) {
    return (
      <div class="app-loading" role="status">
        Loading…
      </div>
    );
  }
  pageShown = true;
  return (
    <div class="app">
      <button type="button" class="skip-link" onClick={() => document.querySelector<HTMLElement>(".msg-list-scroller")?.focus()}>
        Skip to messages
      </button>
      <TopBar />
      <div class="columns">
        <LeftSidebar />
        <Centre narrow={narrow} />
        <RightSidebar />
      </div>
      {current.kind === "settings" && <Settings section={current.section} onClose={closeOverlay} />}
      {current.kind === "organization" && <Admin section={current.section} onClose={closeOverlay} />}
      {current.kind === "channels" && <StreamBrowser section={current.section} onClose={closeOverlay} />}
    </div>
  );
}
