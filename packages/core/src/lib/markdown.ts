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
import { fileNameOfPathId, isValidPathId } from "./uploads.ts";
import { globalTimes } from "./markdown/global-times.ts";

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

md.renderer.rules.fence = (tokens, idx, options, envArg) => {
  const env = envArg as RenderEnv;
  // A fence inside a `>` quote is quoted too (the image_previews rule marks it).
  if ((tokens[idx].meta as { quoted?: boolean } | null)?.quoted && !env.inMarkdownQuote) {
    env.inMarkdownQuote = true;
    env.quoteDepth = (env.quoteDepth ?? 0) + 1;
    try {
      return md.renderer.rules.fence!(tokens, idx, options, env, md.renderer);
    } finally {
      env.quoteDepth--;
      env.inMarkdownQuote = false;
    }
  }
  const info = tokens[idx].info.trim();
  const language = (info.split(/\s+/)[0] ?? "").replace(/^\./, "");
  const content = tokens[idx].content;
  const nestable = (env.depth ?? 0) < MAX_FENCE_NESTING;
  if (language.toLowerCase() === "quote" && nestable) {
    // Links inside quotes get no image preview (as Zulip).
    env.quoteDepth = (env.quoteDepth ?? 0) + 1;
    try {
      return `<blockquote>\n${renderNested(content, env)}</blockquote>\n`;
    } finally {
      env.quoteDepth--;
    }
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
  /** How many quotes (fences, or `>` around a fence) the text being rendered is inside. */
  quoteDepth?: number;
  inMarkdownQuote?: boolean;
  previews?: PreviewState;
}

/**
 * Zulip's INLINE_PREVIEW_LIMIT_PER_MESSAGE: a message with more distinct links (outside quotes)
 * than this gets no previews at all.
 */
export const INLINE_PREVIEW_LIMIT_PER_MESSAGE = 24;
// Zulip's IMAGE_EXTENSIONS, matched against the URL's path.
const PREVIEW_EXTENSIONS = [".bmp", ".gif", ".jpe", ".jpeg", ".jpg", ".png", ".webp"];

interface PreviewState {
  enabled: boolean;
  /** The realm's host (with any port), whose absolute upload URLs count as its own. */
  realmHost: string | null;
  /** Distinct link URLs outside quotes, across the whole message (nested renders too). */
  links: Set<string>;
  /** URLs already previewed: each gets one preview, at its first link. */
  previewed: Set<string>;
  /** "WIDTHxHEIGHT" of uploaded images by path id, where known. */
  dimensions?: Map<string, string>;
  /** Their uploads' content types, by path id. */
  contentTypes?: Map<string, string>;
}

/**
 * Whether `href` is an image uploaded to this server: a `/user_uploads/<path id>` path, relative
 * or on the realm's own host, ending in an image extension. Nothing external is ever previewed
 * (there is no image proxy), so a preview cannot make a reader's browser fetch from elsewhere.
 */
export function isPreviewableUploadUrl(href: string, realmHost: string | null): boolean {
  return previewableUpload(href, realmHost) !== null;
}

/** The path id of a previewable upload `href` links to, or null (see isPreviewableUploadUrl). */
function previewableUpload(href: string, realmHost: string | null): string | null {
  let url: URL;
  const base = "http://relative.invalid";
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (href.startsWith("/")) {
    // "//host/..." and "/\\host" are absolute in a browser; only a real path stays on this server.
    if (!href.startsWith("/user_uploads/") || url.origin !== base) return null;
  } else {
    if (realmHost === null || (url.protocol !== "https:" && url.protocol !== "http:")) return null;
    if (url.host !== realmHost.toLowerCase() || url.username !== "" || url.password !== "") return null;
  }
  const path = url.pathname;
  if (!path.startsWith("/user_uploads/")) return null;
  let pathId = path.slice("/user_uploads/".length);
  try {
    pathId = decodeURIComponent(pathId);
  } catch {
    return null;
  }
  if (!isValidPathId(pathId)) return null;
  const lower = pathId.toLowerCase();
  return PREVIEW_EXTENSIONS.some((extension) => lower.endsWith(extension)) ? pathId : null;
}

function previewHtml(href: string, title: string | null, fileName: string, dimensions: string | undefined, contentType: string | undefined): string {
  const titleAttribute = title === null ? "" : ` title="${escapeAttribute(title)}"`;
  // Zulip's data-original-dimensions (feature levels 276, 278): the original's size, for layout;
  // data-original-content-type (feature level 336): its type, so clients know if they can show it.
  let dimensionsAttribute = dimensions === undefined ? "" : ` data-original-dimensions="${escapeAttribute(dimensions)}"`;
  if (dimensions !== undefined && contentType !== undefined) dimensionsAttribute += ` data-original-content-type="${escapeAttribute(contentType)}"`;
  // No whitespace inside: clients (zulip-flutter) expect the div, the link and the image alone.
  // Zulip writes no alt; clients ignore it, and without one the link has no accessible name.
  return `<div class="message_inline_image"><a href="${escapeAttribute(href)}"${titleAttribute}><img${dimensionsAttribute} src="${escapeAttribute(href)}" alt="${escapeAttribute(title ?? fileName)}"></a></div>\n`;
}

zulipSyntax(md);
globalTimes(md);

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

// Image previews (Zulip's InlineInterestingLinkProcessor, for this server's uploads only): each
// image upload linked outside a quote gets a `div.message_inline_image` after the paragraph that
// links it (inside a list item, after the item's text; elsewhere, at the end). A paragraph that
// is nothing but the bare link gives way to the preview, as in Zulip.
md.core.ruler.after("linkifiers", "image_previews", (state) => {
  const env = state.env as RenderEnv;
  const previews = env.previews;
  if (!previews) return;
  const inQuote = (env.quoteDepth ?? 0) > 0;
  const tokens = state.tokens;
  let depth = 0;
  for (const token of tokens) {
    if (token.type === "blockquote_open") depth++;
    if (token.type === "blockquote_close") depth--;
    if (token.type === "fence" && depth > 0) token.meta = { ...(token.meta as object | null), quoted: true };
  }
  const output: Token[] = [];
  const atEnd: Token[] = [];
  const html = (content: string) => {
    const token = new state.Token("html_block", "", 0);
    token.content = content;
    return token;
  };
  let blockquoteDepth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === "blockquote_open") blockquoteDepth++;
    if (token.type === "blockquote_close") blockquoteDepth--;
    output.push(token);
    if (token.type !== "inline" || !token.children) continue;
    const quoted = inQuote || blockquoteDepth > 0;
    const found: string[] = [];
    const children = token.children;
    for (let j = 0; j < children.length; j++) {
      if (children[j]!.type !== "link_open") continue;
      const href = String(children[j]!.attrGet("href") ?? "");
      if (quoted) continue;
      previews.links.add(href);
      const pathId = previews.enabled && !previews.previewed.has(href) ? previewableUpload(href, previews.realmHost) : null;
      if (pathId === null) continue;
      previews.previewed.add(href);
      // Zulip's title is the link's text up to its first markup, when that is not the URL itself.
      let text = "";
      // (Entities are their own tokens until the last core rule joins them to the text.)
      for (let k = j + 1; k < children.length && (children[k]!.type === "text" || children[k]!.type === "text_special"); k++) text += children[k]!.content;
      found.push(previewHtml(href, text === "" || text === href ? null : text, fileNameOfPathId(pathId), previews.dimensions?.get(pathId), previews.contentTypes?.get(pathId)));
    }
    if (found.length === 0) continue;
    const open = tokens[i - 1];
    const close = tokens[i + 1];
    if (open?.type === "paragraph_open" && close?.type === "paragraph_close") {
      const bare = !open.hidden && children.length === 3 && children[0]!.type === "link_open" && children[1]!.type === "text" && children[2]!.type === "link_close" && found.length === 1 && children[1]!.content === String(children[0]!.attrGet("href"));
      if (bare) {
        output.splice(output.length - 2, 2);
        i++;
      } else {
        output.push(close);
        i++;
      }
      output.push(...found.map(html));
    } else {
      atEnd.push(...found.map(html));
    }
  }
  state.tokens = [...output, ...atEnd];
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
  const render = (previews: boolean) => {
    const syntax = syntaxEnv(context);
    const env: RenderEnv = { linkifiers: context.linkifiers, syntax, state: { hasLink: false, hasImage: false }, depth: 0 };
    if (context.imagePreviews) {
      env.previews = { enabled: previews, realmHost: context.imagePreviews.realmHost ?? null, links: new Set(), previewed: new Set(), dimensions: context.imageDimensions, contentTypes: context.imageContentTypes };
    }
    return { env, syntax, html: md.render(content, env).trimEnd() };
  };
  let { env, syntax, html } = render(true);
  // Past the limit no link is previewed; how many there are is known only once all are parsed.
  if (env.previews && env.previews.links.size > INLINE_PREVIEW_LIMIT_PER_MESSAGE) ({ env, syntax, html } = render(false));
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
