// Global times (Zulip's Timestamp pattern, feature levels 8 and 16): `<time:…>` becomes
// `<time datetime="…Z">…</time>`, the instant in UTC with what was written as its text, so each
// reader's client can show it in their own zone. The time is an ISO 8601 date-time (without a
// zone it is read as UTC, as Zulip does) or a Unix timestamp; anything else renders as
// `<span class="timestamp-error">Invalid time format: …</span>`. Zulip's dateutil also reads
// free-form dates ("Jun 5th 2017, 10:30PM"); those are refused here, an honest deviation.
import type { MarkdownIt, StateInline, Token } from "markdown-it";
import { escapeAttribute, escapeText } from "./zulip-syntax.ts";

const OPEN = "<time:";
/** How far a closing `>` is looked for: a message of many unclosed `<time:` costs no more than linear time. */
const MAX_TIME_LENGTH = 200;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const UNIX = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
/** Python's datetime: years 1 to 9999. */
const MIN_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z (Date.UTC reads years below 100 as 19xx)
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The instant as microseconds since the epoch, or null if it is not a time. */
function parseTime(text: string): number | null {
  const value = text.trim();
  if (UNIX.test(value)) {
    const micros = Math.round(Number(value) * 1e6);
    return Number.isFinite(micros) && micros / 1000 >= MIN_MS && micros / 1000 <= MAX_MS ? micros : null;
  }
  const m = ISO.exec(value);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const fraction = m[7] === undefined ? 0 : Number(m[7].padEnd(6, "0"));
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return null;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    const hours = Number(digits.slice(0, 2));
    const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (hours * 60 + minutes);
  }
  const ms = date.getTime() - offsetMinutes * 60_000;
  if (ms < MIN_MS || ms > MAX_MS) return null;
  return ms * 1000 + fraction;
}

/** Python's isoformat in UTC with Z: seconds always, microseconds only when there are some. */
function isoUtc(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const rest = micros - ms * 1000;
  const date = new Date(ms);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const base = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  const fraction = date.getUTCMilliseconds() * 1000 + rest;
  return fraction === 0 ? `${base}Z` : `${base}.${pad(fraction, 6)}Z`;
}

/** Renders one global time: `<time>` for a time, the error span otherwise. */
export function renderGlobalTime(text: string): string {
  const micros = parseTime(text);
  if (micros === null) return `<span class="timestamp-error">Invalid time format: ${escapeText(text)}</span>`;
  return `<time datetime="${escapeAttribute(isoUtc(micros))}">${escapeText(text)}</time>`;
}

function globalTimeRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (state.src.charCodeAt(start) !== 0x3c /* < */ || !state.src.startsWith(OPEN, start)) return false;
  const from = start + OPEN.length;
  const window = state.src.slice(from, Math.min(state.posMax, from + MAX_TIME_LENGTH + 1));
  const close = window.indexOf(">");
  if (close < 0) return false;
  const text = window.slice(0, close);
  if (!silent) {
    const token = state.push("zulip_global_time", "", 0);
    token.meta = { text };
  }
  state.pos = from + close + 1;
  return true;
}

function renderToken(tokens: Token[], idx: number): string {
  return renderGlobalTime((tokens[idx].meta as { text: string }).text);
}

/** Installs the rule; before markdown-it's autolink, which would read `time:` as a URL scheme. */
export function globalTimes(md: MarkdownIt): void {
  md.inline.ruler.before("autolink", "zulip_global_time", globalTimeRule);
  md.renderer.rules.zulip_global_time = renderToken;
}
