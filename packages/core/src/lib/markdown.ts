// Markdown to HTML in Zulip's conventions (markdown-it plus Zulip's syntax: mentions, stream
// links, emoji, linkifiers, code blocks as `div.codehilite`, quote and spoiler fences). Raw HTML in
// the source is never passed through, links are limited to http, https, mailto and relative URLs
// and get safe attributes, and every name written out is escaped, so hostile input cannot inject
// markup. The caller fetches the render context (`fetchRenderContext`); rendering is pure.
import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";
import { linkifierMatches, newLinkifierBudget, type Linkifier, type LinkifierBudget } from "./linkifiers.ts";
import type { RenderContext } from "./markdown/render-context.ts";
import { isServiceBotType } from "./bots.ts";
import { escapeAttribute, escapeText, syntaxEnv, zulipSyntax, type SyntaxEnv } from "./markdown/zulip-syntax.ts";

export * from "./markdown/render-context.ts";
export { encodeHashComponent, streamNarrowUrl, customEmojiUrl, WILDCARD_MENTIONS } from "./markdown/zulip-syntax.ts";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
// Zulip has no reference-style links and no inline images from Markdown syntax.
md.disable(["reference", "image"]);

const ALLOWED_SCHEMES = new Set(["http", "https", "mailto"]);

/**
 * Only http, https, mailto and relative URLs. Browsers drop tabs and newlines inside URLs and
 * tolerate leading spaces, so those are removed before looking for a scheme; anything with a colon
 * before the first '/', '?' or '#' is a scheme and must be one of the allowed ones.
 */
