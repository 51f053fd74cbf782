import { unicodeEmojiByCode, unicodeEmojiByName, unicodeEmojiNameMatchesCode, zulipEmojiCode } from "../src/lib/emoji.ts";

describe("Unicode emoji", () => {
  test("by name, in Zulip's code form", () => {
    expect(unicodeEmojiByName("grinning")).toEqual({ name: "grinning", code: "1f600" });
    expect(unicodeEmojiByName("us")).toEqual({ name: "us", code: "1f1fa-1f1f8" });
    expect(unicodeEmojiByName("octopus")).toEqual({ name: "octopus", code: "1f419" });
  });

  test("an alias resolves to the canonical name", () => {
    expect(unicodeEmojiByName("thumbsup")).toEqual({ name: "+1", code: "1f44d" });
    expect(unicodeEmojiByName("flag-us")).toEqual({ name: "us", code: "1f1fa-1f1f8" });
  });

  test("the variation selector U+FE0F is not part of a code", () => {
    expect(unicodeEmojiByName("heart")).toEqual({ name: "heart", code: "2764" });
    expect(unicodeEmojiByName("hash")).toEqual({ name: "hash", code: "0023-20e3" });
    expect(zulipEmojiCode("0023-FE0F-20E3")).toBe("0023-20e3");
  });

  test("by code, tolerating upper case and U+FE0F", () => {
    expect(unicodeEmojiByCode("1f600")).toEqual({ name: "grinning", code: "1f600" });
    expect(unicodeEmojiByCode("1F1FA-1F1F8")).toEqual({ name: "us", code: "1f1fa-1f1f8" });
    expect(unicodeEmojiByCode("2764-fe0f")).toEqual({ name: "heart", code: "2764" });
  });

  test("unknown names and codes are null", () => {
    expect(unicodeEmojiByName("no_such_emoji")).toBeNull();
    expect(unicodeEmojiByName("")).toBeNull();
    expect(unicodeEmojiByCode("zzzz")).toBeNull();
    expect(unicodeEmojiByCode("1f600-1f600")).toBeNull();
  });

  test("name/code agreement accepts every alias and nothing else", () => {
    expect(unicodeEmojiNameMatchesCode("+1", "1f44d")).toBe(true);
    expect(unicodeEmojiNameMatchesCode("thumbsup", "1f44d")).toBe(true);
    expect(unicodeEmojiNameMatchesCode("grinning", "1f44d")).toBe(false);
  });
});
