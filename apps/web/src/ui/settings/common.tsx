// Pieces the personal settings and the organization screens share: the modal shell with its
// section nav, the inline "Saved"/error line each form shows, labelled controls, and multipart
// requests (avatars, bot avatars, custom emoji) that the typed JSON client does not send.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, SessionEndedError, csrfToken, endsSession, goToLogin } from "../../api/client";
import { registered, userSettings } from "../../state/store";
import "./settings.css";

export type Registered = NonNullable<typeof registered.value>;
export type UserSettings = NonNullable<Registered["user_settings"]>;

/** The server's words for a refusal, or a plain sentence for anything else. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** A request's outcome, shown beside the form that made it. */
export type Outcome = { kind: "idle" } | { kind: "busy" } | { kind: "ok"; text: string } | { kind: "error"; text: string };

/** Runs a request and keeps its outcome for <Status>; a lost session sends the page to /login. */
export function useOutcome(): [Outcome, (work: () => Promise<unknown>, done?: string) => Promise<boolean>, (o: Outcome) => void] {
  const [outcome, setOutcome] = useState<Outcome>({ kind: "idle" });
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );
  const run = async (work: () => Promise<unknown>, done = "Saved"): Promise<boolean> => {
    setOutcome({ kind: "busy" });
    try {
      await work();
      if (alive.current) setOutcome({ kind: "ok", text: done });
      return true;
    } catch (error) {
      if (error instanceof SessionEndedError) goToLogin();
      if (alive.current) setOutcome({ kind: "error", text: errorText(error) });
      return false;
    }
  };
  return [outcome, run, setOutcome];
}

export function Status({ outcome }: { outcome: Outcome }) {
  // Always rendered, so the live region exists before its text changes (screen readers need that).
  const text = outcome.kind === "busy" ? "Saving…" : outcome.kind === "ok" || outcome.kind === "error" ? outcome.text : "";
  return (
    <p class={`set-status set-status-${outcome.kind}`} role={outcome.kind === "error" ? "alert" : "status"} aria-live="polite">
      {text}
    </p>
  );
}

/** Loads a list the screen shows, again on `reload()` after each change. */
export function useLoad<T>(load: () => Promise<T>): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && (setData(value), setError(null)),
      (err: unknown) => {
        if (err instanceof SessionEndedError) goToLogin();
        if (current) setError(errorText(err));
      },
    );
    return () => {
      current = false;
    };
    // Loads once per round: `load` is a new closure each render and must not retrigger it.
  }, [round]);
  return { data, error, reload: () => setRound((n) => n + 1) };
}

export function Loading({ error }: { error: string | null }) {
  return error ? (
    <p class="set-status set-status-error" role="alert">
      {error}
    </p>
  ) : (
    <p class="set-muted">Loading…</p>
  );
}

let nextId = 0;
/** A stable id for a label's `for`. */
export function useId(prefix = "set"): string {
  const ref = useRef<string>();
  if (!ref.current) ref.current = `${prefix}-${++nextId}`;
  return ref.current;
}

export function Toggle(props: { label: string; checked: boolean; disabled?: boolean; hint?: string; onChange(value: boolean): void }) {
  const id = useId();
  return (
    <div class="set-toggle">
      <input id={id} type="checkbox" checked={props.checked} disabled={props.disabled} onChange={(e) => props.onChange(e.currentTarget.checked)} />
      <label for={id}>{props.label}</label>
      {props.hint && <span class="set-hint">{props.hint}</span>}
    </div>
  );
}

export interface Choice {
  value: string;
  label: string;
}