export function isSafeLinkUrl(url: string): boolean {
  const cleaned = url.replace(/[\u0000-\u0020\u007f-\u00a0\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g, "");
  const scheme = /^([^/?#]*?):/.exec(cleaned);
  if (!scheme) return true;
  return ALLOWED_SCHEMES.has(scheme[1].toLowerCase());
}
md.validateLink = isSafeLinkUrl;

const IMAGE_URL = /\.(bmp|gif|jpe?g|png|webp|tiff?)([?#]|$)/i;

md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const href = String(token.attrGet("href") ?? "");
  // Always these attributes in this order; a Markdown link title is replaced by the URL.
  token.attrs = [["href", href], ["target", "_blank"], ["rel", "noopener noreferrer"], ["title", href]];
  const state = (env as RenderEnv).state;
  if (state) {
    state.hasLink = true;
    if (IMAGE_URL.test(href)) state.hasImage = true;
  }
  return self.renderToken(tokens, idx, options);
};

// Text is escaped as Zulip's serializer does (quotes stay as they are outside attributes).
md.renderer.rules.text = (tokens, idx) => escapeText(tokens[idx].content);
md.renderer.rules.code_inline = (tokens, idx) => `<code>${escapeText(tokens[idx].content)}</code>`;
md.renderer.rules.s_open = () => "<del>";
md.renderer.rules.s_close = () => "</del>";

// Pygments' names for the languages people name most; others are shown as written, as Zulip does
// for a language it does not know.
const LANGUAGE_NAMES: Record<string, string> = {
  bash: "Bash", sh: "Bash", shell: "Bash", zsh: "Bash", c: "C", cpp: "C++", "c++": "C++", csharp: "C#", "c#": "C#", cs: "C#",
  css: "CSS", diff: "Diff", docker: "Docker", dockerfile: "Docker", go: "Go", golang: "Go", haskell: "Haskell", hs: "Haskell",
  html: "HTML", java: "Java", javascript: "JavaScript", js: "JavaScript", json: "JSON", jsx: "JSX", kotlin: "Kotlin",
  latex: "TeX", tex: "TeX", lua: "Lua", markdown: "Markdown", md: "Markdown", perl: "Perl", php: "PHP", py: "Python",
  python: "Python", python3: "Python", py3: "Python", py2: "Python 2.x", r: "R", rb: "Ruby", ruby: "Ruby", rust: "Rust",
  rs: "Rust", scala: "Scala", sql: "SQL", swift: "Swift", text: "Text only", ts: "TypeScript", typescript: "TypeScript",
  xml: "XML", yaml: "YAML", yml: "YAML",
};

function escapeCode(text: string): string {
  return escapeAttribute(text).replace(/'/g, "&#39;");
}

function codeBlock(content: string, language: string): string {
  let code = content.replace(/[ \t]+$/gm, "");
  if (!code.endsWith("\n")) code += "\n";
  const name = language === "" ? "" : (LANGUAGE_NAMES[language.toLowerCase()] ?? language);
  const attribute = name === "" ? "" : ` data-code-language="${escapeAttribute(name)}"`;
  return `<div class="codehilite"${attribute}><pre><span></span><code>${escapeCode(code)}</code></pre></div>\n`;
}

// Quote and spoiler fences hold Markdown; nesting deeper than this renders as code.
const MAX_FENCE_NESTING = 8;

function renderNested(content: string, env: RenderEnv): string {
  env.depth = (env.depth ?? 0) + 1;
  try {
    return md.render(content, env);
  } finally {
    env.depth--;
  }
}

md.renderer.rules.fence = (tokens, idx, _options, envArg) => {
  const env = envArg as RenderEnv;
  const info = tokens[idx].info.trim();
  const language = (info.split(/\s+/)[0] ?? "").replace(/^\./, "");
  const content = tokens[idx].content;
  const nestable = (env.depth ?? 0) < MAX_FENCE_NESTING;
  if (language.toLowerCase() === "quote" && nestable) {
    return `<blockquote>\n${renderNested(content, env)}</blockquote>\n`;
  }
  if (language.toLowerCase() === "spoiler" && nestable) {
    const header = info.slice(info.split(/\s+/)[0].length).trim();
    return `<div class="spoiler-block"><div class="spoiler-header">\n${header === "" ? "" : renderNested(header, env)}</div><div class="spoiler-content" aria-hidden="true">\n${renderNested(content, env)}</div></div>\n`;
  }
  return codeBlock(content, language);
};
md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content, "");

interface RenderEnv {
  [key: string | symbol]: unknown;
  linkifiers?: Linkifier[];
  /** Shared by every text of the message, nested renders included, so the whole message is bounded. */
  linkifierBudget?: LinkifierBudget;
  syntax?: SyntaxEnv;
  state?: { hasLink: boolean; hasImage: boolean };
  depth?: number;
}

zulipSyntax(md);

// The realm's linkifiers turn matches in plain text into links; text already inside a link, and
// code, is left alone (code spans are their own token type and never reach this rule).
md.core.ruler.after("linkify", "linkifiers", (state) => {
  const env = state.env as RenderEnv;
  const linkifiers = env.linkifiers;
  if (!linkifiers || linkifiers.length === 0) return;
  const budget = (env.linkifierBudget ??= newLinkifierBudget());
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const children: Token[] = [];
    let linkDepth = 0;
    for (const token of block.children) {
      if (token.type === "link_open") linkDepth++;
      if (token.type === "link_close") linkDepth--;
      const matches = token.type === "text" && linkDepth === 0 ? linkifierMatches(token.content, linkifiers, budget) : [];
      if (matches.length === 0) {
        children.push(token);
        continue;
      }
      let position = 0;
      const text = (content: string) => {
        const t = new state.Token("text", "", 0);
        t.content = content;
        children.push(t);
      };
      for (const match of matches) {
        if (match.start > position) text(token.content.slice(position, match.start));
        const open = new state.Token("link_open", "a", 1);
        open.attrs = [["href", match.url]];
        children.push(open);
        text(match.text);
        children.push(new state.Token("link_close", "a", -1));
        position = match.end;
      }
      if (position < token.content.length) text(token.content.slice(position));
    }
    block.children = children;
  }
});

export const MARKDOWN_VERSION = 1;

export interface RenderedMessage {
  html: string;
  hasLink: boolean;
  hasImage: boolean;
  isMeMessage: boolean;
  /** Users mentioned by name or id (not silently). */
  mentionedUserIds: number[];
  /** User groups mentioned (not silently). */
  mentionedGroupIds: number[];
  /** Whether @**all**, @**everyone**, @**stream** or @**channel** was used (not silently). */
  mentionsWildcard: boolean;
  /** Whether @**topic** was used (not silently). */
  mentionsTopicWildcard: boolean;
}

/** Renders message Markdown; `context` comes from `fetchRenderContext` (none: no mentions/links). */
export function renderMarkdown(content: string, context: RenderContext = {}): RenderedMessage {
  const isMeMessage = /^\/me\s/.test(content) && !content.includes("\n");
  const syntax = syntaxEnv(context);
  const env: RenderEnv = { linkifiers: context.linkifiers, syntax, state: { hasLink: false, hasImage: false }, depth: 0 };
  const html = md.render(content, env).trimEnd();
  return {
    html,
    hasLink: env.state!.hasLink,
    hasImage: env.state!.hasImage,
    isMeMessage,
    mentionedUserIds: [...syntax.findings.mentionedUserIds],
    mentionedGroupIds: [...syntax.findings.mentionedGroupIds],
    mentionsWildcard: syntax.findings.mentionsWildcard,
    mentionsTopicWildcard: syntax.findings.mentionsTopicWildcard,
  };
}

/**
 * The active service bots (outgoing webhook, embedded) a message mentions, by name or through a
 * mentioned group (Zulip counts a group's members as mentioned); silent mentions are not mentions.
 * Those mentioned by name come first, then the rest, each in order of id: the worker calls the
 * first OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE.
 */
export function mentionedServiceBotIds(rendered: RenderedMessage, context: RenderContext): number[] {
  const byName = new Set<number>();
  const mentioned = new Set(rendered.mentionedUserIds);
  for (const user of context.users ?? []) if (mentioned.has(user.id) && isServiceBotType(user.bot_type)) byName.add(user.id);
  const throughGroups = new Set<number>();
  const groups = new Set(rendered.mentionedGroupIds);
  for (const group of context.groups ?? []) if (groups.has(group.id)) for (const id of group.service_bot_ids) if (!byName.has(id)) throughGroups.add(id);
  const byId = (a: number, b: number) => a - b;
  return [...[...byName].sort(byId), ...[...throughGroups].sort(byId)];
}

/** The users a message's `mentioned` flag goes to: mentioned users and members of mentioned groups. */
export function mentionFlagUserIds(rendered: RenderedMessage, context: RenderContext): number[] {
  const ids = new Set(rendered.mentionedUserIds);
  const groups = new Set(rendered.mentionedGroupIds);
  for (const group of context.groups ?? []) if (groups.has(group.id)) for (const id of group.member_ids) ids.add(id);
  return [...ids];
}
