// A short notice after an action ("Link copied", or the server's refusal), in a live region so a
// screen reader reads it too.
import { render } from "preact";
import { ApiError } from "../../api/client";
import { portalRoot } from "./portal";
import "./toast.css";

let timer: ReturnType<typeof setTimeout> | undefined;

export function showToast(text: string, kind: "info" | "error" = "info"): void {
  const root = portalRoot("app-toast-root");
  clearTimeout(timer);
  render(
    <div class={`act-toast act-toast-${kind}`} role={kind === "error" ? "alert" : "status"}>
      {text}
    </div>,
    root,
  );
  timer = setTimeout(() => render(null, root), kind === "error" ? 6000 : 3000);
}

/** The server's own words for a refusal; a plain sentence for anything else. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

export function showError(error: unknown): void {
  showToast(errorText(error), "error");
}
