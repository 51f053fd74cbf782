import type { StreamModel } from "@chat/db";
import { streamEmailAddress } from "../src/lib/stream-format.ts";

describe("a stream's email address", () => {
  const stream = { name: "Design Team!", email_token: "abc123" } as StreamModel;

  test("is the name's letters and digits, the token, and the host without its port", () => {
    expect(streamEmailAddress(stream, "localhost:9991")).toBe("DesignTeam+abc123@localhost");
    expect(streamEmailAddress(stream, "chat.example.com")).toBe("DesignTeam+abc123@chat.example.com");
  });
});
