// Linkifiers (Zulip's realm filters): a Python-style regular expression with named groups and a
// URL format string with `%(name)s` placeholders. Patterns run on RE2 (re2js), whose matching time
// is linear in the text whatever the pattern, so no pattern an administrator saves can stall a
// node; what RE2 cannot express (backreferences, lookarounds) is refused when the linkifier is
// added. Generated URLs keep the template's scheme and host (always http or https) and
// percent-encode what the matched text inserts, so message text cannot inject markup or a
// `javascript:` URL.
import { RE2JS, RE2JSSyntaxException } from "re2js";
import { badRequest } from "../errors.ts";
import { expandUrlTemplate, isValidUrlTemplate, urlTemplateVariables } from "./url-templates.ts";

export interface Linkifier {
  id: number;
  pattern: string;
  url_format_string: string;
  /** The RFC 6570 template links are made with (feature level 176); url_format_string is its 3.x form. Without it, made of that. */
  url_template?: string;
}

export interface LinkifierLink {
  text: string;
  url: string;
}

export const MAX_LINKIFIER_PATTERN_LENGTH = 1000;
export const MAX_LINKIFIER_URL_LENGTH = 1000;
/**
 * RE2's time is linear in the text but also grows with the compiled program (counted repetitions
 * such as `\w{900}` expand): one scan of 10,000 characters by a 40,000-instruction program took
 * seconds, so larger patterns are refused, as RE2's own memory limit does.
 */
export const MAX_LINKIFIER_PROGRAM_SIZE = 2000;
/** Links one rendered message or topic may get from all its linkifiers together. */
export const MAX_LINKIFIER_MATCHES = 1000;
/**
 * Wall-clock backstop per message for what the bounds leave linear but large (many linkifiers,
 * each with a large program, on a long message); past it the rest is left unlinked. 1,000 ordinary
 * links take ~50 ms, so it is not reached by real messages; under the event-loop test's 250 ms.
 */
export const LINKIFIER_TIME_BUDGET_MS = 150;
/** Longest link a linkifier is sure to find (Zulip has no such limit; see `matchLinkifier`). */
export const MAX_LINK_LENGTH = 256;
const SEARCH_WINDOW = 2 * MAX_LINK_LENGTH + 2;
/**
 * Characters each linkifier may search in one message, counting every window it reads: room for
 * MAX_LINKIFIER_MATCHES links, each found in its own window, twice over. A linkifier that matches
 * empty text everywhere spends its own share, not the other linkifiers' links.
 */
const MAX_SEARCHED_PER_LINKIFIER = 2 * MAX_LINKIFIER_MATCHES * SEARCH_WINDOW;

const PLACEHOLDER = /%\(([^()]*)\)s/g;

/**
 * Python's leading global flags, such as `(?i)`, become an RE2 flag group scoped to the pattern
 * (so they never change the boundary rules around it). Returns the pattern RE2 compiles.
 */
export function translatePythonPattern(pattern: string): string {
  const leading = /^\(\?([aiLmsux]+)\)/.exec(pattern);
  if (!leading) return pattern;
  let flags = "";
  for (const flag of leading[1]) {
    if (flag === "i" || flag === "m" || flag === "s") flags += flags.includes(flag) ? "" : flag;
    else if (flag === "x" || flag === "L") throw badRequest(`Bad regular expression: unsupported flag '${flag}'`);
    // `a` and `u` change what \w and \d mean in Python; RE2's classes are ASCII, as `a` asks.
  }
  const rest = pattern.slice(leading[0].length);
  return flags === "" ? rest : `(?${flags}:${rest})`;
}

