// Changing a textarea's text from code while keeping Preact's state in step: every change goes
// through the element and fires `input`, so the component's onInput sees it as if typed.

/**
 * Replaces [start, end) with `text` and puts the caret after it. When the field has focus this
 * goes through the browser's editing commands, so Ctrl+Z undoes it.
 */
export function replaceRange(field: HTMLTextAreaElement | HTMLInputElement, start: number, end: number, text: string): void {
  if (document.activeElement === field) {
    field.setSelectionRange(start, end);
    // execCommand is deprecated but is still the only way to an undoable edit.
    if (document.execCommand("insertText", false, text)) return;
  }
  field.setRangeText(text, start, end, "end");
  field.dispatchEvent(new Event("input", { bubbles: true }));
}

export function insertAtCaret(field: HTMLTextAreaElement, text: string): void {
  replaceRange(field, field.selectionStart, field.selectionEnd, text);
}

/** Replaces the first `search` in the field without moving the caret; false when it is gone. */
export function replaceText(field: HTMLTextAreaElement, search: string, text: string): boolean {
  const at = field.value.indexOf(search);
  if (at === -1) return false;
  field.setRangeText(text, at, at + search.length, "preserve");
  field.dispatchEvent(new Event("input", { bubbles: true }));
  return true;
}

/** Whitespace so that `text` inserted at the caret starts on a word boundary. */
export function spacedForCaret(field: HTMLTextAreaElement, text: string): string {
  const before = field.value.slice(0, field.selectionStart);
  return before === "" || /\s$/.test(before) ? text : ` ${text}`;
}
