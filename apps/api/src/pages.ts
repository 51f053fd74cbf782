// The few pages this server renders itself for a browser (password reset): plain HTML built from
// templates whose every interpolated value is escaped, no script at all, and headers that let the
// page load nothing but its own stylesheet (by hash), be framed by no one, and send no Referer
// (its URL carries a secret token).
import { createHash } from "node:crypto";
import type { Response } from "express";

/** HTML text that is already markup; anything else put into `html` is escaped. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

type HtmlValue = SafeHtml | string | number | null | undefined | HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  if (value instanceof SafeHtml) return value.text;
  return escapeHtml(String(value));
}

/** A tagged template: `html\`<p>${name}</p>\`` escapes `name` unless it is SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1];
  });
  return new SafeHtml(out);
}

const STYLE = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f5f5f5;color:#222;margin:0}
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15)}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.5rem;font-size:1rem;border:1px solid #bbb;border-radius:4px}
button{margin-top:1.2rem;padding:.6rem 1.2rem;font-size:1rem;border:0;border-radius:4px;background:#2c6ecb;color:#fff;cursor:pointer}
.error{color:#a00;background:#fdecea;padding:.6rem;border-radius:4px}.muted{color:#666;font-size:.9rem}`;

/** The only thing a page may load: its own inline stylesheet, allowed by hash, not by 'unsafe-inline'. */
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");
export const PAGE_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

export interface Page {
  /** The document's title and heading (plain text). */
  title: string;
  /** The page's content below the heading. */
  body: SafeHtml;
  /**
   * `no-referrer` (the default) for pages whose URL carries a secret; `same-origin` for forms that
   * post to this server, since under `no-referrer` a browser sends `Origin: null`, which the
   * login's Origin check must refuse.
   */
  referrerPolicy?: "no-referrer" | "same-origin";
}

/** Answers with `page` as a whole HTML document with the strict headers. */
export function sendPage(res: Response, status: number, page: Page, headers: Record<string, string> = {}): void {
  const document = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${page.referrerPolicy ?? "no-referrer"}">
<title>${page.title}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<main>
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>
`;
  res.status(status);
  res.set({
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": PAGE_CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": page.referrerPolicy ?? "no-referrer",
    "Cache-Control": "no-store",
    ...headers,
  });
  res.send(document.text);
}
