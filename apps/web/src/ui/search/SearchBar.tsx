// The search box: shows the current narrow as search text, suggests operators and operands while
// typing (the ARIA combobox pattern), and narrows on Enter. `/` focuses it (the core binds the key
// and calls focusSearch()); Esc clears it, and once empty leaves it.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Schemas } from "../../api/client";
import { narrowKey, narrowToSearch, parseSearch, type Narrow } from "../../narrow";
import { narrowContext } from "../../state/route";
import { streamOfText, suggest, topicsOf, type Suggestion } from "./suggestions";
import "./search.css";

let searchInput: HTMLInputElement | null = null;

/** Puts the caret in the search box, its text selected (the `/` key). */
export function focusSearch(): void {
  searchInput?.focus();
  searchInput?.select();
}

export interface SearchBarProps {
  narrow: Narrow;
  onNarrow(narrow: Narrow): void;
}

export function SearchBar({ narrow, onNarrow }: SearchBarProps) {
  const input = useRef<HTMLInputElement>(null);
  const shown = narrowToSearch(narrow, narrowContext.value);
  const [text, setText] = useState(shown);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [topics, setTopics] = useState<{ streamId: number; topics: Schemas["Topic"][] } | null>(null);
  const key = narrowKey(narrow);

  // A new narrow (a click in the sidebar, a link) replaces what the box shows.
  useEffect(() => {
    setText(narrowToSearch(narrow, narrowContext.value));
    setOpen(false);
  }, [key]);

  useEffect(() => {
    searchInput = input.current;
    return () => {
      if (searchInput === input.current) searchInput = null;
    };
  }, []);

  // Topic suggestions need the named stream's topics: fetched when the text names one.
  const streamId = open ? streamOfText(text) : undefined;
  useEffect(() => {
    if (streamId === undefined || topics?.streamId === streamId) return;
    let live = true;
    void topicsOf(streamId).then((list) => {
      if (live) setTopics({ streamId, topics: list });
    });
    return () => {
      live = false;
    };
  }, [streamId]);

  const suggestions = useMemo(
    () => (open ? suggest(text, topics && topics.streamId === streamId ? topics.topics : []) : []),
    [open, text, topics, streamId],
  );
  const expanded = open && suggestions.length > 0;

  const submit = (value: string) => {
    const terms = parseSearch(value, narrowContext.value);
    setOpen(false);
    setActive(-1);
    onNarrow(terms);
    input.current?.blur();
  };

  const choose = (s: Suggestion) => {
    setText(s.text);
    setActive(-1);
    if (s.complete) submit(s.text);
    else input.current?.focus();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    switch (event.key) {
      case "ArrowDown":
        if (!open) setOpen(true);
        setActive(suggestions.length ? (active + 1) % suggestions.length : -1);
        break;
      case "ArrowUp":
        setActive(suggestions.length ? (active <= 0 ? suggestions.length - 1 : active - 1) : -1);
        break;
      case "Tab":
        // Tab completes the highlighted suggestion without narrowing yet.
        if (!expanded || active < 0) return;
        setText(suggestions[active].text);
        setActive(-1);
        break;
      case "Enter":
        if (expanded && active >= 0) choose(suggestions[active]);
        else submit(text);
        break;
      case "Escape":
        if (text !== "") {
          setText("");
          setActive(-1);
        } else {
          setOpen(false);
          input.current?.blur();
        }
        break;
      default:
        return;
    }
    event.preventDefault();
    // Keys typed here are the search box's, not the app's shortcuts.
    event.stopPropagation();
  };

  const listId = "search-suggestions";
  const optionId = (i: number) => `search-suggestion-${i}`;
  return (
    <form
      class="search-bar"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        submit(text);
      }}
    >
      <input
        ref={input}
        class="search-input"
        type="text"
        role="combobox"
        aria-label="Search messages"
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={listId}
        aria-activedescendant={expanded && active >= 0 ? optionId(active) : undefined}
        placeholder="Search"
        autoComplete="off"
        spellcheck={false}
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setOpen(true);
          setActive(-1);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={onKeyDown}
      />
      {text !== "" && (
        <button
          type="button"
          class="search-clear"
          aria-label="Clear search"
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => {
            setText("");
            if (narrow.length > 0) onNarrow([]);
          }}
        >
          ×
        </button>
      )}
      <ul id={listId} class="search-suggestions" role="listbox" aria-label="Search suggestions" hidden={!expanded}>
        {expanded &&
          suggestions.map((s, i) => (
            <li
              key={`${s.text}\u0000${s.label}`}
              id={optionId(i)}
              role="option"
              aria-selected={i === active}
              class={`search-suggestion${i === active ? " search-suggestion-active" : ""}`}
              // mousedown, not click: the input keeps focus, so blur does not close the list first.
              onMouseDown={(e) => {
                e.preventDefault();
                choose(s);
              }}
              onMouseEnter={() => setActive(i)}
            >
              <span class="search-suggestion-label">{s.label}</span>
              <span class="search-suggestion-description">{s.description}</span>
            </li>
          ))}
      </ul>
    </form>
  );
}
