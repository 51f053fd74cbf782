// Modal dialogs on the native <dialog> element: showModal() gives the focus trap, the inert page
// behind and Esc; we add the title's label, a close button, a click on the backdrop to close, and
// focus back where it was.
import { render, type ComponentChildren, type VNode } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "./toast";
import { portalRoot } from "./portal";
import "./dialog.css";

let serial = 0;
let closeCurrent: (() => void) | null = null;

export interface DialogOptions {
  /** Wider dialogs for the edit history and the stream browser's settings. */
  wide?: boolean;
}

/** Shows a dialog (one at a time) and answers the function that closes it. */
export function openDialog(title: string, body: (close: () => void) => VNode, options: DialogOptions = {}): () => void {
  closeCurrent?.();
  const root = portalRoot("app-dialog-root");
  const returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const close = () => {
    if (closeCurrent !== close) return;
    closeCurrent = null;
    render(null, root);
    if (returnFocus?.isConnected) returnFocus.focus();
  };
  closeCurrent = close;
  render(
    <Dialog key={++serial} title={title} wide={options.wide} onClose={close}>
      {body(close)}
    </Dialog>,
    root,
  );
  return close;
}

function Dialog(props: { title: string; wide?: boolean; onClose(): void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = `act-dialog-title-${serial}`;
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      class={`act-dialog${props.wide ? " act-dialog-wide" : ""}`}
      // Explicit, for code that looks for an open modal by these attributes (the app's shortcuts).
      role="dialog"
      aria-modal="true"
      aria-labelledby={titleId}
      onKeyDown={(event) => {
        // Esc closes this dialog only, not also an overlay under it (the app closes those on Esc);
        // content that used the key itself (a typeahead closing) prevented its default.
        if (event.key === "Escape" && !event.defaultPrevented) {
          event.preventDefault();
          event.stopPropagation();
          props.onClose();
        }
      }}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
      onClick={(event) => {
        // A click on the backdrop lands on the <dialog> itself, outside its content box.
        const dialog = ref.current;
        if (dialog && event.target === dialog) {
          const box = dialog.getBoundingClientRect();
          const inside = event.clientX >= box.left && event.clientX <= box.right && event.clientY >= box.top && event.clientY <= box.bottom;
          if (!inside) props.onClose();
        }
      }}
    >
      <div class="act-dialog-head">
        <h2 id={titleId} class="act-dialog-title">
          {props.title}
        </h2>
        <button type="button" class="act-dialog-x" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </div>
      <div class="act-dialog-body">{props.children}</div>
    </dialog>
  );
}

/** A form's submit with a busy flag and the server's refusal shown in the form. */
export function useSubmit(action: () => Promise<void>): { busy: boolean; error: string | null; submit(event?: Event): void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = (event?: Event) => {
    event?.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    action().then(
      () => setBusy(false),
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
      },
    );
  };
  return { busy, error, submit };
}

export function FormError(props: { error: string | null }) {
  return props.error ? (
    <p class="act-form-error" role="alert">
      {props.error}
    </p>
  ) : null;
}

/** Asks before something that cannot be undone; resolves true on confirm. */
export function confirmDialog(options: { title: string; text: string; confirmLabel: string; danger?: boolean }): Promise<boolean> {
  return new Promise((resolve) => {
    let answered = false;
    const answer = (value: boolean, close: () => void) => {
      answered = true;
      resolve(value);
      close();
    };
    openDialog(options.title, (close) => (
      <ConfirmBody
        text={options.text}
        confirmLabel={options.confirmLabel}
        danger={options.danger}
        onAnswer={(value) => answer(value, close)}
        onUnmount={() => {
          if (!answered) resolve(false);
        }}
      />
    ));
  });
}

function ConfirmBody(props: { text: string; confirmLabel: string; danger?: boolean; onAnswer(value: boolean): void; onUnmount(): void }) {
  useEffect(() => props.onUnmount, []);
  return (
    <div>
      <p>{props.text}</p>
      <div class="act-dialog-buttons">
        <button type="button" class="act-button" onClick={() => props.onAnswer(false)}>
          Cancel
        </button>
        <button type="button" class={`act-button act-button-primary${props.danger ? " act-button-danger" : ""}`} onClick={() => props.onAnswer(true)} autoFocus>
          {props.confirmLabel}
        </button>
      </div>
    </div>
  );
}
