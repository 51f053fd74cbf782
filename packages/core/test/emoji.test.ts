import { readFileSync } from "node:fs";
import { unicodeEmojiByCode, unicodeEmojiByName, unicodeEmojiNameMatchesCode, zulipEmojiCode } from "../src/lib/emoji.ts";
import { CLIENT_EMOJI_NAMES } from "../src/lib/emoji-client-names.ts";

interface DatasourceEntry {
  unified: string;
  short_names: string[];
}
const datasource = JSON.parse(readFileSync(require.resolve("emoji-datasource/emoji.json"), "utf8")) as DatasourceEntry[];

describe("Unicode emoji", () => {
  test("by name, in Zulip's code form", () => {
    expect(unicodeEmojiByName("grinning")).toEqual({ name: "grinning", code: "1f600" });
    expect(unicodeEmojiByName("us")).toEqual({ name: "flag_united_states", code: "1f1fa-1f1f8" });
    expect(unicodeEmojiByName("octopus")).toEqual({ name: "octopus", code: "1f419" });
  });

  test("an alias resolves to the canonical name", () => {
    expect(unicodeEmojiByName("thumbsup")).toEqual({ name: "+1", code: "1f44d" });
    expect(unicodeEmojiByName("flag-us")).toEqual({ name: "flag_united_states", code: "1f1fa-1f1f8" });
  });

  test("the variation selector U+FE0F is not part of a code", () => {
    expect(unicodeEmojiByName("heart")).toEqual({ name: "heart", code: "2764" });
    expect(unicodeEmojiByName("hash")).toEqual({ name: "hash", code: "0023-20e3" });
    expect(zulipEmojiCode("0023-FE0F-20E3")).toBe("0023-20e3");
  });

  test("by code, tolerating upper case and U+FE0F", () => {
    expect(unicodeEmojiByCode("1f600")).toEqual({ name: "grinning", code: "1f600" });
    expect(unicodeEmojiByCode("1F1FA-1F1F8")).toEqual({ name: "flag_united_states", code: "1f1fa-1f1f8" });
    expect(unicodeEmojiByCode("2764-fe0f")).toEqual({ name: "heart", code: "2764" });
  });

  test("unknown names and codes are null", () => {
    expect(unicodeEmojiByName("no_such_emoji")).toBeNull();
    expect(unicodeEmojiByName("")).toBeNull();
    expect(unicodeEmojiByCode("zzzz")).toBeNull();
    expect(unicodeEmojiByCode("1f600-1f600")).toBeNull();
    // Emojibase names regional indicator letters, which are no emoji of their own.
    expect(unicodeEmojiByCode("1f1e6")).toBeNull();
  });

  test("name/code agreement accepts every alias and nothing else", () => {
    expect(unicodeEmojiNameMatchesCode("+1", "1f44d")).toBe(true);
    expect(unicodeEmojiNameMatchesCode("thumbsup", "1f44d")).toBe(true);
    expect(unicodeEmojiNameMatchesCode("thumbs_up", "1f44d")).toBe(true);
    expect(unicodeEmojiNameMatchesCode("grinning", "1f44d")).toBe(false);
    expect(unicodeEmojiNameMatchesCode("smile", "1f604")).toBe(false);
  });
});

describe("Zulip's emoji names", () => {
  test.each(["+1", "thumbs_up", "like", "thumbsup"])("%s is 👍, named +1", (name) => {
    expect(unicodeEmojiByName(name)).toEqual({ name: "+1", code: "1f44d" });
  });

  test.each([
    ["slight_smile", "slight_smile", "1f642"],
    ["smile", "slight_smile", "1f642"], // 🙂 for Zulip clients, 😄 for iamcal
    ["big_smile", "big_smile", "1f604"],
    ["working_on_it", "working_on_it", "1f6e0"],
    ["hammer_and_wrench", "working_on_it", "1f6e0"],
    ["star_struck", "star_struck", "1f929"],
    ["star-struck", "star_struck", "1f929"], // iamcal's spelling, with '-'
    ["tada", "tada", "1f389"],
    ["check", "check", "2705"],
    ["white_check_mark", "check", "2705"],
    ["ok", "ok", "1f44c"],
    ["heart", "heart", "2764"],
    ["octopus", "octopus", "1f419"],
    ["rocket", "rocket", "1f680"],
    ["eyes", "eyes", "1f440"],
    ["thinking", "thinking", "1f914"],
    ["100", "100", "1f4af"],
    ["fire", "fire", "1f525"],
    ["joy", "joy", "1f602"],
    ["clap", "clap", "1f44f"],
    ["pray", "pray", "1f64f"],
    ["thank_you", "pray", "1f64f"],
    ["sunglasses", "sunglasses", "1f60e"], // iamcal's, not CLDR's 🕶
    ["halo", "innocent", "1f607"], // a keyword CLDR and emojilib agree on
  ])("%s is %s (%s)", (name, canonical, code) => {
    expect(unicodeEmojiByName(name)).toEqual({ name: canonical, code });
  });

  test("the canonical name: short names for early emoji, CLDR names for later ones and flags", () => {
    expect(unicodeEmojiByCode("1f44d")?.name).toBe("+1"); // Emoji 0.6
    expect(unicodeEmojiByCode("1f642")?.name).toBe("slight_smile"); // Emoji 1.0
    expect(unicodeEmojiByCode("1f929")?.name).toBe("star_struck"); // Emoji 5.0
    expect(unicodeEmojiByCode("1f970")?.name).toBe("smiling_face_with_hearts"); // Emoji 11.0
    expect(unicodeEmojiByCode("1f1ef-1f1f5")?.name).toBe("flag_japan");
  });

  test("every emoji's canonical name is one of its names", () => {
    for (const entry of datasource) {
      const emoji = unicodeEmojiByCode(entry.unified);
      expect(emoji).not.toBeNull();
      expect(unicodeEmojiByName(emoji!.name)?.code).toBe(emoji!.code);
    }
  });

  test("every iamcal short name is accepted, for its own emoji unless clients mean another", () => {
    const clientCodes = new Map(CLIENT_EMOJI_NAMES.map((entry) => [entry.name, entry.code]));
    for (const entry of datasource) {
      for (const name of entry.short_names) {
        expect([name, unicodeEmojiByName(name)?.code]).toEqual([name, clientCodes.get(name) ?? zulipEmojiCode(entry.unified)]);
      }
    }
  });

  test("the hand-written names are few, distinct, and name emoji that exist", () => {
    expect(CLIENT_EMOJI_NAMES.length).toBeLessThanOrEqual(30);
    expect(new Set(CLIENT_EMOJI_NAMES.map((entry) => entry.name)).size).toBe(CLIENT_EMOJI_NAMES.length);
    for (const { name, code } of CLIENT_EMOJI_NAMES) {
      expect([name, unicodeEmojiByName(name)?.code]).toEqual([name, code]);
    }
  });
});
