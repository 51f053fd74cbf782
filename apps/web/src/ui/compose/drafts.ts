// Unsent text kept per conversation in localStorage, so that closing compose, switching
// conversations or reloading loses nothing. Bounded: the newest MAX_DRAFTS, each capped.
const STORAGE_KEY = "chat.compose.drafts.v1";
const MAX_DRAFTS = 50;
const MAX_DRAFT_CHARS = 20_000;

interface StoredDraft {
  text: string;
  at: number;
}

function readAll(): Record<string, StoredDraft> {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    if (!raw) return {};
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
    const drafts: Record<string, StoredDraft> = {};
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      const draft = value as Partial<StoredDraft> | null;
      if (draft && typeof draft.text === "string" && typeof draft.at === "number") drafts[key] = { text: draft.text, at: draft.at };
    }
    return drafts;
  } catch {
    // Storage disabled or corrupt: drafts are a convenience, never an error.
    return {};
  }
}

function writeAll(drafts: Record<string, StoredDraft>): void {
  const newest = Object.entries(drafts)
    .sort((a, b) => b[1].at - a[1].at)
    .slice(0, MAX_DRAFTS);
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(Object.fromEntries(newest)));
  } catch {
    // Quota exceeded: keep going without saving.
  }
}

export function loadDraft(key: string): string {
  return readAll()[key]?.text ?? "";
}

export function saveDraft(key: string, text: string): void {
  const drafts = readAll();
  if (text.trim() === "") delete drafts[key];
  else drafts[key] = { text: text.slice(0, MAX_DRAFT_CHARS), at: Date.now() };
  writeAll(drafts);
}

export function clearDraft(key: string): void {
  saveDraft(key, "");
}
