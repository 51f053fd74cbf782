// The renderer alone: Zulip's HTML for each syntax element, what it reports for flags, and
// hostile input that must stay text.
import { isSafeLinkUrl, mentionFlagUserIds, renderMarkdown, scanMentionSyntax, type RenderContext } from "../src/lib/markdown.ts";

const CONTEXT: RenderContext = {
  users: [
    { id: 5, full_name: "Alice A", bot_type: null },
    { id: 6, full_name: 'Evil"><script>alert(1)</script>', bot_type: null },
  ],
  groups: [{ id: 3, name: "support", member_ids: [5, 7], service_bot_ids: [] }],
  streams: [
    { id: 2, name: "general" },
    { id: 8, name: "a.b c" },
    { id: 9, name: '"><img src=x onerror=alert(1)>' },
  ],
  customEmoji: [{ id: 4, name: "party_parrot", realm_id: 1, file_name: "4.png" }],
};
const html = (content: string, context: RenderContext = CONTEXT) => renderMarkdown(content, context).html;

describe("renderMarkdown: Markdown in Zulip's HTML", () => {
  test.each([
    ["hello *all*", "<p>hello <em>all</em></p>"],
    ["some **bold** text", "<p>some <strong>bold</strong> text</p>"],
    ["~~gone~~", "<p><del>gone</del></p>"],
    ["`<&nbsp;>`", "<p><code>&lt;&amp;nbsp;&gt;</code></p>"],
    ["it's \"quoted\"", "<p>it's \"quoted\"</p>"],
    ["line one\nline two", "<p>line one<br>\nline two</p>"],
    ["> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>"],
    ["* One\n* Two", "<ul>\n<li>One</li>\n<li>Two</li>\n</ul>"],
    ["1. One\n2. Two", "<ol>\n<li>One</li>\n<li>Two</li>\n</ol>"],
    ["# Hello world", "<h1>Hello world</h1>"],
    ["```python\ndef f(x):   \n    return 'x'\n```", '<div class="codehilite" data-code-language="Python"><pre><span></span><code>def f(x):\n    return &#39;x&#39;\n</code></pre></div>'],
    ["~~~~.python \nx = 1\n~~~~", '<div class="codehilite" data-code-language="Python"><pre><span></span><code>x = 1\n</code></pre></div>'],
    ["``` inventedlanguage\nx\n```", '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>x\n</code></pre></div>'],
    ["```\n<h1>stay normal</h1>\n```", '<div class="codehilite"><pre><span></span><code>&lt;h1&gt;stay normal&lt;/h1&gt;\n</code></pre></div>'],
    ["    def foo(): pass", '<div class="codehilite"><pre><span></span><code>def foo(): pass\n</code></pre></div>'],
    ["~~~ quote\nTo be or **not** to be.\n~~~", "<blockquote>\n<p>To be or <strong>not</strong> to be.</p>\n</blockquote>"],
    ["```spoiler header\ncontent\n```", '<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>'],
    ["Hello [world]\n\n[world]: https://google.com", '<p>Hello [world]</p>\n<p>[world]: <a href="https://google.com" target="_blank" rel="noopener noreferrer" title="https://google.com">https://google.com</a></p>'],
    ["[Zulip](https://zulip.com \"x\")", '<p><a href="https://zulip.com" target="_blank" rel="noopener noreferrer" title="https://zulip.com">Zulip</a></p>'],
    ["see <https://example.com/a?b=1&c=2>", '<p>see <a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer" title="https://example.com/a?b=1&amp;c=2">https://example.com/a?b=1&amp;c=2</a></p>'],
    ["[mail](mailto:a@example.com) [rel](/help/x)", '<p><a href="mailto:a@example.com" target="_blank" rel="noopener noreferrer" title="mailto:a@example.com">mail</a> <a href="/help/x" target="_blank" rel="noopener noreferrer" title="/help/x">rel</a></p>'],
    ["/me is testing", "<p>/me is testing</p>"],
  ])("%j", (content, expected) => {
    expect(html(content)).toBe(expected);
  });

  test("/me messages are flagged only on one line", () => {
    expect(renderMarkdown("/me waves").isMeMessage).toBe(true);
    expect(renderMarkdown("/me waves\nagain").isMeMessage).toBe(false);
    expect(renderMarkdown("/meh").isMeMessage).toBe(false);
  });
});

