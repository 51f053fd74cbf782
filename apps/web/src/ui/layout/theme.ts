// The colour theme: user_settings.color_scheme (1 automatic, 2 dark, 3 light) as data-theme on
// <html>, which app.css reads; automatic is resolved here from the system's prefers-color-scheme
// (and followed when it changes), so the stylesheet holds the dark colours once. Applied
// from /register, again on every user_settings event, and remembered in localStorage so that the
// next load paints the right colours before /register answers.
import { effect } from "@preact/signals";
import { registered, userSettings } from "../../state/store";

const STORAGE_KEY = "color_scheme";

export function themeFor(scheme: unknown): "dark" | "light" | null {
  return scheme === 2 ? "dark" : scheme === 3 ? "light" : null;
}

const systemDark = window.matchMedia("(prefers-color-scheme: dark)");
let chosen: "dark" | "light" | null = null;

function apply(theme: "dark" | "light" | null): void {
  chosen = theme;
  document.documentElement.dataset.theme = theme ?? (systemDark.matches ? "dark" : "light");
}

/** Shows a color_scheme at once (the settings screen, before the user_settings event). */
export function applyColorScheme(scheme: unknown): void {
  apply(themeFor(scheme));
}

function remembered(): "dark" | "light" | null {
  try {
    return themeFor(Number(localStorage.getItem(STORAGE_KEY)));
  } catch {
    return null; // storage disabled
  }
}

export function installTheme(): void {
  apply(remembered());
  systemDark.addEventListener("change", () => apply(chosen));
  effect(() => {
    // Until /register answers, keep the remembered theme.
    if (!registered.value) return;
    const scheme = userSettings.value.color_scheme;
    apply(themeFor(scheme));
    try {
      localStorage.setItem(STORAGE_KEY, String(scheme ?? 1));
    } catch {
      // storage disabled or full: the next load starts with the system's theme
    }
  });
}
