// The Unicode emoji name table, built from npm packages by rules. Zulip's names were curated from
// the same sources (iamcal's and GitHub's short names, emojione/JoyPixels, Unicode CLDR), so rules
// over those sources accept most names Zulip clients send, with the emoji Zulip means by them.
//
// - Which emoji exist: `emoji-datasource` (iamcal), the set Zulip and its clients draw images from.
// - Names: every name of the sets below, and each name with '-' also with '_' (`star-struck` →
//   `star_struck`). A name two emoji claim goes to the earlier set: iamcal's short names first, as
//   before (`sunglasses` stays 😎, not CLDR's 🕶), then CLDR's (`thumbs_up`), GitHub's (gemoji),
//   JoyPixels', Emojibase's own, and last keywords: a CLDR keyword that CLDR gives to one emoji
//   only and that emojilib also lists for it (`halo`).
// - The canonical name (what a reaction added by name carries, and what codes map back to): for
//   flags, the CLDR name (`flag_japan`); for other emoji of Emoji 1.0 and before, whose short names
//   chat apps settled on early, the shortest name two of the sets agree on (`+1`, `slight_smile`);
//   for later emoji, the CLDR name (`star_struck`).
// - emoji-client-names.ts adds the few names clients send that no rule finds; they come first.
//
// A code is Zulip's form: lowercase hex code points joined by '-', without U+FE0F ("2764").
import { readFileSync } from "node:fs";
import { CLIENT_EMOJI_NAMES } from "./emoji-client-names.ts";

export interface EmojiNameTable {
  /** Every accepted name → the code of its emoji. */
  nameToCode: Map<string, string>;
  /** Every emoji's code → its canonical name. */
  codeToName: Map<string, string>;
}

interface EmojiDatasourceEntry {
  unified: string;
  short_name: string;
  short_names: string[];
}

interface EmojibaseEntry {
  hexcode: string;
  tags?: string[];
  version: number;
}

type EmojibaseShortcodes = Record<string, string | string[]>;

/** "0023-FE0F-20E3" → "0023-20e3". */
export function zulipEmojiCode(unified: string): string {
  return unified
    .toLowerCase()
    .split("-")
    .filter((part) => part !== "fe0f")
    .join("-");
}

/** What `:name:` in markdown can spell, and so what a name may be. */
const VALID_NAME = /^[\p{L}\p{N}_+-]+$/u;

/** Emoji up to this Emoji version keep the short name chat apps agree on as canonical. */
const LAST_EARLY_EMOJI_VERSION = 1;

/** Country and region flags: two regional indicators, or a black flag with tag characters. */
const FLAG_CODE = /^(1f1[ef][0-9a-f]-1f1[ef][0-9a-f]|1f3f4(-e00[0-7][0-9a-f])+)$/;

/** code → names, one short-name set. */
type NameSet = Map<string, string[]>;

function withUnderscores(names: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    for (const spelling of [name, name.replace(/-/g, "_")]) {
      if (VALID_NAME.test(spelling) && !out.includes(spelling)) out.push(spelling);
    }
  }
  return out;
}

/**
 * A package's JSON file, read and parsed when the table is built. Not `require`: its cache would
 * keep the parsed files (several MB) alive after the table no longer needs them.
 */
function readPackageJson<T>(specifier: string): T {
  return JSON.parse(readFileSync(require.resolve(specifier), "utf8")) as T;
}

function emojibaseSet(file: string): NameSet {
  const shortcodes = readPackageJson<EmojibaseShortcodes>(`emojibase-data/en/shortcodes/${file}.json`);
  const set: NameSet = new Map();
  for (const [hexcode, names] of Object.entries(shortcodes)) {
    set.set(zulipEmojiCode(hexcode), withUnderscores(typeof names === "string" ? [names] : names));
  }
  return set;
}

/** "🛠️" → "1f6e0". */
function codeOfEmoji(emoji: string): string {
  return zulipEmojiCode([...emoji].map((ch) => ch.codePointAt(0)!.toString(16).padStart(4, "0")).join("-"));
}