export function Select(props: { label: string; value: string; choices: Choice[]; disabled?: boolean; onChange(value: string): void }) {
  const id = useId();
  return (
    <div class="set-field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} disabled={props.disabled} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, "onInput" | "label" | "value"> & {
  label: string;
  value: string;
  onInput(value: string): void;
  hint?: string;
};

export function TextInput({ label, value, onInput, hint, ...rest }: InputProps) {
  const id = useId();
  return (
    <div class="set-field">
      <label for={id}>{label}</label>
      <input id={id} type="text" {...rest} value={value} onInput={(e) => onInput(e.currentTarget.value)} />
      {hint && <span class="set-hint">{hint}</span>}
    </div>
  );
}

export function Section(props: { title: string; children: ComponentChildren; intro?: string }) {
  return (
    <section class="set-section">
      <h3>{props.title}</h3>
      {props.intro && <p class="set-muted">{props.intro}</p>}
      {props.children}
    </section>
  );
}

/** Multipart requests (files), with the session's CSRF token; the answer read as client.ts does. */
export async function sendForm(method: "POST" | "PATCH", path: string, form: FormData): Promise<Record<string, unknown>> {
  const response = await fetch(`/json${path}`, {
    method,
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
    body: form,
    credentials: "same-origin",
  });
  let payload: Record<string, unknown>;
  try {
    payload = (await response.json()) as Record<string, unknown>;
  } catch {
    throw new ApiError(response.status, "BAD_RESPONSE", `The server answered ${response.status} without JSON.`, {});
  }
  if (response.ok && payload.result === "success") return payload;
  const code = typeof payload.code === "string" ? payload.code : "BAD_REQUEST";
  const msg = typeof payload.msg === "string" ? payload.msg : `Error ${response.status}`;
  if (endsSession(response.status, code)) {
    goToLogin();
    throw new SessionEndedError(response.status, code, msg, payload);
  }
  throw new ApiError(response.status, code, msg, payload);
}

/** The user's current settings: user_settings events keep `userSettings` current, /register's copy is the fallback. */
export function currentSettings(): Partial<UserSettings> {
  return { ...registered.value?.user_settings, ...userSettings.value };
}

/** Keeps the /register state current after a change this screen made, without waiting for its event. */
export function patchRegistered(changes: Partial<Registered>): void {
  const state = registered.value;
  if (state) registered.value = { ...state, ...changes };
}

export function patchUserSettings(changes: Partial<UserSettings>): void {
  // What the rest of the app reads (message times, theme), at once rather than at the event.
  userSettings.value = { ...userSettings.value, ...changes };
  const state = registered.value;
  if (!state) return;
  const top: Record<string, unknown> = {};
  // Older clients read the settings at the top level too; keep both in step.
  for (const key of Object.keys(changes)) if (key in state) top[key] = (changes as Record<string, unknown>)[key];
  registered.value = { ...state, ...top, user_settings: state.user_settings ? { ...state.user_settings, ...changes } : state.user_settings };
}

// ---- The modal shell ----

export interface NavItem {
  key: string;
  label: string;
  group?: string;
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog with a nav of sections on the left (links to `#<route>/<key>`), closed by Esc
 * or its close button; focus stays inside while it is open and goes back where it was after.
 */
export function Overlay(props: { title: string; route: string; items: NavItem[]; current: string; onClose(): void; children: ComponentChildren }) {
  const dialog = useRef<HTMLDivElement>(null);
  const titleId = useId("set-title");

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    dialog.current?.querySelector<HTMLElement>(".set-close")?.focus();
    return () => before?.focus?.();
  }, []);

  // The section's heading takes focus when the section changes, so a screen reader announces it.
  useEffect(() => {
    const heading = dialog.current?.querySelector<HTMLElement>(".set-main h2");
    if (heading && document.activeElement && !dialog.current?.querySelector(".set-close:focus")) heading.focus();
  }, [props.current]);

  // On the document, not the dialog: focus may have left it (a button that disabled itself after
  // saving drops focus to <body>), and Esc and Tab must still work. Capture phase, so the app's own
  // Esc handling (back to the message list) does not run as well.
  const close = useRef(props.onClose);
  close.current = props.onClose;
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      const box = dialog.current;
      if (!box) return;
      if (event.key === "Escape") {
        event.stopPropagation();
        event.preventDefault();
        close.current();
        return;
      }
      if (event.key !== "Tab") return;
      const items = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null);
      if (items.length === 0) return;
      const first = items[0];
      const last = items[items.length - 1];
      const inside = box.contains(document.activeElement);
      if (!inside) {
        event.preventDefault();
        (event.shiftKey ? last : first).focus();
      } else if (event.shiftKey && document.activeElement === first) {
        event.preventDefault();
        last.focus();
      } else if (!event.shiftKey && document.activeElement === last) {
        event.preventDefault();
        first.focus();
      }
    };
    document.addEventListener("keydown", onKeyDown, true);
    return () => document.removeEventListener("keydown", onKeyDown, true);
  }, []);

  const groups: { name: string | undefined; items: NavItem[] }[] = [];
  for (const item of props.items) {
    const last = groups[groups.length - 1];
    if (last && last.name === item.group) last.items.push(item);
    else groups.push({ name: item.group, items: [item] });
  }
  const active = props.items.find((i) => i.key === props.current) ?? props.items[0];

  return (
    <div class="set-backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onClose()}>
      <div class="set-dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} ref={dialog}>
        <div class="set-header">
          <h1 id={titleId}>{props.title}</h1>
          <button type="button" class="set-close" aria-label="Close" onClick={props.onClose}>
            ×
          </button>
        </div>
        <div class="set-body">
          <nav class="set-nav" aria-label={`${props.title} sections`}>
            {groups.map((group) => (
              <div key={group.name ?? "-"}>
                {group.name && <h2 class="set-nav-group">{group.name}</h2>}
                <ul>
                  {group.items.map((item) => (
                    <li key={item.key}>
                      <a href={`#${props.route}/${item.key}`} class={item.key === active.key ? "set-nav-active" : ""} aria-current={item.key === active.key ? "page" : undefined}>
                        {item.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          </nav>
          <div class="set-main">
            <h2 tabIndex={-1}>{active.label}</h2>
            {props.children}
          </div>
        </div>
      </div>
    </div>
  );
}

/** Offers a text as a file to save (a bot's zuliprc), without a round trip. */
export function downloadText(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function formatDate(value: string | number): string {
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleDateString();
}

export const BOT_TYPES: Record<number, string> = { 1: "Generic", 2: "Incoming webhook", 3: "Outgoing webhook", 4: "Embedded" };

export const ROLE_NAMES: Record<number, string> = { 100: "Owner", 200: "Administrator", 300: "Moderator", 400: "Member", 600: "Guest" };

function sameOrigin(url: string): boolean {
  try {
    return new URL(url, window.location.href).origin === window.location.origin;
  } catch {
    return false;
  }
}

/** A picture from this server, or the name's initial (the CSP allows no other origin's images: gravatars). */
export function Pic(props: { url: string | null | undefined; name: string; large?: boolean; alt?: string }) {
  const className = props.large ? "set-avatar" : "set-avatar-small";
  if (props.url && sameOrigin(props.url)) return <img class={className} src={props.url} alt={props.alt ?? ""} />;
  return (
    <span class={`${className} set-initial`} aria-hidden={props.alt ? undefined : "true"} role={props.alt ? "img" : undefined} aria-label={props.alt}>
      {[...props.name.trim()][0]?.toUpperCase() ?? "?"}
    </span>
  );
}