/** Python's repr of a group name, as Zulip's messages quote it: 'id'. */
function pyRepr(name: string): string {
  return `'${name.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** RE2's parse error in words an administrator can act on. */
function syntaxErrorReason(error: RE2JSSyntaxException, source: string): string {
  const snippet = error.getPattern() ?? "";
  if (snippet.startsWith("(?=") || snippet.startsWith("(?!")) return "lookahead assertions such as (?= and (?! are not supported";
  if (snippet.startsWith("(?<=") || snippet.startsWith("(?<!")) return "lookbehind assertions such as (?<= and (?<! are not supported";
  if ((snippet === "(?P" && source.includes("(?P=")) || /^\\[1-9]/.test(snippet)) return "backreferences such as (?P=name) or \\1 are not supported";
  return snippet === "" ? error.getDescription() : `${error.getDescription()}: ${snippet}`;
}

function compileRe2(source: string): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) throw badRequest(`Bad regular expression: ${syntaxErrorReason(error, source)}`);
    throw badRequest("Bad regular expression: the pattern cannot be compiled");
  }
}

/** Compiles a linkifier pattern or throws Zulip's `Bad regular expression: …`. */
export function compileLinkifierPattern(pattern: string): { source: string; groups: string[] } {
  if (pattern.trim() === "") throw badRequest("Bad regular expression: the pattern is empty");
  if (pattern.length > MAX_LINKIFIER_PATTERN_LENGTH) throw badRequest(`Bad regular expression: longer than ${MAX_LINKIFIER_PATTERN_LENGTH} characters`);
  const source = translatePythonPattern(pattern);
  const regex = compileRe2(source);
  if (regex.programSize() > MAX_LINKIFIER_PROGRAM_SIZE) {
    throw badRequest("Bad regular expression: the pattern is too large (counted repetitions such as {500} expand); simplify it");
  }
  return { source, groups: Object.keys(regex.namedGroups()) };
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

/** Checks an RFC 6570 URL template against its pattern's groups, in Zulip 9.0's words. */
export function checkUrlTemplate(urlTemplate: string, groups: string[]): void {
  if (urlTemplate.length > MAX_LINKIFIER_URL_LENGTH || !isValidUrlTemplate(urlTemplate)) throw badRequest("Invalid URL template.");
  const variables = urlTemplateVariables(urlTemplate);
  // Links must be http(s) URLs whatever the match: so must the template with every value set.
  const sample = expandUrlTemplate(urlTemplate, Object.fromEntries(variables.map((name) => [name, "x"])));
  if (linkifierUrlOrNull(sample) === null || !/^https?:\/\/[^/?#]/i.test(sample)) throw badRequest("Invalid URL template.");
  const groupSet = new Set(groups);
  const missingInPattern = variables.filter((name) => !groupSet.has(name)).sort();
  if (missingInPattern.length > 0) throw badRequest(`Group ${pyRepr(missingInPattern[0])} in URL template is not present in linkifier pattern.`);
  const missingInUrl = groups.filter((name) => !variables.includes(name)).sort();
  if (missingInUrl.length > 0) throw badRequest(`Group ${pyRepr(missingInUrl[0])} in linkifier pattern is not present in URL template.`);
}

/** Validates a new linkifier (pattern and URL format string). */
export function checkLinkifier(pattern: string, urlFormatString: string): void {
  const { groups } = compileLinkifierPattern(pattern);
  checkUrlFormatString(urlFormatString, groups);
}

/** A 3.x URL format string as the template Zulip's migration made of it: %(name)s is {name}. */
export function formatStringToTemplate(urlFormatString: string): string {
  return urlFormatString.replace(/%%|%\(([^()]*)\)s/g, (whole, name: string | undefined) => (whole === "%%" ? "%" : `{${name}}`));
}

/**
 * A template's 3.x form, for clients of Zulip 3.x: each expression becomes its variables'
 * placeholders (what an operator adds is lost), and a literal % is %%.
 */
export function templateToFormatString(urlTemplate: string): string {
  return urlTemplate.replace(/%|\{[^{}]*\}/g, (whole) =>
    whole === "%" ? "%%" : urlTemplateVariables(whole).map((name) => `%(${name})s`).join(""),
  );
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
  return linkifierUrlOrNull(url);
}

/** The URL for one match by an RFC 6570 template (Zulip 9.0's expansion), or null if it is not a safe http(s) URL. */
export function linkifierTemplateUrl(urlTemplate: string, groups: Record<string, string | undefined>): string | null {
  return linkifierUrlOrNull(expandUrlTemplate(urlTemplate, groups));
}

function linkifierUrlOrNull(url: string): string | null {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  } catch {
    return null;
  }
  return url;
}

// Zulip's prepare_realm_pattern: a match must start after whitespace, a quote, a parenthesis, a
// comma, a colon or `<` (or at the start), and must not be followed by a word character. RE2 has
// no lookarounds, so the pattern is wrapped to consume that preceding and following character
// and group 1 is the match; each search after a match starts one character before its end, so the
// character before the next match can still be read. Leftmost-first order picks, at the leftmost
// valid start, the pattern's preferred alternative that satisfies the boundaries, as Python's
// backtracking would.
const BEFORE = `[\\s'"(,:<]`;
const AFTER = `(?:\\W|\\z)`;

interface PreparedLinkifier {
  /** For the search from the start of the text: the match may begin there. */
  atStart: RE2JS;
  /** For every later search, from the character before the earliest allowed start. */
  afterChar: RE2JS;
  groups: string[];
  urlTemplate: string;
}

const prepared = new Map<string, PreparedLinkifier | null>();

function prepare(linkifier: Linkifier): PreparedLinkifier | null {
  const urlTemplate = linkifier.url_template || formatStringToTemplate(linkifier.url_format_string);
  const key = `${linkifier.pattern}\u0000${urlTemplate}`;
  if (prepared.has(key)) return prepared.get(key)!;
  let result: PreparedLinkifier | null = null;
  try {
    const { source, groups } = compileLinkifierPattern(linkifier.pattern);
    result = {
      atStart: RE2JS.compile(`(?:\\A|${BEFORE})(${source})${AFTER}`),
      afterChar: RE2JS.compile(`${BEFORE}(${source})${AFTER}`),
      groups,
      urlTemplate,
    };
  } catch {
    result = null; // A stored pattern that no longer validates links nothing.
  }
  if (prepared.size > 1000) prepared.clear();
  prepared.set(key, result);
  return result;
}

/** What one rendered message (or topic) may still spend on linkifiers; shared by its texts. */
export interface LinkifierBudget {
  linksLeft: number;
  /** By the linkifier's position in the realm's list. */
  searchedLeft: number[];
  deadline: number;
}

export function newLinkifierBudget(): LinkifierBudget {
  return { linksLeft: MAX_LINKIFIER_MATCHES, searchedLeft: [], deadline: performance.now() + LINKIFIER_TIME_BUDGET_MS };
}

type FoundLink = LinkifierLink & { start: number; end: number };

/**
 * One linkifier's matches in a text, in order, as Python's finditer with the boundary rules.
 *
 * Each search sees a window of SEARCH_WINDOW characters, never the rest of the text: a pattern
 * whose preferred alternative looks far ahead (`a(?:.*z)?`) would otherwise rescan the whole text
 * for every match, quadratic in the text. A match found must start early enough in its window that
 * every alternative up to MAX_LINK_LENGTH characters was seen; otherwise the search moves on to
 * the first start not yet seen in full. So each search costs O(window) and advances by a match or
 * by MAX_LINK_LENGTH characters: linear in the text.
 */
function matchLinkifier(text: string, p: PreparedLinkifier, budget: LinkifierBudget, order: number, found: Array<FoundLink & { order: number }>): void {
  let from = 0; // The earliest position the next match may start at.
  while (from <= text.length) {
    // After the start, the window begins with the character before `from`, which the pattern's
    // leading boundary reads; `\A` (the start of the text) is only used for the window at 0.
    const windowStart = from === 0 ? 0 : from - 1;
    const windowEnd = Math.min(text.length, windowStart + SEARCH_WINDOW);
    const searchedLeft = (budget.searchedLeft[order] ?? MAX_SEARCHED_PER_LINKIFIER) - (windowEnd - windowStart);
    if (budget.linksLeft <= 0 || searchedLeft < 0 || performance.now() > budget.deadline) return;
    budget.searchedLeft[order] = searchedLeft;
    const truncated = windowEnd < text.length;
    // Starts up to here had room for MAX_LINK_LENGTH characters and the following one.
    const seenInFull = windowEnd - MAX_LINK_LENGTH - 1;
    const matcher = (from === 0 ? p.atStart : p.afterChar).matcher(text.slice(windowStart, windowEnd));
    if (!matcher.find()) {
      if (!truncated) return;
      from = seenInFull + 1;
      continue;
    }
    const start = windowStart + matcher.start(1);
    const end = windowStart + matcher.end(1);
    // A match ending at a cut window end may have read a false end of text (`\z`, `$`, `\b`).
    if (truncated && (start > seenInFull || windowStart + matcher.end() === windowEnd)) {
      from = seenInFull + 1;
      continue;
    }
    if (end > start) {
      const groups: Record<string, string | undefined> = {};
      for (const name of p.groups) groups[name] = matcher.group(name) ?? undefined;
      const url = linkifierTemplateUrl(p.urlTemplate, groups);
      if (url !== null) {
        found.push({ text: text.slice(start, end), url, start, end, order });
        budget.linksLeft--;
      }
    }
    from = end > start ? end : start + 1;
  }
}

/**
 * The links a realm's linkifiers make in a text (a topic, or message text), in text order, without
 * overlaps (an earlier match wins; at the same position, the earlier linkifier). Pure apart from
 * the budget, which a message's texts share.
 */
export function linkifierMatches(text: string, linkifiers: Linkifier[], budget: LinkifierBudget = newLinkifierBudget()): FoundLink[] {
  const found: Array<FoundLink & { order: number }> = [];
  linkifiers.forEach((linkifier, order) => {
    const p = prepare(linkifier);
    if (p) matchLinkifier(text, p, budget, order, found);
  });
  found.sort((a, b) => a.start - b.start || a.order - b.order);
  const result: FoundLink[] = [];
  let end = -1;
  for (const link of found) {
    if (link.start < end) continue;
    result.push({ text: link.text, url: link.url, start: link.start, end: link.end });
    end = link.end;
  }
  return result;
}

/**
 * A message's `topic_links`: the URLs of the linkifier links in its topic. A list of URL strings,
 * as Zulip 3.x sends it (feature level 1); `{text, url}` objects came with feature level 46.
 */
export function topicLinks(topic: string, linkifiers: Linkifier[]): string[] {
  return linkifierMatches(topic, linkifiers).map(({ url }) => url);
}
