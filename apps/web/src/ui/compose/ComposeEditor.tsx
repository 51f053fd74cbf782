// The message editor: a Markdown textarea with the typeahead (mentions, streams, topics, emoji),
// the emoji picker, uploads (pick, drop, paste) and a server-rendered preview. ComposeBox puts a
// recipient row above it; inline message editing uses ComposeEditor alone.
import type { ComponentChildren, ComponentType, Ref } from "preact";
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../../api/client";
import { loadEmojiData, loadEmojiPicker, type PickedEmoji } from "../emoji/emojiData";
import type { EmojiPickerProps } from "../emoji/EmojiPicker";
import { findToken, suggestionsFor, type Suggestion } from "./autocomplete";
import { insertAtCaret, replaceRange, spacedForCaret } from "./textarea";
import { comboboxProps, handleTypeaheadKey, Typeahead, useTypeaheadState } from "./Typeahead";
import { filesOf, uploadInto, type UploadStatus } from "./uploads";
import "./compose.css";

export interface EditorCoreProps {
  value: string;
  /** Every change of the text, typed or inserted. */
  onValueChange(text: string): void;
  onSubmit(): void;
  onCancel?(): void;
  submitLabel: string;
  /** Accessible name of the textarea. */
  label: string;
  placeholder?: string;
  busy?: boolean;
  /** An error from the owner (a refused send), shown with the editor's own. */
  error?: string | null;
  /** Whether the message goes to a stream (offers @**channel**, @**topic**). */
  inStream?: boolean;
  /** A keystroke that changed the text (typing notifications). */
  onTyping?(text: string): void;
  onBlur?(): void;
  textareaRef?: Ref<HTMLTextAreaElement>;
  autoFocus?: boolean;
  /** Set to a function that uploads files into this editor (drops elsewhere, compose requests). */
  uploaderRef?: { current: ((files: File[]) => void) | null };
  /** More buttons in the toolbar (Cancel, Close). */
  actions?: ComponentChildren;
}

const MAX_TEXTAREA_PX = 320;

