// Linkifiers (Zulip's realm filters): a Python-style regular expression with named groups and a
// URL format string with `%(name)s` placeholders. Patterns are checked once, when an
// administrator adds them: they must compile and must not backtrack catastrophically (safe-regex2's
// star-height analysis), so applying them to hostile message text stays linear enough. Generated
// URLs keep the template's scheme and host (always http or https) and percent-encode what the
// matched text inserts, so message text cannot inject markup or a `javascript:` URL.
import safeRegex from "safe-regex2";
import { badRequest } from "../errors.ts";

export interface Linkifier {
  id: number;
  pattern: string;
  url_format_string: string;
}

export interface LinkifierLink {
  text: string;
  url: string;
}

export const MAX_LINKIFIER_PATTERN_LENGTH = 1000;
export const MAX_LINKIFIER_URL_LENGTH = 1000;

const PLACEHOLDER = /%\(([^()]*)\)s/g;

/**
 * Python regex syntax to JavaScript: `(?P<name>` → `(?<name>`, `(?P=name)` → `\k<name>`, and
 * leading global flags such as `(?i)`. Returns the source and flags for `new RegExp`.
 */
export function translatePythonPattern(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = "";
  const leading = /^\(\?([aiLmsux]+)\)/.exec(source);
  if (leading) {
    for (const flag of leading[1]) {
      if (flag === "i" || flag === "m" || flag === "s") flags += flags.includes(flag) ? "" : flag;
      else if (flag === "x" || flag === "L") throw badRequest(`Bad regular expression: unsupported flag '${flag}'`);
    }
    source = source.slice(leading[0].length);
  }
  source = source.replace(/\(\?P<(\w+)>/g, "(?<$1>").replace(/\(\?P=(\w+)\)/g, "\\k<$1>");
  return { source, flags };
}

/** The named groups of a translated pattern, in order. */
function groupNames(source: string): string[] {
  return [...source.matchAll(/\(\?<([A-Za-z_$][\w$]*)>/g)].map((m) => m[1]);
}

/** Python's repr of a group name, as Zulip's messages quote it: 'id'. */
function pyRepr(name: string): string {
  return `'${name.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** Compiles a linkifier pattern or throws Zulip's `Bad regular expression: …`. */
export function compileLinkifierPattern(pattern: string): { regex: RegExp; groups: string[] } {
  if (pattern.trim() === "") throw badRequest("Bad regular expression: the pattern is empty");
  if (pattern.length > MAX_LINKIFIER_PATTERN_LENGTH) throw badRequest(`Bad regular expression: longer than ${MAX_LINKIFIER_PATTERN_LENGTH} characters`);
  const { source, flags } = translatePythonPattern(pattern);
  let regex: RegExp;
  try {
    regex = new RegExp(source, flags);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Invalid regular expression: \/.*\/\w*: /s, "") : "invalid";
    throw badRequest(`Bad regular expression: ${reason}`);
  }
  if (!safeRegex(regex)) {
    throw badRequest("Bad regular expression: the pattern can backtrack catastrophically (nested or stacked repetition); simplify it");
  }
  return { regex, groups: groupNames(source) };
}

/** Checks a URL format string against its pattern's groups, in Zulip's words. */
export function checkUrlFormatString(urlFormatString: string, groups: string[]): void {
  if (urlFormatString.length > MAX_LINKIFIER_URL_LENGTH || /[\s"'<>\\`]/.test(urlFormatString)) throw badRequest("Invalid URL format string.");
  const found = new Set<string>();
  for (const match of urlFormatString.replace(/%%/g, "").matchAll(PLACEHOLDER)) {
    if (!/^[A-Za-z0-9_-]+$/.test(match[1])) throw badRequest("Invalid URL format string.");
    found.add(match[1]);
  }
  // Every `%` must be `%%` or start a placeholder.
  const rest = urlFormatString.replace(/%%/g, "").replace(PLACEHOLDER, "x");
  if (rest.includes("%")) throw badRequest("Invalid URL format string.");
  let url: URL;
  try {
    url = new URL(rest);
  } catch {
    throw badRequest("Invalid URL format string.");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !/^https?:\/\/[^/?#]/i.test(rest)) throw badRequest("Invalid URL format string.");

  const groupSet = new Set(groups);
  const missingInPattern = [...found].filter((name) => !groupSet.has(name)).sort();
  if (missingInPattern.length > 0) {
    throw badRequest(`Group ${pyRepr(missingInPattern[0])} in URL format string is not present in linkifier pattern.`);
  }
  const missingInUrl = [...groupSet].filter((name) => !found.has(name)).sort();
  if (missingInUrl.length > 0) {
    throw badRequest(`Group ${pyRepr(missingInUrl[0])} in linkifier pattern is not present in URL format string.`);
  }
}

/** Validates a new linkifier (pattern and URL format string). */
export function checkLinkifier(pattern: string, urlFormatString: string): void {
  const { groups } = compileLinkifierPattern(pattern);
  checkUrlFormatString(urlFormatString, groups);
}

/** Percent-encodes matched text for a URL: keeps URL punctuation, encodes quotes, spaces, markup. */
function encodeUrlValue(value: string): string {
  return encodeURI(value).replace(/'/g, "%27");
}

/** The URL for one match, or null if it is not a safe http(s) URL. */
export function linkifierUrl(urlFormatString: string, groups: Record<string, string | undefined>): string | null {
  const url = urlFormatString.replace(/%%|%\(([^()]*)\)s/g, (whole, name: string | undefined) =>
    whole === "%%" ? "%" : encodeUrlValue(groups[name!] ?? ""),
  );
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  } catch {
    return null;
  }
  return url;
}

interface PreparedLinkifier {
  regex: RegExp;
  urlFormatString: string;
}

const OUTER = "zulipLinkifierMatch";
const prepared = new Map<string, PreparedLinkifier | null>();

/**
 * Zulip's prepare_realm_pattern: a match must start after whitespace, a quote, a parenthesis, a
 * comma, a colon or `<` (or at the start), and must not be followed by a word character.
 */
function prepare(linkifier: Linkifier): PreparedLinkifier | null {
  const key = `${linkifier.pattern}\u0000${linkifier.url_format_string}`;
  if (prepared.has(key)) return prepared.get(key)!;
  let result: PreparedLinkifier | null = null;
  try {
    const { regex } = compileLinkifierPattern(linkifier.pattern);
    const flags = `${regex.flags.replace("g", "")}g`;
    result = { regex: new RegExp(`(?<![^\\s'"(,:<])(?<${OUTER}>${regex.source})(?!\\w)`, flags), urlFormatString: linkifier.url_format_string };
  } catch {
    result = null; // A stored pattern that no longer validates links nothing.
  }
  if (prepared.size > 1000) prepared.clear();
  prepared.set(key, result);
  return result;
}

/**
 * The links a realm's linkifiers make in a text (a topic, or message text), in text order, without
 * overlaps (an earlier match wins; at the same position, the earlier linkifier). Pure.
 */
export function linkifierMatches(text: string, linkifiers: Linkifier[]): Array<LinkifierLink & { start: number; end: number }> {
  const found: Array<LinkifierLink & { start: number; end: number; order: number }> = [];
  linkifiers.forEach((linkifier, order) => {
    const p = prepare(linkifier);
    if (!p) return;
    for (const match of text.matchAll(p.regex)) {
      const matched = match.groups![OUTER];
      if (!matched) continue;
      const start = match.index! + match[0].indexOf(matched);
      const url = linkifierUrl(p.urlFormatString, match.groups ?? {});
      if (url !== null) found.push({ text: matched, url, start, end: start + matched.length, order });
    }
  });
  found.sort((a, b) => a.start - b.start || a.order - b.order);
  const result: Array<LinkifierLink & { start: number; end: number }> = [];
  let end = -1;
  for (const link of found) {
    if (link.start < end) continue;
    result.push({ text: link.text, url: link.url, start: link.start, end: link.end });
    end = link.end;
  }
  return result;
}

/** A message's `topic_links`: the linkifier links of its topic. */
export function topicLinks(topic: string, linkifiers: Linkifier[]): LinkifierLink[] {
  return linkifierMatches(topic, linkifiers).map(({ text, url }) => ({ text, url }));
}