/** CLDR keywords CLDR gives one emoji only and emojilib lists for that emoji too. */
function keywordSet(emojibase: readonly EmojibaseEntry[]): NameSet {
  const emojilib = readPackageJson<Record<string, string[]>>("emojilib/dist/emoji-en-US.json");
  const emojilibKeywords = new Map<string, Set<string>>();
  for (const [emoji, keywords] of Object.entries(emojilib)) emojilibKeywords.set(codeOfEmoji(emoji), new Set(keywords));

  const codesByKeyword = new Map<string, string[]>();
  for (const entry of emojibase) {
    const code = zulipEmojiCode(entry.hexcode);
    for (const tag of entry.tags ?? []) {
      const keyword = tag.toLowerCase().replace(/['’]/g, "").replace(/[\s-]+/g, "_");
      const codes = codesByKeyword.get(keyword) ?? [];
      if (!codes.includes(code)) codes.push(code);
      codesByKeyword.set(keyword, codes);
    }
  }
  const set: NameSet = new Map();
  for (const [keyword, codes] of codesByKeyword) {
    if (codes.length !== 1 || !VALID_NAME.test(keyword) || !emojilibKeywords.get(codes[0])?.has(keyword)) continue;
    set.set(codes[0], [...(set.get(codes[0]) ?? []), keyword]);
  }
  return set;
}

export function buildEmojiNameTable(): EmojiNameTable {
  const datasource = readPackageJson<EmojiDatasourceEntry[]>("emoji-datasource/emoji.json");
  const emojibase = readPackageJson<EmojibaseEntry[]>("emojibase-data/en/data.json");

  const iamcal: NameSet = new Map();
  for (const entry of datasource) {
    const code = zulipEmojiCode(entry.unified);
    iamcal.set(code, withUnderscores([...(iamcal.get(code) ?? []), entry.short_name, ...entry.short_names]));
  }
  const version = new Map(emojibase.map((entry) => [zulipEmojiCode(entry.hexcode), entry.version]));
  const client: NameSet = new Map();
  for (const { name, code } of CLIENT_EMOJI_NAMES) client.set(code, [...(client.get(code) ?? []), name]);

  const cldr = emojibaseSet("cldr");
  const github = emojibaseSet("github");
  const joypixels = emojibaseSet("joypixels");
  const legacy = emojibaseSet("emojibase-legacy");
  const emojibaseNames = emojibaseSet("emojibase");
  const keywords = keywordSet(emojibase);
  const claimOrder = [client, iamcal, cldr, github, joypixels, emojibaseNames, legacy, keywords];
  const shortNameSets = [cldr, iamcal, github, joypixels, legacy];
  const canonicalOrder = [cldr, iamcal, github, joypixels, emojibaseNames, legacy, keywords];

  // Only emoji-datasource's emoji exist; the other sets also name emoji clients have no image for.
  const nameToCode = new Map<string, string>();
  for (const set of claimOrder) {
    for (const [code, names] of set) {
      if (!iamcal.has(code)) continue;
      for (const name of names) if (!nameToCode.has(name)) nameToCode.set(name, code);
    }
  }

  const codeToName = new Map<string, string>();
  const holds = (code: string) => (name: string) => nameToCode.get(name) === code;
  for (const code of iamcal.keys()) {
    const own = holds(code);
    const canonical =
      CLIENT_EMOJI_NAMES.find((entry) => entry.canonical && entry.code === code && own(entry.name))?.name ??
      (FLAG_CODE.test(code) ? cldr.get(code)?.find(own) : undefined) ??
      ((version.get(code) ?? Infinity) <= LAST_EARLY_EMOJI_VERSION ? agreedShortestName(code, shortNameSets, own) : undefined) ??
      canonicalOrder.flatMap((set) => set.get(code) ?? []).find(own) ??
      client.get(code)?.find(own);
    if (canonical !== undefined) codeToName.set(code, canonical);
  }
  return { nameToCode, codeToName };
}

/** The shortest name that two of the sets give this emoji (ties: the earlier set's), if any. */
function agreedShortestName(code: string, sets: readonly NameSet[], own: (name: string) => boolean): string | undefined {
  let best: string | undefined;
  for (const name of sets.flatMap((set) => set.get(code) ?? [])) {
    if (!own(name) || (best !== undefined && name.length >= best.length)) continue;
    if (sets.filter((set) => set.get(code)?.includes(name)).length >= 2) best = name;
  }
  return best;
}
