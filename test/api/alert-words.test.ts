import { createMember as createSharedMember } from "../support/users.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("alert words (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;
  let other: ApiClient;

  const createMember = (email: string, fullName: string) => createSharedMember(server, email, fullName);

  beforeAll(async () => {
    server = await startTestServer(mode);
    ({ client: member } = await createMember("alert@example.com", "Al Alert"));
    ({ client: other } = await createMember("quiet@example.com", "Quinn Quiet"));
  });
  afterAll(() => server.stop());

  test("starts empty", async () => {
    expect((await member.get("/users/me/alert_words")).body).toEqual({ result: "success", msg: "", alert_words: [] });
  });

  test("adding returns the full list and sends it to the user only", async () => {
    const queue = (await member.post("/register", { event_types: ["alert_words"] })).body.queue_id;
    const otherQueue = (await other.post("/register", { event_types: ["alert_words"] })).body.queue_id;
    const res = await member.post("/users/me/alert_words", { alert_words: ["deploy", "  Outage ", ""] });
    expect(res.body).toEqual({ result: "success", msg: "", alert_words: ["deploy", "Outage"] });
    const event = await waitForEvent(member, queue, (e) => e.type === "alert_words");
    expect(event).toEqual({ id: expect.any(Number), type: "alert_words", alert_words: ["deploy", "Outage"] });
    await new Promise((r) => setTimeout(r, 150));
    expect(await drainEvents(other, otherQueue)).toEqual([]);
    expect((await other.get("/users/me/alert_words")).body.alert_words).toEqual([]);
  });

  test("a word already there in another case is not added twice", async () => {
    const res = await member.post("/users/me/alert_words", { alert_words: ["DEPLOY", "release", "Release"] });
    expect(res.body.alert_words).toEqual(["deploy", "Outage", "Release"]);
  });

  test("removing ignores case and unknown words, and returns the full list", async () => {
    const queue = (await member.post("/register", { event_types: ["alert_words"] })).body.queue_id;
    const res = await member.delete("/users/me/alert_words", { alert_words: ["outage", "never-added"] });
    expect(res.body).toEqual({ result: "success", msg: "", alert_words: ["deploy", "Release"] });
    expect(await waitForEvent(member, queue, (e) => e.type === "alert_words")).toMatchObject({ alert_words: ["deploy", "Release"] });
    expect((await member.get("/users/me/alert_words")).body.alert_words).toEqual(["deploy", "Release"]);
  });

  test.each([
    ["post", {}, "Missing 'alert_words' argument"],
    ["post", { alert_words: "deploy" }, 'Argument "alert_words" is not valid JSON.'],
    ["post", { alert_words: [1] }, "alert_words[0] is not a string"],
    ["post", { alert_words: { word: "x" } }, "alert_words is not a list"],
    ["post", { alert_words: ["x".repeat(101)] }, "alert_words[0] is too long (limit: 100 characters)"],
    ["delete", {}, "Missing 'alert_words' argument"],
    ["delete", { alert_words: [null] }, "alert_words[0] is not a string"],
  ] as const)("%s %j is refused and changes nothing", async (method, params, msg) => {
    const before = (await member.get("/users/me/alert_words")).body.alert_words;
    const res = await member[method]("/users/me/alert_words", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect((await member.get("/users/me/alert_words")).body.alert_words).toEqual(before);
  });

  test("verifyAction: add and remove", async () => {
    const added = await verifyAction(member, ["alert_words"], () => member.post("/users/me/alert_words", { alert_words: ["incident", "Deploy"] }));
    expect(added).toEqual([{ id: expect.any(Number), type: "alert_words", alert_words: ["deploy", "Release", "incident"] }]);
    const removed = await verifyAction(member, ["alert_words"], () => member.delete("/users/me/alert_words", { alert_words: ["INCIDENT"] }));
    expect(removed).toEqual([{ id: expect.any(Number), type: "alert_words", alert_words: ["deploy", "Release"] }]);
    expect((await member.post("/register", { event_types: ["alert_words"] })).body.alert_words).toEqual(["deploy", "Release"]);
  });
});
