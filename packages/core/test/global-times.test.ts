import { renderMarkdown } from "../src/lib/markdown.ts";

const html = (content: string) => renderMarkdown(content).html;

describe("global times (feature levels 8 and 16)", () => {
  test("an ISO time with an offset is rendered in UTC, its text as written", () => {
    expect(html("Meet at <time:2026-11-29T10:00:00+01:00>.")).toBe('<p>Meet at <time datetime="2026-11-29T09:00:00Z">2026-11-29T10:00:00+01:00</time>.</p>');
  });

  test("a time without a zone is UTC; Z and fractions of seconds as Python writes them", () => {
    expect(html("<time:2017-06-05 22:30>")).toBe('<p><time datetime="2017-06-05T22:30:00Z">2017-06-05 22:30</time></p>');
    expect(html("<time:2017-06-05T22:30:00.5Z>")).toBe('<p><time datetime="2017-06-05T22:30:00.500000Z">2017-06-05T22:30:00.5Z</time></p>');
    expect(html("<time:2017-06-05T22:30:00-0530>")).toBe('<p><time datetime="2017-06-06T04:00:00Z">2017-06-05T22:30:00-0530</time></p>');
  });

  test("a Unix timestamp", () => {
    expect(html("Let's meet at <time:1496701800>.")).toBe('<p>Let\'s meet at <time datetime="2017-06-05T22:30:00Z">1496701800</time>.</p>');
  });

  test("anything else is Zulip's error, escaped", () => {
    expect(html("<time:this is not a date>")).toBe('<p><span class="timestamp-error">Invalid time format: this is not a date</span></p>');
    expect(html("<time:2017-02-30T10:00>")).toBe('<p><span class="timestamp-error">Invalid time format: 2017-02-30T10:00</span></p>');
    expect(html('<time:"><script>alert(1)</script>')).toBe('<p><span class="timestamp-error">Invalid time format: \"</span>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(html("<time:99999999999999999>")).toContain("timestamp-error");
  });

  test("not in code, and an unclosed one is text", () => {
    expect(html("`<time:1496701800>`")).toBe("<p><code>&lt;time:1496701800&gt;</code></p>");
    expect(html("<time:1496701800")).toBe("<p>&lt;time:1496701800</p>");
  });

  test("many unclosed times cost linear time", () => {
    const content = "<time:".repeat(20_000) + "x".repeat(5000);
    const started = Date.now();
    expect(html(content)).not.toContain("<time ");
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
