// The emoji the client offers: the server's Unicode emoji names (a ~95 KB document fetched on
// first need, never part of the first-load bundle) and the organization's custom emoji from
// /register. Small on purpose: the picker itself is a lazy chunk, this module is shared.
import { signal } from "@preact/signals";
import { registered } from "../../state/store";

export type ReactionType = "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";

/** What a pick hands back, as the reactions API takes it. */
export interface PickedEmoji {
  emoji_name: string;
  emoji_code: string;
  reaction_type: ReactionType;
}

export interface EmojiEntry extends PickedEmoji {
  /** Every name it answers to, canonical first. */
  names: string[];
  /** The character(s) to show, for Unicode emoji. */
  char?: string;
  /** The image to show, for custom emoji. */
  imageUrl?: string;
}

/** Same origin always: `server_emoji_data_url` names the realm's host, which the CSP may not allow. */
const EMOJI_DATA_PATH = "/static/generated/emoji/emoji_api.json";

/** The Unicode emoji, in display order; null until loaded. */
export const unicodeEmoji = signal<readonly EmojiEntry[] | null>(null);
export const emojiLoadError = signal<string | null>(null);

let loading: Promise<readonly EmojiEntry[]> | null = null;

/** "1f1fa-1f1f8" → the characters; single BMP symbols get U+FE0F so they draw as emoji. */
export function emojiChar(code: string): string {
  const points = code.split("-").map((hex) => Number.parseInt(hex, 16));
  if (points.some((p) => !Number.isInteger(p) || p < 0 || p > 0x10ffff)) return "";
  const text = String.fromCodePoint(...points);
  return points.length === 1 && points[0] < 0x1f000 ? `${text}\ufe0f` : text;
}

// Display order without category data: the everyday faces and hands first, then by code point.
const FIRST_RANGES: [number, number][] = [
  [0x1f600, 0x1f64f],
  [0x1f910, 0x1f92f],
  [0x1f970, 0x1f97f],
  [0x1f440, 0x1f450],
];
function rank(code: string): number {
  const first = Number.parseInt(code, 16);
  const index = FIRST_RANGES.findIndex(([lo, hi]) => first >= lo && first <= hi);
  return index === -1 ? FIRST_RANGES.length : index;
}

function parse(document: unknown): EmojiEntry[] {
  const codeToNames = (document as { code_to_names?: unknown } | null)?.code_to_names;
  if (typeof codeToNames !== "object" || codeToNames === null) throw new Error("The emoji data has no code_to_names.");
  const entries: EmojiEntry[] = [];
  for (const [code, names] of Object.entries(codeToNames as Record<string, unknown>)) {
    if (!/^[0-9a-f]+(-[0-9a-f]+)*$/.test(code) || !Array.isArray(names) || names.length === 0) continue;
    const valid = names.filter((n): n is string => typeof n === "string");
    if (valid.length === 0) continue;
    entries.push({ emoji_name: valid[0], emoji_code: code, reaction_type: "unicode_emoji", names: valid, char: emojiChar(code) });
  }
  return entries.sort((a, b) => rank(a.emoji_code) - rank(b.emoji_code) || Number.parseInt(a.emoji_code, 16) - Number.parseInt(b.emoji_code, 16));
}

/** Fetches the Unicode emoji once; later calls share the first. A failure can be retried. */
export function loadEmojiData(): Promise<readonly EmojiEntry[]> {
  if (unicodeEmoji.value) return Promise.resolve(unicodeEmoji.value);
  loading ??= fetch(EMOJI_DATA_PATH, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(async (response) => {
      if (!response.ok) throw new Error(`The emoji list could not be loaded (${response.status}).`);
      const entries = parse(await response.json());
      unicodeEmoji.value = entries;
      emojiLoadError.value = null;
      return entries;
    })
    .catch((error: unknown) => {
      loading = null;
      emojiLoadError.value = error instanceof Error ? error.message : String(error);
      throw error;
    });
  return loading;
}

/** The organization's active custom emoji (read from /register state each time: events update it). */
export function realmEmoji(): EmojiEntry[] {
  const all = registered.value?.realm_emoji ?? {};
  return Object.values(all)
    .filter((e) => !e.deactivated)
    .map((e) => ({ emoji_name: e.name, emoji_code: String(e.id), reaction_type: "realm_emoji" as const, names: [e.name], imageUrl: e.source_url }))
    .sort((a, b) => a.emoji_name.localeCompare(b.emoji_name));
}

/** Custom emoji first (they shadow Unicode names, as on Zulip), then the Unicode ones. */
export function allEmoji(): EmojiEntry[] {
  const custom = realmEmoji();
  const taken = new Set(custom.map((e) => e.emoji_name));
  const unicode = (unicodeEmoji.value ?? []).filter((e) => !taken.has(e.emoji_name));
  return [...custom, ...unicode];
}

/**
 * Emoji whose names match `query`: a name starting with it first, then a word of a name
 * (after '_') starting with it, then names containing it. `limit` bounds the answer.
 */
export function searchEmoji(query: string, limit: number): EmojiEntry[] {
  const q = query.trim().toLowerCase().replace(/[\s-]+/g, "_");
  const all = allEmoji();
  if (q === "") return all.slice(0, limit);
  const buckets: EmojiEntry[][] = [[], [], [], []];
  for (const entry of all) {
    let best = 4;
    for (const name of entry.names) {
      if (name === q) best = 0;
      else if (name.startsWith(q)) best = Math.min(best, 1);
      else if (name.split("_").some((word) => word.startsWith(q))) best = Math.min(best, 2);
      else if (q.length >= 2 && name.includes(q)) best = Math.min(best, 3);
    }
    if (best < 4) buckets[best].push(entry);
  }
  const result: EmojiEntry[] = [];
  for (const bucket of buckets) {
    for (const entry of bucket) {
      result.push(entry);
      if (result.length >= limit) return result;
    }
  }
  return result;
}

/** Lazy entry to the picker component: a separate chunk, loaded on first open. */
export function loadEmojiPicker() {
  return import("./EmojiPicker");
}
