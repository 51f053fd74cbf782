import { expandUrlTemplate, isValidUrlTemplate, urlTemplateVariables } from "../src/lib/url-templates.ts";
import { averageWeeklyTraffic } from "../src/actions/stream-traffic.ts";

describe("RFC 6570 URL templates", () => {
  test.each([
    ["https://x.example/{id}", true],
    ["https://x.example/{+path}{?q,lang}{#frag}", true],
    ["https://x.example/{a.b}{var:3}{list*}", true],
    ["https://x.example/%20{id}", true],
    ["https://x.example/{id", false],
    ["https://x.example/{}", false],
    ["https://x.example/{=id}", false],
    ["https://x.example/ {id}", false],
    ["https://x.example/%zz", false],
    ["https://x.example/{var:0}", false],
  ])("%s valid: %s", (template, valid) => {
    expect(isValidUrlTemplate(template)).toBe(valid);
  });

  test("variables, each once", () => {
    expect(urlTemplateVariables("https://x.example/{a}/{+b}{?a,c}")).toEqual(["a", "b", "c"]);
  });

  test("expansion as RFC 6570's examples", () => {
    const values = { var: "value", hello: "Hello World!", path: "/foo/bar", x: "1024", y: "768", empty: "" };
    expect(expandUrlTemplate("{var}", values)).toBe("value");
    expect(expandUrlTemplate("{hello}", values)).toBe("Hello%20World%21");
    expect(expandUrlTemplate("{+hello}", values)).toBe("Hello%20World!");
    expect(expandUrlTemplate("{+path}/here", values)).toBe("/foo/bar/here");
    expect(expandUrlTemplate("{#path}", values)).toBe("#/foo/bar");
    expect(expandUrlTemplate("{.var}", values)).toBe(".value");
    expect(expandUrlTemplate("{/var,x}/here", values)).toBe("/value/1024/here");
    expect(expandUrlTemplate("{;x,y,empty}", values)).toBe(";x=1024;y=768;empty");
    expect(expandUrlTemplate("{?x,y,empty}", values)).toBe("?x=1024&y=768&empty=");
    expect(expandUrlTemplate("?fixed=yes{&x}", values)).toBe("?fixed=yes&x=1024");
    expect(expandUrlTemplate("{var:3}", values)).toBe("val");
    expect(expandUrlTemplate("{?undef}", values)).toBe("");
  });
});

describe("stream weekly traffic (Zulip's get_average_weekly_stream_traffic)", () => {
  const now = new Date("2026-06-01T00:00:00Z");
  const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
  test.each([
    [3, 50, null],
    [10, 0, 0],
    [14, 10, 5],
    [40, 10, 2],
    [40, 1, 1],
    [40, 4000, 1000],
    [40, 4100, 1000],
    [40, 4300, 1100],
  ])("%i days old, %i messages: %p", (age, messages, expected) => {
    expect(averageWeeklyTraffic(daysAgo(age), messages, now)).toBe(expected);
  });
});
