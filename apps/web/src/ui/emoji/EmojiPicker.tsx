// A searchable, keyboard-navigable grid of emoji: Unicode ones drawn as characters, custom ones
// as their images. Lazy chunk (default export); compose uses it to insert `:name:`, message
// actions to react. The search box keeps focus and points at the active cell
// (aria-activedescendant), so typing, arrows, Enter and Escape all work from it.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { emojiLoadError, loadEmojiData, searchEmoji, unicodeEmoji, type EmojiEntry, type PickedEmoji } from "./emojiData";
import "./emoji-picker.css";

export interface EmojiPickerProps {
  onPick(emoji: PickedEmoji): void;
  onClose(): void;
}

/** Cells per row; must match grid-template-columns in emoji-picker.css. */
const COLUMNS = 8;
let nextPickerId = 0;

export default function EmojiPicker({ onPick, onClose }: EmojiPickerProps) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [idBase] = useState(() => `emoji-picker-${++nextPickerId}`);
  const rootRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const gridRef = useRef<HTMLDivElement>(null);
  const loaded = unicodeEmoji.value;
  const error = emojiLoadError.value;

  useEffect(() => {
    inputRef.current?.focus();
    loadEmojiData().catch(() => undefined);
  }, []);

  // A press outside closes the picker, as a popover does.
  useEffect(() => {
    const onDown = (event: MouseEvent) => {
      if (rootRef.current && event.target instanceof Node && !rootRef.current.contains(event.target)) onClose();
    };
    document.addEventListener("mousedown", onDown, true);
    return () => document.removeEventListener("mousedown", onDown, true);
  }, [onClose]);

  const results = useMemo(() => searchEmoji(query, Number.POSITIVE_INFINITY), [query, loaded]);
  const current: EmojiEntry | undefined = results[Math.min(active, results.length - 1)];

  useEffect(() => setActive(0), [query]);
  useEffect(() => {
    gridRef.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: "nearest" });
  }, [active]);

  const pick = (entry: EmojiEntry | undefined) => {
    if (!entry) return;
    onPick({ emoji_name: entry.emoji_name, emoji_code: entry.emoji_code, reaction_type: entry.reaction_type });
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const last = results.length - 1;
    const move = (to: number) => {
      event.preventDefault();
      setActive(Math.max(0, Math.min(last, to)));
    };
    switch (event.key) {
      case "ArrowRight":
        // Within the search text, arrows move the caret until it is at the end.
        if (inputRef.current && inputRef.current.selectionStart !== query.length) return;
        return move(active + 1);
      case "ArrowLeft":
        if (inputRef.current && inputRef.current.selectionStart !== query.length) return;
        return move(active - 1);
      case "ArrowDown":
        return move(active + COLUMNS);
      case "ArrowUp":
        return move(active - COLUMNS);
      case "PageDown":
        return move(active + COLUMNS * 5);
      case "PageUp":
        return move(active - COLUMNS * 5);
      case "Enter":
      case "Tab":
        if (results.length === 0) return;
        event.preventDefault();
        pick(current);
        return;
      case "Escape":
        event.preventDefault();
        event.stopPropagation();
        onClose();
        return;
    }
  };

  const gridId = `${idBase}-grid`;
  return (
    <div class="emoji-picker" role="dialog" aria-label="Emoji picker" ref={rootRef}>
      <input
        ref={inputRef}
        class="emoji-picker-search"
        type="search"
        placeholder="Search emoji"
        aria-label="Search emoji"
        role="combobox"
        aria-expanded="true"
        aria-controls={gridId}
        aria-autocomplete="list"
        aria-activedescendant={current ? `${idBase}-${Math.min(active, results.length - 1)}` : undefined}
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <div class="emoji-picker-grid" id={gridId} role="listbox" aria-label="Emoji" ref={gridRef}>
        {results.map((entry, index) => (
          <div
            key={`${entry.reaction_type}:${entry.emoji_code}:${entry.emoji_name}`}
            id={`${idBase}-${index}`}
            data-index={index}
            role="option"
            aria-selected={index === active}
            aria-label={entry.emoji_name.replace(/_/g, " ")}
            title={`:${entry.emoji_name}:`}
            class={index === active ? "emoji-picker-cell emoji-picker-cell-active" : "emoji-picker-cell"}
            onMouseDown={(e) => e.preventDefault()}
            onMouseMove={() => index !== active && setActive(index)}
            onClick={() => pick(entry)}
          >
            {entry.imageUrl ? <img class="emoji-picker-image" src={entry.imageUrl} alt="" loading="lazy" /> : <span aria-hidden="true">{entry.char}</span>}
          </div>
        ))}
      </div>
      <div class="emoji-picker-footer" aria-live="polite">
        {error && !loaded ? (
          <span class="emoji-picker-error">
            {error}{" "}
            <button type="button" class="emoji-picker-retry" onClick={() => loadEmojiData().catch(() => undefined)}>
              Retry
            </button>
          </span>
        ) : !loaded ? (
          "Loading emoji…"
        ) : results.length === 0 ? (
          "No emoji match."
        ) : current ? (
          `:${current.emoji_name}:`
        ) : null}
      </div>
    </div>
  );
}
