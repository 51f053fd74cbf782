import { isAfterPosition, STREAM_START } from "../src/types";

describe("isAfterPosition", () => {
  test.each([
    ["10-0", "9-0", true],
    ["9-0", "10-0", false],
    ["5-10", "5-9", true],
    ["5-9", "5-10", false],
    ["1795385706124-0", "1795385706123-7", true],
    ["1795385706123-7", "1795385706123-7", false],
    ["0-1", STREAM_START, true],
    [STREAM_START, STREAM_START, false],
  ])("%s after %s: %s", (position, since, expected) => {
    expect(isAfterPosition(position, since)).toBe(expected);
  });
});
