// The embedded bots this worker runs are exactly the ones POST /bots accepts and /register lists.
import { EMBEDDED_BOTS } from "@chat/core";
import { EMBEDDED_BOT_NAMES, withoutLeadingMention } from "../src/embedded-bots.ts";

describe("embedded bots", () => {
  test("every bot of the registry has a handler, and no handler lacks a registry entry", () => {
    expect([...EMBEDDED_BOT_NAMES].sort()).toEqual(EMBEDDED_BOTS.map((bot) => bot.name).sort());
  });

  test.each([
    ["@**Hello Bot** hi there", "hi there"],
    ["@**Hello Bot|7** by id", "by id"],
    ["@_**Hello Bot** silent", "silent"],
    ["@**Hello Bot**", ""],
    ["hi @**Hello Bot**", null],
    ["@**Other Bot** hi", null],
    ["@**Other Name|7** the id decides", "the id decides"],
    ["@**Hello Bot|8** the name decides", "the name decides"],
    ["@**Someone|8** neither", null],
  ])("a stream message %j reaches the bot as %j (zulip_bots' extract_query_without_mention)", (content, expected) => {
    expect(withoutLeadingMention(content, { id: 7, full_name: "Hello Bot" })).toBe(expected);
  });
});
