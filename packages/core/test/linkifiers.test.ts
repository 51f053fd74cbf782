import { checkLinkifier, linkifierMatches, topicLinks, type Linkifier } from "../src/lib/linkifiers.ts";

const ISSUES: Linkifier = { id: 1, pattern: "#(?P<id>[0-9]+)", url_format_string: "https://github.com/zulip/zulip/issues/%(id)s" };
const TICKETS: Linkifier = { id: 2, pattern: "(?P<project>[A-Z]+)-(?P<num>\\d+)", url_format_string: "https://jira.example.com/browse/%(project)s-%(num)s" };
const WORDS: Linkifier = { id: 3, pattern: "wiki:(?P<page>[^\\s]+)", url_format_string: "https://wiki.example.com/%(page)s" };

describe("topicLinks", () => {
  test("links every match in text order, with the text it matched", () => {
    expect(topicLinks("fix #123 and ZUL-7, see #9", [ISSUES, TICKETS])).toEqual([
      { text: "#123", url: "https://github.com/zulip/zulip/issues/123" },
      { text: "ZUL-7", url: "https://jira.example.com/browse/ZUL-7" },
      { text: "#9", url: "https://github.com/zulip/zulip/issues/9" },
    ]);
  });

  test("matches only at word boundaries, as Zulip's prepare_realm_pattern", () => {
    expect(topicLinks("abc#123 #45x (#6)", [ISSUES])).toEqual([{ text: "#6", url: "https://github.com/zulip/zulip/issues/6" }]);
  });

  test("no linkifiers, no links; %% is a literal percent", () => {
    expect(topicLinks("#1", [])).toEqual([]);
    expect(topicLinks("#5", [{ id: 4, pattern: "#(?P<n>\\d)", url_format_string: "https://x.example/%%20/%(n)s" }])).toEqual([
      { text: "#5", url: "https://x.example/%20/5" },
    ]);
  });

  test("overlapping matches: the first one wins", () => {
    const overlap: Linkifier = { id: 5, pattern: "#(?P<id>[0-9]{2})", url_format_string: "https://other.example/%(id)s" };
    expect(linkifierMatches("#12", [ISSUES, overlap]).map((l) => l.url)).toEqual(["https://github.com/zulip/zulip/issues/12"]);
  });

  test("matched text cannot inject markup or change the URL's scheme", () => {
    const links = topicLinks('wiki:"><script>alert(1)</script> wiki:javascript:alert(1)', [WORDS]);
    for (const link of links) {
      expect(link.url.startsWith("https://wiki.example.com/")).toBe(true);
      expect(link.url).not.toMatch(/[<>"' ]/);
    }
    expect(links[0].url).toBe("https://wiki.example.com/%22%3E%3Cscript%3Ealert(1)%3C/script%3E");
  });

  test("a stored pattern that is not safe links nothing instead of hanging", () => {
    const evil: Linkifier = { id: 6, pattern: "(?P<x>(a+)+)$", url_format_string: "https://x.example/%(x)s" };
    const started = Date.now();
    expect(topicLinks(`${"a".repeat(40)}!`, [evil])).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test("hostile but safe patterns stay fast on long input", () => {
    const started = Date.now();
    topicLinks(`${"#1".repeat(5000)} ${"ZUL-".repeat(5000)}`, [ISSUES, TICKETS, WORDS]);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe("checkLinkifier", () => {
  test("accepts Zulip's documented example", () => {
    expect(() => checkLinkifier(ISSUES.pattern, ISSUES.url_format_string)).not.toThrow();
    expect(() => checkLinkifier(TICKETS.pattern, TICKETS.url_format_string)).not.toThrow();
  });

  test.each([
    ["#(?P<id>[0-9]+", "https://x.example/%(id)s", /^Bad regular expression: /],
    ["(?P<id>(a+)+)", "https://x.example/%(id)s", /^Bad regular expression: .*backtrack/],
    ["(?P<id>(\\w+\\s?)*)$", "https://x.example/%(id)s", /^Bad regular expression: .*backtrack/],
    ["", "https://x.example/", /^Bad regular expression: /],
    ["#(?P<id>\\d+)", "javascript:alert(%(id)s)", /^Invalid URL format string\.$/],
    ["#(?P<id>\\d+)", "https://x.example/<b>%(id)s", /^Invalid URL format string\.$/],
    ["#(?P<id>\\d+)", "not a url %(id)s", /^Invalid URL format string\.$/],
    ["#(?P<id>\\d+)", "https://x.example/%(id)", /^Invalid URL format string\.$/],
    ["#(?P<id>\\d+)", "https://x.example/%(hello)s", /^Group 'hello' in URL format string is not present in linkifier pattern\.$/],
    ["#(?P<id>\\d+)-(?P<hello>\\d+)", "https://x.example/%(hello)s", /^Group 'id' in linkifier pattern is not present in URL format string\.$/],
  ])("refuses %s → %s", (pattern, url, msg) => {
    expect(() => checkLinkifier(pattern, url)).toThrow(msg);
  });
});
