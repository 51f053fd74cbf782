// Markdown to HTML in Zulip's conventions. Raw HTML in the source is never passed through, and
// links get safe attributes, so hostile input cannot inject markup.
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  const href = token.attrGet("href") ?? "";
  token.attrSet("title", href);
  return self.renderToken(tokens, idx, options);
};

export const MARKDOWN_VERSION = 1;

export interface RenderedMessage {
  html: string;
  hasLink: boolean;
  hasImage: boolean;
  isMeMessage: boolean;
}

export function renderMarkdown(content: string): RenderedMessage {
  const isMeMessage = /^\/me\s/.test(content) && !content.includes("\n");
  const html = md.render(content).trimEnd();
  return { html, hasLink: /<a\s/.test(html), hasImage: /<img\s/.test(html), isMeMessage };
}
