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
