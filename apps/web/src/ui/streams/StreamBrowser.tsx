// The channel browser (#channels/all): every stream the user may see, filtered by name, with
// subscribe/unsubscribe, subscriber counts, the user's settings of subscribed ones, and "Create
// channel" for those allowed. Lazy: the core mounts it with import().
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api } from "../../api/client";
import { isAdmin, registered, streamsById, subscriptionsById } from "../../state/store";
import { streamHash } from "../actions/links";
import { showError } from "../actions/toast";
import { openCreateStreamDialog } from "./create-stream";
import { StreamSettings } from "./stream-settings";
import { subscribe, unsubscribe } from "./subscription-actions";
import "./streams.css";

type Show = "all" | "subscribed" | "unsubscribed";

interface Row {
  id: number;
  name: string;
  renderedDescription: string;
  inviteOnly: boolean;
  subscribed: boolean;
  color: string | null;
}

/** Subscriber counts of the streams the user is subscribed to (the only ones the API tells of). */
function useSubscriberCounts(): ReadonlyMap<number, number> {
  const [counts, setCounts] = useState<ReadonlyMap<number, number>>(new Map());
  const subs = subscriptionsById.value;
  useEffect(() => {
    let live = true;
    api.get("/users/me/subscriptions", { include_subscribers: true }).then(
      (answer) => {
        if (live) setCounts(new Map(answer.subscriptions.map((s) => [s.stream_id, s.subscribers?.length ?? 0])));
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
    // Again when subscriptions change: joining or leaving changes a count.
  }, [subs.size]);
  return counts;
}

/** Keeps Tab inside the overlay (it is modal: the page behind is not for the keyboard meanwhile). */
function trapTab(event: KeyboardEvent, container: HTMLElement | null): void {
  if (event.key !== "Tab" || !container) return;
  const focusable = [...container.querySelectorAll<HTMLElement>("a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1'])")].filter(
    (el) => el.offsetParent !== null,
  );
  if (focusable.length === 0) return;
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  if (event.shiftKey && document.activeElement === first) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && document.activeElement === last) {
    event.preventDefault();
    first.focus();
  }
}

export interface StreamBrowserProps {
  onClose(): void;
  /** The route's section (#channels/<section>): "subscribed", "all" (the default) or "new" (opens "Create channel"). */
  section?: string;
}

export default function StreamBrowser(props: StreamBrowserProps) {
  const [filter, setFilter] = useState("");
  const [show, setShow] = useState<Show>(props.section === "subscribed" ? "subscribed" : "all");
  const panel = useRef<HTMLElement>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [busy, setBusy] = useState<ReadonlySet<number>>(new Set());
  const filterInput = useRef<HTMLInputElement>(null);
  const counts = useSubscriberCounts();
  const streams = streamsById.value;
  const subs = subscriptionsById.value;
  const canCreate = isAdmin.value || registered.value?.can_create_streams === true;

  useEffect(() => {
    const returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    filterInput.current?.focus();
    return () => {
      if (returnFocus?.isConnected) returnFocus.focus();
    };
  }, []);
  useEffect(() => {
    if (props.section === "new" && canCreate) openCreateStreamDialog();
    // A link to another section while open (#channels/subscribed → #channels/all) switches the tab.
    else if (props.section === "subscribed" || props.section === "all") setShow(props.section);
  }, [props.section]);

  const rows = useMemo(() => {
    const all = new Map<number, Row>();
    for (const s of streams.values()) {
      all.set(s.stream_id, { id: s.stream_id, name: s.name, renderedDescription: s.rendered_description, inviteOnly: s.invite_only, subscribed: false, color: null });
    }
    for (const s of subs.values()) {
      all.set(s.stream_id, { id: s.stream_id, name: s.name, renderedDescription: s.rendered_description, inviteOnly: s.invite_only, subscribed: true, color: s.color });
    }
    const q = filter.trim().toLowerCase();
    return [...all.values()]
      .filter((r) => (show === "all" ? true : show === "subscribed" ? r.subscribed : !r.subscribed))
      .filter((r) => q === "" || r.name.toLowerCase().includes(q))
      .sort((a, b) => a.name.localeCompare(b.name));
  }, [streams, subs, filter, show]);

  const toggle = (row: Row) => {
    setBusy(new Set(busy).add(row.id));
    (row.subscribed ? unsubscribe(row.id) : subscribe(row.id))
      .catch(showError)
      .finally(() =>
        setBusy((current) => {
          const next = new Set(current);
          next.delete(row.id);
          return next;
        }),
      );
  };

  return (
    <div
      class="chb-backdrop"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) props.onClose();
      }}
    >
      <section
        ref={panel}
        class="chb"
        role="dialog"
        aria-modal="true"
        aria-labelledby="chb-title"
        onKeyDown={(e) => {
          trapTab(e, panel.current);
          if (e.key === "Escape" && !(e.target instanceof HTMLInputElement && e.target.value !== "")) props.onClose();
        }}
      >
        <div class="chb-head">
          <h1 id="chb-title" class="chb-title">
            Channels
          </h1>
          {canCreate && (
            <button type="button" class="act-button act-button-primary" onClick={() => openCreateStreamDialog()}>
              Create channel
            </button>
          )}
          <button type="button" class="chb-close" aria-label="Close the channel browser" onClick={props.onClose}>
            ×
          </button>
        </div>
        <div class="chb-tools">
          <input
            ref={filterInput}
            type="search"
            class="chb-filter"
            aria-label="Filter channels"
            placeholder="Filter channels"
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape" && filter !== "") {
                e.stopPropagation();
                setFilter("");
              }
            }}
          />
          <label class="chb-show">
            <span>Show</span>
            <select value={show} onChange={(e) => setShow(e.currentTarget.value as Show)}>
              <option value="all">All channels</option>
              <option value="subscribed">Subscribed</option>
              <option value="unsubscribed">Not subscribed</option>
            </select>
          </label>
        </div>
        <div class="chb-scroll">
          <p class="chb-summary" role="status">
            {rows.length === 1 ? "1 channel" : `${rows.length} channels`}
          </p>
          <ul class="chb-list">
            {rows.map((row) => {
              const count = counts.get(row.id);
              const settingsId = `chb-settings-${row.id}`;
              return (
                <li key={row.id} class="chb-row">
                  <div class="chb-row-main">
                    <span class="chb-swatch" aria-hidden="true" style={row.color ? { backgroundColor: row.color } : undefined} />
                    <div class="chb-info">
                      <a class="chb-name" href={streamHash(row.id)}>
                        {row.inviteOnly && (
                          <span class="chb-lock" aria-label="Private channel" role="img">
                            🔒
                          </span>
                        )}
                        {row.name}
                      </a>
                      {/* The server rendered (and sanitised) the description's Markdown. */}
                      <div class="chb-description" dangerouslySetInnerHTML={{ __html: row.renderedDescription }} />
                    </div>
                    {count !== undefined && <span class="chb-count">{count === 1 ? "1 subscriber" : `${count} subscribers`}</span>}
                    {row.subscribed && (
                      <button
                        type="button"
                        class="act-button"
                        aria-expanded={open === row.id}
                        aria-controls={open === row.id ? settingsId : undefined}
                        aria-label={`Settings of ${row.name}`}
                        onClick={() => setOpen(open === row.id ? null : row.id)}
                      >
                        Settings
                      </button>
                    )}
                    <button
                      type="button"
                      class={`act-button${row.subscribed ? "" : " act-button-primary"}`}
                      disabled={busy.has(row.id)}
                      aria-label={`${row.subscribed ? "Unsubscribe from" : "Subscribe to"} ${row.name}`}
                      onClick={() => toggle(row)}
                    >
                      {row.subscribed ? "Unsubscribe" : "Subscribe"}
                    </button>
                  </div>
                  {open === row.id && (
                    <div id={settingsId} class="chb-row-settings">
                      <StreamSettings streamId={row.id} />
                    </div>
                  )}
                </li>
              );
            })}
          </ul>
          {rows.length === 0 && <p class="act-muted">No channel matches.</p>}
        </div>
      </section>
    </div>
  );
}