describe("renderMarkdown: Zulip's syntax", () => {
  test("user mentions by name (any case) and by id, with the user's own name", () => {
    const r = renderMarkdown("@**Alice A** @**alice a** @**Alice A|5** @**|5**", CONTEXT);
    const span = '<span class="user-mention" data-user-id="5">@Alice A</span>';
    expect(r.html).toBe(`<p>${span} ${span} ${span} ${span}</p>`);
    expect(r.mentionedUserIds).toEqual([5]);
  });

  test("a wrong name with an id, an unknown name or id stays text", () => {
    const r = renderMarkdown("@**Bob|5** @**Nobody** @**Alice A|99**", CONTEXT);
    expect(r.html).toBe("<p>@<strong>Bob|5</strong> @<strong>Nobody</strong> @<strong>Alice A|99</strong></p>");
    expect(r.mentionedUserIds).toEqual([]);
  });

  test("a mention needs a space or punctuation before it, and is not parsed in code", () => {
    const r = renderMarkdown("x@**Alice A** `@**Alice A**`", CONTEXT);
    expect(r.html).toBe("<p>x@<strong>Alice A</strong> <code>@**Alice A**</code></p>");
    expect(r.mentionedUserIds).toEqual([]);
    expect(html("(@**Alice A**)")).toBe('<p>(<span class="user-mention" data-user-id="5">@Alice A</span>)</p>');
  });

  test("silent mentions: no @, class silent, not reported", () => {
    const r = renderMarkdown("@_**Alice A** @_**all**", CONTEXT);
    expect(r.html).toBe('<p><span class="user-mention silent" data-user-id="5">Alice A</span> <span class="user-mention silent" data-user-id="*">all</span></p>');
    expect(r).toMatchObject({ mentionedUserIds: [], mentionsWildcard: false });
  });

  test.each(["all", "everyone", "stream"])("wildcard @**%s**", (name) => {
    const r = renderMarkdown(`hi @**${name}**`, CONTEXT);
    expect(r.html).toBe(`<p>hi <span class="user-mention" data-user-id="*">@${name}</span></p>`);
    expect(r.mentionsWildcard).toBe(true);
  });

  test("user group mentions report the group; its members get the flag", () => {
    const r = renderMarkdown("@*Support* and @*nogroup* and @_*support*", CONTEXT);
    expect(r.html).toBe('<p><span class="user-group-mention" data-user-group-id="3">@support</span> and @<em>nogroup</em> and <span class="user-group-mention silent" data-user-group-id="3">support</span></p>');
    expect(r.mentionedGroupIds).toEqual([3]);
    expect(mentionFlagUserIds(r, CONTEXT).sort()).toEqual([5, 7]);
  });

  test("stream and topic links with Zulip's narrow URLs", () => {
    expect(html("#**general** #**General>my topic.x** #**a.b c** #**nowhere**")).toBe(
      '<p><a class="stream" data-stream-id="2" href="/#narrow/stream/2-general">#general</a> ' +
        '<a class="stream-topic" data-stream-id="2" href="/#narrow/stream/2-general/topic/my.20topic.2Ex">#general &gt; my topic.x</a> ' +
        '<a class="stream" data-stream-id="8" href="/#narrow/stream/8-a.2Eb-c">#a.b c</a> #<strong>nowhere</strong></p>',
    );
  });

  test("unicode and custom emoji; unknown names stay text", () => {
    expect(html(":grinning: :party_parrot: :no_such_emoji: :+1:")).toBe(
      '<p><span aria-label="grinning" class="emoji emoji-1f600" role="img" title="grinning">:grinning:</span> ' +
        '<img alt=":party_parrot:" class="emoji" src="/user_avatars/1/emoji/images/4.png" title="party parrot"> :no_such_emoji: ' +
        '<span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span></p>',
    );
    // Without a context (stream descriptions), Unicode emoji still render; mentions do not.
    expect(renderMarkdown(":grinning: @**Alice A**").html).toBe('<p><span aria-label="grinning" class="emoji emoji-1f600" role="img" title="grinning">:grinning:</span> @<strong>Alice A</strong></p>');
  });

  test("Zulip's names and aliases render the emoji with the name as typed, as Zulip's make_emoji", () => {
    const span = (name: string, code: string) => {
      const title = name.replace(/_/g, " ");
      return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${name}:</span>`;
    };
    expect(html(":thumbs_up: :like: :thumbsup: :working_on_it: :smile: :slight_smile: :star-struck: :star_struck:")).toBe(
      `<p>${span("thumbs_up", "1f44d")} ${span("like", "1f44d")} ${span("thumbsup", "1f44d")} ${span("working_on_it", "1f6e0")} ` +
        `${span("smile", "1f642")} ${span("slight_smile", "1f642")} ${span("star-struck", "1f929")} ${span("star_struck", "1f929")}</p>`,
    );
  });

  test("the content scan finds names for the context queries", () => {
    expect(scanMentionSyntax("@**Alice A** @_**Bob|12** @*Team* #**s>t** :a:b: plain")).toEqual({
      names: ["alice a"],
      ids: [12],
      groups: ["team"],
      streams: ["s>t", "s"],
      emoji: ["a", "b"],
    });
  });
});

describe("renderMarkdown: hostile input", () => {
  test.each([
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](javascript&#58;alert(1))",
    "[x](java\tscript:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](\u200bjavascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "<javascript:alert(1)>",
    "![x](javascript:alert(1))",
  ])("no unsafe link: %j", (content) => {
    const out = html(content);
    expect(out).not.toMatch(/<a\b/);
    expect(out).not.toMatch(/<img\b/);
  });

  test("the URL check allows only http, https, mailto and relative URLs", () => {
    for (const url of ["https://a.example", "http://a.example/x:y", "mailto:a@b.c", "/x", "x/y:z", "?q=a:b", "#frag"]) expect(isSafeLinkUrl(url)).toBe(true);
    for (const url of ["javascript:x", "JAVASCRIPT:x", "java\nscript:x", "data:x", "file:///etc/passwd", "ftp://x", "\u0000javascript:x"]) expect(isSafeLinkUrl(url)).toBe(false);
  });

  test("raw HTML is escaped", () => {
    expect(html('<img src=x onerror="alert(1)"><script>alert(1)</script>')).toBe("<p>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>".replace(/&quot;/g, '"'));
  });

  test("names with markup in mentions, streams and topics are escaped", () => {
    const out = html('@**Evil"><script>alert(1)</script>** #**"><img src=x onerror=alert(1)>** #**general>"><svg onload=alert(1)>**');
    expect(out).toBe(
      '<p><span class="user-mention" data-user-id="6">@Evil"&gt;&lt;script&gt;alert(1)&lt;/script&gt;</span> ' +
        '<a class="stream" data-stream-id="9" href="/#narrow/stream/9-.22.3E.3Cimg-src.3Dx-onerror.3Dalert.281.29.3E">#"&gt;&lt;img src=x onerror=alert(1)&gt;</a> ' +
        '<a class="stream-topic" data-stream-id="2" href="/#narrow/stream/2-general/topic/.22.3E.3Csvg.20onload.3Dalert.281.29.3E">#general &gt; "&gt;&lt;svg onload=alert(1)&gt;</a></p>',
    );
    expect(out).not.toMatch(/<(script|img|svg)\b/);
  });

  test("nested Markdown in link text cannot open a second link or escape the attribute", () => {
    const out = html('[**a** [b](https://b.example) `c"`](https://a.example/"onmouseover="x)');
    // The inner link wins (CommonMark); the outer URL is autolinked with its quotes percent-encoded.
    expect(out).toBe(
      '<p>[<strong>a</strong> <a href="https://b.example" target="_blank" rel="noopener noreferrer" title="https://b.example">b</a> <code>c"</code>]' +
        '(<a href="https://a.example/%22onmouseover=%22x" target="_blank" rel="noopener noreferrer" title="https://a.example/%22onmouseover=%22x">https://a.example/"onmouseover="x</a>)</p>',
    );
    expect(out).not.toMatch(/<a[^>]*\sonmouseover=/);
    // '[' is not a mention boundary in Zulip, so a link's text holds no mention.
    expect(html("[@**Alice A**](https://x.example)")).toBe('<p><a href="https://x.example" target="_blank" rel="noopener noreferrer" title="https://x.example">@<strong>Alice A</strong></a></p>');
  });

  test("unicode tricks stay text: right-to-left override, lookalike colon, full-width brackets", () => {
    // A full-width colon is no scheme separator: the URL is a harmless relative path.
    expect(html("[x](javascript\uff1aalert(1))")).toContain('href="javascript%EF%BC%9Aalert(1)"');
    expect(html("[x](javascript\uff1aalert(1))")).not.toMatch(/href="[a-z]+:/i);
    expect(html("\u202e@**Alice A**")).toBe('<p>\u202e@<strong>Alice A</strong></p>');
    expect(html("\uff1cscript\uff1e")).toBe("<p>\uff1cscript\uff1e</p>");
  });

  test("deeply nested quote fences stop nesting and stay escaped", () => {
    const content = Array.from({ length: 20 }, (_, i) => `${"~".repeat(40 - i)} quote`).join("\n") + "\n<b>x</b>";
    const out = html(content);
    expect(out).not.toContain("<b>");
    expect((out.match(/<blockquote>/g) ?? []).length).toBeLessThanOrEqual(9);
  });
});

describe("renderMarkdown: inline previews of uploaded images (Zulip's message_inline_image)", () => {
  const UPLOAD = "/user_uploads/2/ab/AAAAAAAAAAAAAAAAAAAAAAAA";
  const PREVIEWS: RenderContext = { imagePreviews: { realmHost: "chat.example.com" } };
  const preview = (url: string, title?: string) =>
    `<div class="message_inline_image"><a href="${url}"${title === undefined ? "" : ` title="${title}"`}><img src="${url}" alt="${title ?? url.slice(url.lastIndexOf("/") + 1)}"></a></div>`;
  const linkTo = (url: string, text: string) => `<a href="${url}" target="_blank" rel="noopener noreferrer" title="${url}">${text}</a>`;
  const render = (content: string, context: RenderContext = PREVIEWS) => renderMarkdown(content, context);

  test("a link to an uploaded image keeps its paragraph and gets a preview after it", () => {
    const url = `${UPLOAD}/pic.png`;
    const out = render(`[pic.png](${url})`);
    expect(out.html).toBe(`<p>${linkTo(url, "pic.png")}</p>\n${preview(url, "pic.png")}`);
    expect(out.hasImage).toBe(true);
    for (const ext of ["gif", "JPG", "jpeg", "jpe", "webp", "bmp"]) expect(render(`[x](${UPLOAD}/x.${ext})`).html).toContain('class="message_inline_image"');
  });

  test("several images of one paragraph follow it in order, each URL once", () => {
    const [a, b] = [`${UPLOAD}/a.png`, `${UPLOAD}/b.gif`];
    expect(render(`[a](${a}) [b](${b}) [again](${a})\n\nnext`).html).toBe(
      `<p>${linkTo(a, "a")} ${linkTo(b, "b")} ${linkTo(a, "again")}</p>\n${preview(a, "a")}\n${preview(b, "b")}\n<p>next</p>`,
    );
  });

  test("an absolute URL on the realm's host previews; a bare one replaces its paragraph", () => {
    const url = `https://chat.example.com${UPLOAD}/pic.png`;
    expect(render(url).html).toBe(preview(url));
    expect(render(`see ${url}`).html).toBe(`<p>see ${linkTo(url, url)}</p>\n${preview(url)}`);
  });

  test.each([
    ["a non-image upload", `[doc](${UPLOAD}/doc.pdf)`],
    ["an external image", "[x](https://evil.example/x.png)"],
    ["an upload path on another host", `[x](https://evil.example${UPLOAD}/x.png)`],
    ["a protocol-relative URL", `[x](//evil.example${UPLOAD}/x.png)`],
    ["a backslash URL", `[x](/\\evil.example${UPLOAD}/x.png)`],
    ["a path that is not an upload's", "[x](/static/x.png)"],
    ["a malformed path id", "[x](/user_uploads/2/ab/short/x.png)"],
    ["a path escaping the uploads", `[x](${UPLOAD}/../../../../static/x.png)`],
    ["credentials in the URL", `[x](https://u:p@chat.example.com${UPLOAD}/x.png)`],
    ["an image in a quote", `> [x](${UPLOAD}/x.png)`],
    ["an image in a quote fence", "```quote\n[x](" + UPLOAD + "/x.png)\n```"],
    ["an image in a spoiler in a quote", "> ```spoiler s\n> [x](" + UPLOAD + "/x.png)\n> ```"],
    ["an image in inline code", "`" + UPLOAD + "/x.png`"],
  ])("%s gets no preview", (_name, content) => {
    expect(render(content).html).not.toContain("message_inline_image");
    expect(render(content).html).not.toContain("<img");
  });

  test("an image in a spoiler is previewed inside it", () => {
    const url = `${UPLOAD}/x.png`;
    expect(render("```spoiler header\n[x](" + url + ")\n```").html).toContain(`<div class="spoiler-content" aria-hidden="true">\n<p>${linkTo(url, "x")}</p>\n${preview(url, "x")}\n</div>`);
  });

  test("no previews without the message context (descriptions) or with a realm's previews off", () => {
    expect(renderMarkdown(`[x](${UPLOAD}/x.png)`).html).not.toContain("<img");
    expect(renderMarkdown(`[x](https://chat.example.com${UPLOAD}/x.png)`, { imagePreviews: {} }).html).not.toContain("<img");
  });

  test("a message with more distinct links than Zulip's limit (24) gets no previews; at the limit all", () => {
    const links = (n: number) => Array.from({ length: n }, (_, i) => `[${i}](${UPLOAD}/${i}.png)`).join("\n");
    expect((render(links(24)).html.match(/<img /g) ?? []).length).toBe(24);
    expect(render(links(25)).html).not.toContain("<img");
    // Quoted links do not count, as in Zulip.
    expect((render(`${links(24)}\n\n> [q](https://example.com/q)`).html.match(/<img /g) ?? []).length).toBe(24);
    expect(render(`${links(24)}\n\n[q](https://example.com/q)`).html).not.toContain("<img");
  });

  test("hostile link text and file names stay escaped in the preview", () => {
    const out = render(`[a" onerror="alert(1)<script>&amp;](${UPLOAD}/x%22onerror=alert(1)%3E.png)`).html;
    expect(out).toContain(`title="a&quot; onerror=&quot;alert(1)&lt;script&gt;&amp;"`);
    expect(out).not.toMatch(/<script/i);
    // The preview is exactly a div, a link and an image, every attribute one quoted value.
    const previewShape = /<div class="message_inline_image"><a href="[^"<>]*"(?: title="[^"<>]*")?><img src="[^"<>]*" alt="[^"<>]*"><\/a><\/div>/;
    expect(out.split("\n")[1]).toMatch(new RegExp(`^${previewShape.source}$`));
    const quoted = render(`[x](${UPLOAD}/a"b'c<d>.png)`).html;
    expect(quoted).toContain(`<img src="${UPLOAD}/a%22b'c%3Cd%3E.png" alt="x">`);
    // Without link text the alt is the file name, escaped.
    expect(render(`[](${UPLOAD}/a%22b%3Cc%3E.png)`).html).toContain(`alt="a&quot;b&lt;c&gt;.png"`);
    for (const [, attribute] of quoted.matchAll(/(?:src|href|title)="([^"]*)"/g)) expect(attribute).not.toMatch(/[<>]/);
  });
});
