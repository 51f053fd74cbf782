// The one typeahead list of compose: mentions, streams, topics, emoji, recipients. The text field
// keeps focus and names the active option with aria-activedescendant; the list is an ARIA listbox.
// Arrow keys move, Tab or Enter pick, Escape closes (handleTypeaheadKey, called from the field's
// keydown handler before its own keys).
import { useEffect, useRef, useState } from "preact/hooks";
import "./typeahead.css";

export interface TypeaheadOption {
  /** Unique within the list. */
  key: string;
  primary: string;
  secondary?: string;
  /** A Unicode emoji (or any short text) drawn before the label. */
  glyph?: string;
  /** An image drawn before the label (custom emoji, avatars). */
  imageUrl?: string;
}

export interface TypeaheadProps {
  id: string;
  label: string;
  options: readonly TypeaheadOption[];
  active: number;
  onActive(index: number): void;
  onPick(index: number): void;
  /** Above the field (compose textarea) or below it (recipient inputs). */
  placement?: "above" | "below";
}

export function optionId(listId: string, index: number): string {
  return `${listId}-opt-${index}`;
}

export function Typeahead({ id, label, options, active, onActive, onPick, placement = "below" }: TypeaheadProps) {
  const listRef = useRef<HTMLUListElement>(null);
  useEffect(() => {
    listRef.current?.querySelector(`#${CSS.escape(optionId(id, active))}`)?.scrollIntoView({ block: "nearest" });
  }, [active, id]);
  if (options.length === 0) return null;
  return (
    <ul id={id} ref={listRef} class={`typeahead typeahead-${placement}`} role="listbox" aria-label={label}>
      {options.map((option, index) => (
        <li
          key={option.key}
          id={optionId(id, index)}
          role="option"
          aria-selected={index === active}
          class={index === active ? "typeahead-option typeahead-option-active" : "typeahead-option"}
          // Keep focus in the field: a click must not blur it first.
          onMouseDown={(e) => e.preventDefault()}
          onMouseMove={() => index !== active && onActive(index)}
          onClick={() => onPick(index)}
        >
          {option.imageUrl ? <img class="typeahead-image" src={option.imageUrl} alt="" /> : option.glyph ? <span class="typeahead-glyph" aria-hidden="true">{option.glyph}</span> : null}
          <span class="typeahead-primary">{option.primary}</span>
          {option.secondary ? <span class="typeahead-secondary">{option.secondary}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export interface TypeaheadState {
  active: number;
  setActive(index: number): void;
  /** Closed by Escape until the query changes. */
  dismissed: boolean;
  dismiss(): void;
}

/** Active option and Escape state, reset whenever `queryKey` (what the options are for) changes. */
export function useTypeaheadState(queryKey: string): TypeaheadState {
  const [state, setState] = useState({ key: queryKey, active: 0, dismissed: false });
  const current = state.key === queryKey ? state : { key: queryKey, active: 0, dismissed: false };
  return {
    active: current.active,
    setActive: (active) => setState({ ...current, active }),
    dismissed: current.dismissed,
    dismiss: () => setState({ ...current, dismissed: true }),
  };
}

/**
 * The typeahead's keys: true when the key was used (the caller then does nothing else with it).
 * `count` is the number of options shown (0 when closed).
 */
export function handleTypeaheadKey(event: KeyboardEvent, count: number, state: TypeaheadState, pick: (index: number) => void): boolean {
  if (count === 0 || event.isComposing) return false;
  const active = Math.min(state.active, count - 1);
  switch (event.key) {
    case "ArrowDown":
      state.setActive((active + 1) % count);
      break;
    case "ArrowUp":
      state.setActive((active - 1 + count) % count);
      break;
    case "Tab":
    case "Enter":
      if (event.shiftKey || event.altKey) return false;
      pick(active);
      break;
    case "Escape":
      state.dismiss();
      break;
    default:
      return false;
  }
  event.preventDefault();
  event.stopPropagation();
  return true;
}

/** The ARIA attributes of a text field that owns a typeahead. */
export function comboboxProps(listId: string, count: number, active: number, role: "combobox" | "textbox" = "combobox") {
  const open = count > 0;
  const activeId = open ? optionId(listId, Math.min(active, count - 1)) : undefined;
  // A textarea keeps its textbox role (aria-expanded is not allowed there).
  return role === "combobox"
    ? { role: "combobox" as const, "aria-expanded": open, "aria-controls": listId, "aria-autocomplete": "list" as const, "aria-activedescendant": activeId }
    : { "aria-controls": open ? listId : undefined, "aria-autocomplete": "list" as const, "aria-activedescendant": activeId };
}
