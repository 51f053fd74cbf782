// Markdown to HTML in Zulip's conventions. Raw HTML in the source is never passed through, and
// links get safe attributes, so hostile input cannot inject markup.
import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";
import { linkifierMatches, type Linkifier } from "./linkifiers.ts";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  const href = token.attrGet("href") ?? "";
  token.attrSet("title", href);
  return self.renderToken(tokens, idx, options);
};

type RenderEnv = {
  linkifiers?: Linkifier[];
};

// The realm's linkifiers turn matches in plain text into links; text already inside a link, and
// code, is left alone (code spans are their own token type and never reach this rule).
md.core.ruler.after("linkify", "linkifiers", (state) => {
  const linkifiers = (state.env as RenderEnv).linkifiers;
  if (!linkifiers || linkifiers.length === 0) return;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const children: Token[] = [];
    let linkDepth = 0;
    for (const token of block.children) {
      if (token.type === "link_open") linkDepth++;
      if (token.type === "link_close") linkDepth--;
      const matches = token.type === "text" && linkDepth === 0 ? linkifierMatches(token.content, linkifiers) : [];
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
}

export function renderMarkdown(content: string, options: { linkifiers?: Linkifier[] } = {}): RenderedMessage {
  const isMeMessage = /^\/me\s/.test(content) && !content.includes("\n");
  const env: RenderEnv = { linkifiers: options.linkifiers };
  const html = md.render(content, env).trimEnd();
  return { html, hasLink: /<a\s/.test(html), hasImage: /<img\s/.test(html), isMeMessage };
}
