// One popover menu at a time (message actions, topic and stream menus), in the ARIA menu pattern:
// arrows, Home/End and first letters move, Enter/Space choose, Esc or Tab or a click outside close,
// and focus goes back to the button that opened it.
import { render } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { portalRoot } from "./portal";
import "./menu.css";

export interface MenuItem {
  label: string;
  onSelect(): void | Promise<void>;
  /** Destructive actions (delete, unsubscribe) are shown in red. */
  danger?: boolean;
  /** A line above this item, to group the menu. */
  separated?: boolean;
}

interface OpenMenu {
  anchor: HTMLElement;
  close(restoreFocus: boolean): void;
}

let current: OpenMenu | null = null;

/** Opens `items` under `anchor`; the same anchor again closes it (a toggle button). */
export function openMenu(anchor: HTMLElement, items: MenuItem[], label: string): void {
  if (current?.anchor === anchor) {
    current.close(true);
    return;
  }
  current?.close(false);
  const root = portalRoot("app-popover-root");
  const close = (restoreFocus: boolean) => {
    if (current?.anchor !== anchor) return;
    current = null;
    render(null, root);
    anchor.setAttribute("aria-expanded", "false");
    if (restoreFocus && anchor.isConnected) anchor.focus();
  };
  current = { anchor, close };
  anchor.setAttribute("aria-haspopup", "menu");
  anchor.setAttribute("aria-expanded", "true");
  render(<Menu anchor={anchor} items={items} label={label} close={close} />, root);
}

export function closeMenu(): void {
  current?.close(false);
}

/** Puts a popup below (or above, if there is no room) its anchor, inside the viewport. */
export function placeNear(popup: HTMLElement, anchor: HTMLElement): void {
  const a = anchor.getBoundingClientRect();
  const width = popup.offsetWidth;
  const height = popup.offsetHeight;
  const margin = 4;
  let top = a.bottom + margin;
  if (top + height > window.innerHeight && a.top - height - margin >= 0) top = a.top - height - margin;
  top = Math.max(margin, Math.min(top, window.innerHeight - height - margin));
  let left = a.right - width;
  if (left < margin) left = Math.min(a.left, window.innerWidth - width - margin);
  popup.style.top = `${Math.round(top)}px`;
  popup.style.left = `${Math.round(Math.max(margin, left))}px`;
}

function Menu(props: { anchor: HTMLElement; items: MenuItem[]; label: string; close(restoreFocus: boolean): void }) {
  const { anchor, items, label, close } = props;
  const ref = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState(0);

  useLayoutEffect(() => {
    if (ref.current) placeNear(ref.current, anchor);
  }, [anchor]);

  // Layout effect: focus moves before the next key press is handled.
  useLayoutEffect(() => {
    (ref.current?.querySelectorAll<HTMLElement>("[role=menuitem]")[active])?.focus();
  }, [active]);

  useEffect(() => {
    const onPointerDown = (event: PointerEvent) => {
      const target = event.target as Node;
      // The anchor toggles the menu itself (openMenu), so a press on it is not "outside".
      if (!ref.current?.contains(target) && !anchor.contains(target)) close(false);
    };
    const onScroll = (event: Event) => {
      if (!ref.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", onPointerDown, true);
    window.addEventListener("resize", onScroll);
    document.addEventListener("scroll", onScroll, true);
    return () => {
      document.removeEventListener("pointerdown", onPointerDown, true);
      window.removeEventListener("resize", onScroll);
      document.removeEventListener("scroll", onScroll, true);
    };
  }, [anchor, close]);

  const choose = (item: MenuItem) => {
    close(true);
    void item.onSelect();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const last = items.length - 1;
    switch (event.key) {
      case "ArrowDown":
        setActive((a) => (a >= last ? 0 : a + 1));
        break;
      case "ArrowUp":
        setActive((a) => (a <= 0 ? last : a - 1));
        break;
      case "Home":
        setActive(0);
        break;
      case "End":
        setActive(last);
        break;
      case "Escape":
        close(true);
        break;
      case "Tab":
        close(true);
        break;
      default: {
        if (event.key.length === 1 && /\S/.test(event.key)) {
          const key = event.key.toLowerCase();
          const order = [...items.keys()].map((i) => (active + 1 + i) % items.length);
          const next = order.find((i) => items[i].label.toLowerCase().startsWith(key));
          if (next !== undefined) setActive(next);
          break;
        }
        return;
      }
    }
    event.preventDefault();
    event.stopPropagation();
  };

  return (
    <div class="act-menu" role="menu" aria-label={label} ref={ref} onKeyDown={onKeyDown}>
      {items.map((item, i) => (
        <button
          key={item.label}
          type="button"
          role="menuitem"
          tabIndex={i === active ? 0 : -1}
          class={`act-menu-item${item.danger ? " act-menu-danger" : ""}${item.separated ? " act-menu-separated" : ""}`}
          onClick={() => choose(item)}
          onMouseEnter={() => setActive(i)}
        >
          {item.label}
        </button>
      ))}
    </div>
  );
}
