import { params, parseParams } from "../src/params.ts";

const parse = (raw: string) => parseParams({ body: { description: raw }, query: {} }, { description: params.jsonOrPlainString() }).description;

describe("strings Zulip 3.x read JSON-encoded", () => {
  test("a JSON string literal is decoded, as clients of that era send it", () => {
    expect(parse('"Python edited"')).toBe("Python edited");
    expect(parse('"with \\"quotes\\" and \\u00e9"')).toBe('with "quotes" and é');
  });

  test("anything else is taken as sent, as later clients send it", () => {
    expect(parse("Python edited")).toBe("Python edited");
    expect(parse('"unterminated')).toBe('"unterminated');
    expect(parse("42")).toBe("42");
    expect(parse("null")).toBe("null");
    expect(parse("")).toBe("");
  });
});