export function EditorCore(props: EditorCoreProps) {
  const { value, onValueChange, submitLabel, label, busy = false, inStream = true } = props;
  const ownRef = useRef<HTMLTextAreaElement | null>(null);
  const id = useId();
  const listId = `${id}-typeahead`;
  const [caret, setCaret] = useState<number | null>(null);
  const [focused, setFocused] = useState(false);
  const [uploads, setUploads] = useState<ReadonlyMap<number, UploadStatus>>(new Map());
  const [localError, setLocalError] = useState<string | null>(null);
  const [mode, setMode] = useState<"write" | "preview">("write");
  const [preview, setPreview] = useState<{ html: string } | { loading: true } | null>(null);
  const [pickerOpen, setPickerOpen] = useState(false);
  const [Picker, setPicker] = useState<ComponentType<EmojiPickerProps> | null>(null);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const pickerClosedAt = useRef(0);

  const setTextarea = useCallback(
    (element: HTMLTextAreaElement | null) => {
      ownRef.current = element;
      const outer = props.textareaRef;
      if (typeof outer === "function") outer(element);
      else if (outer) outer.current = element;
    },
    [props.textareaRef],
  );

  // Grow with the text up to a limit (a style property set from script: allowed by the CSP).
  useLayoutEffect(() => {
    const field = ownRef.current;
    if (!field) return;
    field.style.height = "auto";
    field.style.height = `${Math.min(field.scrollHeight + 2, MAX_TEXTAREA_PX)}px`;
  }, [value, mode]);

  // A sent message leaves no preview of itself behind.
  useEffect(() => {
    if (value === "" && mode === "preview") setMode("write");
  }, [value]);

  useEffect(() => {
    if (props.autoFocus) {
      const field = ownRef.current;
      field?.focus();
      field?.setSelectionRange(field.value.length, field.value.length);
    }
  }, []);

  const upload = useCallback((files: readonly File[]) => {
    const field = ownRef.current;
    if (!field || files.length === 0) return;
    setLocalError(null);
    uploadInto(field, files, {
      onProgress: (status, uploadId) =>
        setUploads((current) => {
          const next = new Map(current);
          if (status) next.set(uploadId, status);
          else next.delete(uploadId);
          return next;
        }),
      onError: setLocalError,
    });
  }, []);

  useEffect(() => {
    if (!props.uploaderRef) return;
    const holder = props.uploaderRef;
    holder.current = (files) => upload(files);
    return () => {
      if (holder.current) holder.current = null;
    };
  }, [props.uploaderRef, upload]);

  // The typeahead: the token before the caret and its options.
  const token = focused && caret !== null && mode === "write" ? findToken(value, caret) : null;
  const suggestions: Suggestion[] = token ? suggestionsFor(token, inStream) : [];
  const typeahead = useTypeaheadState(token ? `${token.kind}:${token.start}:${token.query}` : "");
  const shown = typeahead.dismissed ? [] : suggestions;

  const syncCaret = () => {
    const field = ownRef.current;
    if (field) setCaret(field.selectionStart === field.selectionEnd ? field.selectionStart : null);
  };

  const pick = (index: number) => {
    const field = ownRef.current;
    const option = shown[index];
    if (!field || !token || !option) return;
    replaceRange(field, token.start, token.end, option.insert);
    syncCaret();
  };

  const submit = () => {
    if (busy) return;
    if (uploads.size > 0) {
      setLocalError("Wait for the uploads to finish.");
      return;
    }
    setLocalError(null);
    props.onSubmit();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (handleTypeaheadKey(event, shown.length, typeahead, pick)) return;
    if (event.key === "Enter" && !event.isComposing) {
      // Ctrl/Cmd+Enter always sends; plain Enter sends; Shift+Enter is a newline.
      if (event.ctrlKey || event.metaKey || (!event.shiftKey && !event.altKey)) {
        event.preventDefault();
        submit();
      }
    } else if (event.key === "Escape" && props.onCancel) {
      event.preventDefault();
      props.onCancel();
    }
  };

  const onPaste = (event: ClipboardEvent) => {
    // Text with a picture of itself (office apps) pastes as text; a bare image or file uploads.
    if (event.clipboardData?.getData("text/plain")) return;
    const files = filesOf(event.clipboardData);
    if (files.length === 0) return;
    event.preventDefault();
    upload(files);
  };

  const hasFiles = (event: DragEvent) => [...(event.dataTransfer?.types ?? [])].includes("Files");
  const onDragOver = (event: DragEvent) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    // Do not let a list-wide drop handler take it too.
    event.stopPropagation();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
    if (!dragging) setDragging(true);
  };
  const onDrop = (event: DragEvent) => {
    setDragging(false);
    if (!hasFiles(event)) return;
    event.preventDefault();
    event.stopPropagation();
    if (mode !== "write") setMode("write");
    upload(filesOf(event.dataTransfer));
  };

  const showPreview = () => {
    setMode("preview");
    if (value.trim() === "") {
      setPreview({ html: "" });
      return;
    }
    setPreview({ loading: true });
    api
      .post("/messages/render", { content: value })
      .then((answer) => setPreview({ html: answer.rendered }))
      .catch((error: unknown) => {
        setPreview(null);
        setLocalError(error instanceof ApiError ? error.message : "The preview could not be rendered.");
      });
  };

  const showWrite = () => {
    setMode("write");
    setPreview(null);
    // After the textarea is shown again.
    queueMicrotask(() => ownRef.current?.focus());
  };

  const openPicker = () => {
    // The press on this button already closed the picker (its outside-press rule): keep it closed.
    if (pickerOpen || Date.now() - pickerClosedAt.current < 400) {
      setPickerOpen(false);
      return;
    }
    setPickerOpen(true);
    loadEmojiData().catch(() => undefined);
    if (!Picker)
      loadEmojiPicker()
        .then((module) => setPicker(() => module.default))
        .catch(() => {
          setPickerOpen(false);
          setLocalError("The emoji picker could not be loaded.");
        });
  };

  const onEmojiPick = (emoji: PickedEmoji) => {
    setPickerOpen(false);
    const field = ownRef.current;
    if (!field) return;
    if (mode !== "write") setMode("write");
    field.focus();
    insertAtCaret(field, spacedForCaret(field, `:${emoji.emoji_name}: `));
  };
  const closePicker = useCallback(() => {
    pickerClosedAt.current = Date.now();
    setPickerOpen(false);
  }, []);

  const error = props.error ?? localError;
  const uploadList = [...uploads.values()];
  return (
    <div class={dragging ? "compose-editor compose-editor-dragging" : "compose-editor"} onDragOver={onDragOver} onDragLeave={() => setDragging(false)} onDrop={onDrop}>
      <div class="compose-editor-field">
        {mode === "write" && shown.length > 0 ? (
          <Typeahead id={listId} label="Suggestions" options={shown} active={Math.min(typeahead.active, shown.length - 1)} onActive={typeahead.setActive} onPick={pick} placement="above" />
        ) : null}
        <textarea
          ref={setTextarea}
          class={mode === "write" ? "compose-textarea" : "compose-textarea compose-hidden"}
          aria-label={label}
          placeholder={props.placeholder}
          value={value}
          readOnly={busy}
          rows={2}
          {...comboboxProps(listId, mode === "write" ? shown.length : 0, typeahead.active, "textbox")}
          onInput={(event) => {
            const text = event.currentTarget.value;
            onValueChange(text);
            syncCaret();
            props.onTyping?.(text);
          }}
          onKeyDown={onKeyDown}
          onKeyUp={syncCaret}
          onClick={syncCaret}
          onSelect={syncCaret}
          onFocus={() => {
            setFocused(true);
            syncCaret();
          }}
          onBlur={() => {
            setFocused(false);
            props.onBlur?.();
          }}
          onPaste={onPaste}
        />
        {mode === "preview" ? (
          <div class="compose-preview" aria-live="polite" aria-label="Preview">
            {preview && "html" in preview ? (
              preview.html === "" ? (
                <p class="compose-preview-empty">Nothing to preview.</p>
              ) : (
                // The server's rendering, as messages are shown: inserted as it came.
                <div class="rendered_markdown" dangerouslySetInnerHTML={{ __html: preview.html }} />
              )
            ) : (
              <p class="compose-preview-empty">Rendering…</p>
            )}
          </div>
        ) : null}
      </div>
      {uploadList.length > 0 ? (
        <ul class="compose-uploads" aria-live="polite" aria-label="Uploads">
          {uploadList.map((u) => (
            <li key={u.id}>
              <span>Uploading {u.name}</span>
              <progress max={1} value={u.fraction} aria-label={`Uploading ${u.name}`} />
            </li>
          ))}
        </ul>
      ) : null}
      {error ? (
        <p class="compose-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="compose-toolbar">
        <div class="compose-tools">
          <input
            ref={fileInput}
            type="file"
            multiple
            class="compose-hidden"
            tabIndex={-1}
            aria-hidden="true"
            onChange={(event) => {
              const input = event.currentTarget;
              const files = [...(input.files ?? [])];
              input.value = "";
              if (mode !== "write") setMode("write");
              upload(files);
            }}
          />
          <button type="button" class="compose-tool" aria-label="Attach files" title="Attach files" onClick={() => fileInput.current?.click()}>
            <svg class="compose-icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
              <path d="M16.5 6.5v10a4.5 4.5 0 0 1-9 0V5a3 3 0 0 1 6 0v10.5a1.5 1.5 0 0 1-3 0V6.5" />
            </svg>
          </button>
          <span class="compose-picker-anchor">
            <button type="button" class="compose-tool" aria-label="Add emoji" title="Add emoji" aria-expanded={pickerOpen} aria-haspopup="dialog" onClick={openPicker}>
              <svg class="compose-icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
                <circle cx="12" cy="12" r="9" />
                <path d="M8.5 14.5a4.5 4.5 0 0 0 7 0M9 9.5h.01M15 9.5h.01" />
              </svg>
            </button>
            {pickerOpen && Picker ? (
              <div class="compose-picker-popover">
                <Picker onPick={onEmojiPick} onClose={closePicker} />
              </div>
            ) : null}
          </span>
          {mode === "write" ? (
            <button type="button" class="compose-tool compose-tool-text" aria-pressed="false" onClick={showPreview}>
              Preview
            </button>
          ) : (
            <button type="button" class="compose-tool compose-tool-text" aria-pressed="true" onClick={showWrite}>
              Write
            </button>
          )}
        </div>
        <div class="compose-actions">
          {props.actions}
          <button type="button" class="compose-send" onClick={submit} disabled={busy || uploads.size > 0} aria-busy={busy}>
            {submitLabel}
          </button>
        </div>
      </div>
    </div>
  );
}

export interface ComposeEditorProps {
  initial: string;
  onSubmit(text: string): void;
  onCancel(): void;
  /** Optional: the button's text (Save), a busy state and an error from the owner. */
  submitLabel?: string;
  busy?: boolean;
  error?: string | null;
  label?: string;
}

/** The editor alone, for editing a message in place: Enter saves, Escape cancels. */
export function ComposeEditor({ initial, onSubmit, onCancel, submitLabel = "Save", busy, error, label = "Edit message" }: ComposeEditorProps) {
  const [text, setText] = useState(initial);
  return (
    <EditorCore
      value={text}
      onValueChange={setText}
      onSubmit={() => onSubmit(text)}
      onCancel={onCancel}
      submitLabel={submitLabel}
      label={label}
      busy={busy}
      error={error}
      autoFocus
      actions={
        <button type="button" class="compose-cancel" onClick={onCancel}>
          Cancel
        </button>
      }
    />
  );
}

export default ComposeEditor;
